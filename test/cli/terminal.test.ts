import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { TranscriptRenderer } from "../../src/cli/renderer.ts"
import { Terminal } from "../../src/cli/terminal.ts"
import { safeForTerminal, safeLine } from "../../src/cli/terminal-text.ts"

/** Every character the CLI must never print raw: C0 (newline allowed where noted), DEL, C1 and the bidi controls. */
const FORBIDDEN = /[\u0000-\u0008\u000a-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/u
const BIDI = ["\u202a", "\u202b", "\u202c", "\u202d", "\u202e", "\u2066", "\u2067", "\u2068", "\u2069", "\u200e", "\u200f", "\u061c"]

/** Any code point, with controls, bidi characters, ESC sequences and lone surrogates made frequent. */
const hostileUnit = fc.oneof(
  fc.string({ unit: "binary", minLength: 1, maxLength: 1 }),
  fc.integer({ min: 0, max: 0x9f }).map((code) => String.fromCharCode(code)),
  fc.constantFrom(...BIDI, "\u001b[2J", "\u001b]52;c;aGk=\u0007", "\u009b31m", "\r\n", "\n", "\t", "\u001bc"),
  fc.integer({ min: 0xd800, max: 0xdfff }).map((code) => String.fromCharCode(code))
)
const hostile = fc.string({ unit: hostileUnit, maxLength: 40 })

/** What a Terminal wrote, with its own colour codes (and only those) taken out. */
const capture = (colour: boolean) => {
  let written = ""
  return { terminal: new Terminal({ write: (text) => (written += text) }, colour), printed: () => written.replace(/\u001b\[\d+m/g, "") }
}

const tones = fc.constantFrom("plain", "dim", "tool", "warn", "error") as fc.Arbitrary<"plain" | "dim" | "tool" | "warn" | "error">

describe("text made safe for the terminal", () => {
  it("shows control, ESC-sequence and bidi characters as visible escapes, keeping newline and tab", () => {
    expect(safeForTerminal("ok\u001b]0;owned\u0007 \u001b[2J\tend\n")).toBe("ok\\u001b]0;owned\\u0007 \\u001b[2J\tend\n")
    expect(safeForTerminal("a\u202eevil\u202c b\u2066c\u2069\u200f\u061c")).toBe("a\\u202eevil\\u202c b\\u2066c\\u2069\\u200f\\u061c")
    expect(safeForTerminal("\u009b2J\u0085\u007f\r")).toBe("\\u009b2J\\u0085\\u007f\\u000d")
    expect(safeLine("one\r\ntwo\nthree\rfour")).toBe("one\\ntwo\\nthree\\u000dfour")
    expect(safeForTerminal("plain text, émojis 🎉 and 中文 stay")).toBe("plain text, émojis 🎉 and 中文 stay")
  })

  it("for any string, the printed form contains no control or bidi character (newline aside where multi-line)", () => {
    fc.assert(
      fc.property(hostile, (text) => {
        expect(safeForTerminal(text).replace(/\n/g, "")).not.toMatch(FORBIDDEN)
        expect(safeLine(text)).not.toMatch(FORBIDDEN)
      }),
      { numRuns: 2000 }
    )
  })

  it("for any string and tone, a Terminal writes no control character but its own colour codes", () => {
    fc.assert(
      fc.property(hostile, tones, fc.boolean(), (text, tone, colour) => {
        const multi = capture(colour)
        multi.terminal.write(text, tone)
        multi.terminal.message(text, tone)
        expect(multi.printed().replace(/\n/g, "")).not.toMatch(FORBIDDEN)
        const single = capture(colour)
        single.terminal.line(text, tone)
        expect(single.printed()).toMatch(/^[^\n]*\n$/)
        expect(single.printed().slice(0, -1)).not.toMatch(FORBIDDEN)
      }),
      { numRuns: 1000 }
    )
  })

  it("colours only on a terminal without NO_COLOR, and never writes ESC otherwise", () => {
    const write = () => undefined
    expect(Terminal.for({ write, isTTY: true }, {}).colour).toBe(true)
    expect(Terminal.for({ write, isTTY: true }, { NO_COLOR: "1" }).colour).toBe(false)
    expect(Terminal.for({ write, isTTY: false }, {}).colour).toBe(false)
    let written = ""
    new Terminal({ write: (text) => (written += text) }, false).write("\u001b[31mred", "error")
    expect(written).toBe("\\u001b[31mred")
  })
})

describe("the terminal transcript", () => {
  it("shows control characters from the model or a file as visible escapes, never raw", () => {
    const { terminal, printed } = capture(false)
    const renderer = new TranscriptRenderer(terminal)
    renderer.subscriber.onBlockDelta?.({ type: "block_delta", turn: 1, index: 0, delta: { kind: "text", text: "hi\u001b[31m" } })
    renderer.subscriber.onToolResult?.({
      type: "tool_result",
      outcome: { callId: "c", name: "read_file", status: "ok", output: "line\u001b[1A\u0008\nnext", isError: false }
    })
    expect(printed()).toBe("hi\\u001b[31m\n← read_file ok: line\\u001b[1A\\u0008\\nnext\n")
  })

  it("joins a character split across two deltas instead of printing two replacement characters", () => {
    const { terminal, printed } = capture(false)
    const renderer = new TranscriptRenderer(terminal)
    for (const text of ["a\ud83c", "\udf89b", "\ud83c"]) renderer.subscriber.onBlockDelta?.({ type: "block_delta", turn: 1, index: 0, delta: { kind: "text", text } })
    renderer.newline()
    expect(printed()).toBe("a🎉b\ud83c\n")
  })

  it("for any model text, tool call, result and warning, prints nothing raw and keeps each line whole", () => {
    fc.assert(
      fc.property(hostile, hostile, hostile, hostile, hostile, fc.boolean(), (text, name, args, output, warning, colour) => {
        const { terminal, printed } = capture(colour)
        const renderer = new TranscriptRenderer(terminal)
        const subscriber = renderer.subscriber
        subscriber.onBlockDelta?.({ type: "block_delta", turn: 1, index: 0, delta: { kind: "text", text } })
        subscriber.onBlockDelta?.({ type: "block_delta", turn: 1, index: 1, delta: { kind: "thinking", text } })
        subscriber.onToolCallCompleted?.({ type: "tool_call_completed", turn: 1, index: 2, call: { type: "function_call", callId: "c", name, arguments: args } })
        subscriber.onToolResult?.({ type: "tool_result", outcome: { callId: "c", name, status: "ok", output, isError: true } })
        subscriber.onWarning?.({ type: "warning", message: warning })
        renderer.newline()
        const lines = printed().split("\n")
        expect(lines.join("")).not.toMatch(FORBIDDEN)
        // The three one-line texts are each on a line of their own, last, whatever newlines they held.
        expect(lines.slice(-4).map((line) => line.slice(0, 2))).toEqual(["→ ", "← ", "! ", ""])
      }),
      { numRuns: 500 }
    )
  })
})
