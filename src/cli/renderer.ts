import type { Subscriber } from "../worker/subscriber.ts"

export interface Output {
  write(text: string): unknown
}

/** ANSI styling, or none: colours only when writing to a terminal and NO_COLOR is unset (no-color.org). */
export interface Style {
  readonly dim: (text: string) => string
  readonly tool: (text: string) => string
  readonly warn: (text: string) => string
  readonly error: (text: string) => string
}

const sgr = (code: number) => (text: string) => `\u001b[${code}m${text}\u001b[0m`
const plain = (text: string) => text

export const styleFor = (stream: { readonly isTTY?: boolean }, env: Readonly<Record<string, string | undefined>> = process.env): Style =>
  stream.isTTY === true && (env.NO_COLOR ?? "") === ""
    ? { dim: sgr(2), tool: sgr(36), warn: sgr(33), error: sgr(31) }
    : { dim: plain, tool: plain, warn: plain, error: plain }

/** Tool results can be whole files; the transcript shows their start, the model still gets all of it. */
const MAX_SHOWN_RESULT = 600

const clip = (text: string): string =>
  text.length <= MAX_SHOWN_RESULT ? text : `${text.slice(0, MAX_SHOWN_RESULT)}… (${text.length - MAX_SHOWN_RESULT} more characters)`

const oneLine = (text: string): string => text.replace(/\r?\n/g, "\\n")

/**
 * Model text, tool arguments and file contents are untrusted: control characters (ESC, CSI/OSC introducers,
 * BEL, backspace…) could rewrite the terminal, so everything but newline and tab is shown as a visible escape.
 */
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g
export const safeForTerminal = (text: string): string =>
  text.replace(CONTROL, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`)

/**
 * Renders a worker's events as a terminal transcript: answer text as it streams, thinking dimmed, and each tool
 * call with its arguments and then its result on lines of their own.
 */
export class TranscriptRenderer {
  #atLineStart = true

  constructor(
    private readonly out: Output,
    private readonly style: Style
  ) {}

  readonly subscriber: Subscriber = {
    onBlockDelta: ({ delta }) => {
      if (delta.kind === "text") this.#write(safeForTerminal(delta.text))
      else if (delta.kind === "thinking") this.#write(this.style.dim(safeForTerminal(delta.text)), delta.text)
    },
    onBlockStop: () => this.newline(),
    onToolCallCompleted: ({ call }) =>
      this.line(this.style.tool(safeForTerminal(`→ ${call.name} ${call.arguments === "" ? "{}" : call.arguments}`))),
    onToolResult: ({ outcome }) => {
      const text = safeForTerminal(`← ${outcome.name} ${outcome.status}: ${oneLine(clip(outcome.output))}`)
      this.line(outcome.isError ? this.style.error(text) : this.style.dim(text))
    },
    onWarning: ({ message }) => this.line(this.style.warn(safeForTerminal(`! ${message}`)))
  }

  /** Ends the current line if text is still open on it. */
  newline(): void {
    if (!this.#atLineStart) this.#write("\n")
  }

  /** Writes `text` on a line of its own. */
  line(text: string): void {
    this.newline()
    this.#write(`${text}\n`)
  }

  #write(styled: string, raw: string = styled): void {
    if (raw === "") return
    this.out.write(styled)
    this.#atLineStart = raw.endsWith("\n")
  }
}
