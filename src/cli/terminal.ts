import { redactForDisplay } from "./process-secrets.ts"
import { safeForTerminal, safeLine } from "./terminal-text.ts"

export interface Output {
  write(text: string): unknown
}

/** How a piece of text is shown; the colours are this module's own, applied after the text was made safe. */
export type Tone = "plain" | "dim" | "tool" | "warn" | "error"

const SGR: Readonly<Record<Tone, number | undefined>> = { plain: undefined, dim: 2, tool: 36, warn: 33, error: 31 }

/**
 * The one way the CLI writes to a stream. Every text is treated as untrusted and passed through `safeForTerminal`
 * before it is coloured, so the only control sequences that ever reach the terminal are the SGR colour codes added
 * here. Callers never build escape sequences themselves.
 */
export class Terminal {
  constructor(
    private readonly out: Output,
    /** ANSI colours, or none (see `Terminal.for`). */
    readonly colour: boolean
  ) {}

  /** Colours only when writing to a terminal and NO_COLOR is unset (no-color.org). */
  static for(stream: Output & { readonly isTTY?: boolean }, env: Readonly<Record<string, string | undefined>> = process.env): Terminal {
    return new Terminal(stream, stream.isTTY === true && (env.NO_COLOR ?? "") === "")
  }

  /** A fragment of streamed text (model output arrives in pieces): made safe, then coloured. */
  write(text: string, tone: Tone = "plain"): void {
    if (text === "") return
    const safe = safeForTerminal(text)
    const code = SGR[tone]
    this.out.write(this.colour && code !== undefined ? `\u001b[${code}m${safe}\u001b[0m` : safe)
  }

  /**
   * A complete text (a status line, an error, a tool call and its result): as `write`, with every credential of
   * the environment (`OPENAI_API_KEY`…, in any spelling) and every URL's credentials hidden first. Streamed
   * fragments cannot be redacted reliably (a secret may be split across them), so only whole texts are;
   * credentials the CLI holds never enter the model's stream.
   */
  message(text: string, tone: Tone = "plain"): void {
    this.write(redactForDisplay(text), tone)
  }

  /** A complete text kept on one line (newlines in it shown as `\n`), then a newline. Redacted as by `message`. */
  line(text: string, tone: Tone = "plain"): void {
    // Redacted before newlines become `\n`, so that a URL ends where its line really ended.
    this.write(safeLine(redactForDisplay(text)), tone)
    this.write("\n")
  }
}
