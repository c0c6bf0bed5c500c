import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { createSseParser, parseSseText } from "../../src/llm/sse.ts"
import { cutText } from "../support/cut.ts"

const feedAll = (chunks: ReadonlyArray<string>, max?: number) => {
  const parser = createSseParser(max)
  return chunks.flatMap((chunk) => [...parser.feed(chunk)])
}

describe("createSseParser", () => {
  it("parses events, names, multi-line data, ids and every line ending; ignores comments, retry and unknown fields", () => {
    const text = [
      ": keep-alive",
      "",
      "event: message_start",
      "data: {\"a\":1}",
      "",
      "data: line one\r\ndata: line two\r",
      "\r",
      "id: 7\nretry: 1000\nfoo: bar\ndata:no space\n\n",
      "event:\ndata: after\n\n",
      "data: trailing without blank line"
    ].join("\n")
    expect(parseSseText(text)).toEqual([
      { event: "message_start", data: '{"a":1}' },
      { event: "message", data: "line one\nline two" },
      { event: "message", data: "no space", id: "7" },
      { event: "message", data: "after", id: "7" }
    ])
  })

  it("strips a leading byte order mark, once", () => {
    expect(parseSseText("\uFEFFdata: x\n\n")).toEqual([{ event: "message", data: "x" }])
    // Later in the stream it is an ordinary character: the field is "\uFEFFdata", unknown, so ignored.
    expect(feedAll(["data: a\n\n", "\uFEFFdata: b\n\n"])).toEqual([{ event: "message", data: "a" }])
  })

  it("gives the same messages however the text is cut into reads (property)", () => {
    const line = fc.oneof(
      fc.string({ maxLength: 12 }).map((s) => `data: ${s.replace(/[\r\n]/g, "")}`),
      fc.constantFrom("", ": ping", "event: delta", "id: 3", "retry: 5", "event:")
    )
    const eol = fc.constantFrom("\n", "\r\n", "\r")
    const doc = fc.array(fc.tuple(line, eol), { maxLength: 40 }).map((lines) => lines.map(([l, e]) => l + e).join(""))
    fc.assert(
      fc.property(doc, fc.array(fc.nat(), { maxLength: 10 }), (text, cuts) => {
        expect(feedAll(cutText(text, cuts))).toEqual(parseSseText(text))
      }),
      { numRuns: 300 }
    )
  })

  it("refuses a runaway event and a line that never ends with LlmLimitExceeded, and stays refused", () => {
    const parser = createSseParser(1000)
    expect(() => {
      for (let i = 0; i < 20; i++) parser.feed(`data: ${"x".repeat(100)}\n`)
    }).toThrow(expect.objectContaining({ _tag: "LlmLimitExceeded", limit: "maxEventChars", seen: 1001 }))
    expect(() => parser.feed("\n")).toThrow(expect.objectContaining({ _tag: "LlmLimitExceeded" }))
    const endless = createSseParser(1000)
    expect(() => {
      for (let i = 0; i < 20; i++) endless.feed("y".repeat(100))
    }).toThrow(expect.objectContaining({ _tag: "LlmLimitExceeded" }))
  })

  it("answers keep-alives with nothing and every small event once, under the bound however many arrive", () => {
    const parser = createSseParser(1000)
    let pings = 0
    for (let i = 0; i < 10_000; i++) pings += parser.feed(": ping\n\n").length
    expect(pings).toBe(0)
    let count = 0
    for (let i = 0; i < 10_000; i++) count += parser.feed("data: {}\n\n").length
    expect(count).toBe(10_000)
  })
})
