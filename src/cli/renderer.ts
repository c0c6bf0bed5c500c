import type { Subscriber } from "../worker/subscriber.ts"
import { clip as clipTo } from "../schema/quote.ts"
import type { Terminal, Tone } from "./terminal.ts"

/**
 * Tool results can be whole files and arguments megabytes; the transcript shows their start, the model and the
 * tool still get all of it.
 */
const MAX_SHOWN_RESULT = 600

const clip = (text: string): string => clipTo(text, MAX_SHOWN_RESULT)

/**
 * Renders a worker's events as a terminal transcript: answer text as it streams, thinking dimmed, and each tool
 * call with its arguments and then its result on lines of their own. Model text, tool arguments, results and
 * warnings are all untrusted; the `Terminal` makes every one of them safe to print.
 */
export class TranscriptRenderer {
  #atLineStart = true
  #heldSurrogate = ""

  constructor(private readonly terminal: Terminal) {}

  readonly subscriber: Subscriber = {
    onBlockDelta: ({ delta }) => {
      if (delta.kind === "text") this.#stream(delta.text, "plain")
      else if (delta.kind === "thinking") this.#stream(delta.text, "dim")
    },
    onBlockStop: () => this.newline(),
    // `line` keeps each on one line: names, arguments and results all come from the model or a tool.
    onToolCallCompleted: ({ call }) => this.line(`→ ${call.name} ${call.arguments === "" ? "{}" : clip(call.arguments)}`, "tool"),
    onToolResult: ({ outcome }) => this.line(`← ${outcome.name} ${outcome.status}: ${clip(outcome.output)}`, outcome.isError ? "error" : "dim"),
    onWarning: ({ message }) => this.line(`! ${message}`, "warn")
  }

  /** Ends the current line if text is still open on it. */
  newline(): void {
    if (!this.#atLineStart || this.#heldSurrogate !== "") this.#stream("\n", "plain")
  }

  /** Writes one complete text on a line of its own (kept on one line, URLs in it redacted: see `Terminal.line`). */
  line(text: string, tone: Tone = "plain"): void {
    this.newline()
    this.terminal.line(text, tone)
    this.#atLineStart = true
  }

  #stream(fragment: string, tone: Tone): void {
    // A character outside the BMP may be split across two deltas; written alone, each half would print as U+FFFD.
    const joined = this.#heldSurrogate + fragment
    const last = joined.charCodeAt(joined.length - 1)
    const holdBack = last >= 0xd800 && last <= 0xdbff
    this.#heldSurrogate = holdBack ? joined.slice(-1) : ""
    const text = holdBack ? joined.slice(0, -1) : joined
    if (text === "") return
    this.terminal.write(text, tone)
    // Newlines survive `safeForTerminal` unchanged, so the raw text says where the cursor is.
    this.#atLineStart = text.endsWith("\n")
  }
}
