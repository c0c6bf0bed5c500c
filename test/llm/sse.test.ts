import { createParser } from "eventsource-parser"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import type { SseMessage } from "../../src/llm/scheme.ts"
import { createSseParser, parseSseText } from "../../src/llm/sse.ts"
import { cutText } from "../support/cut.ts"

/**
 * The reference: the parser this one replaced (decision 0088), `eventsource-parser` behind the wrapper decision
 * 0070 described — an unnamed event is `message`, `id` is the last id of an event that became a message, a leading
 * BOM is stripped once.
 */
const referenceMessages = (text: string): ReadonlyArray<SseMessage> => {
  const messages: Array<SseMessage> = []
  let lastEventId: string | undefined
  const parser = createParser({
    onEvent: (event) => {
      if (event.id !== undefined) lastEventId = event.id
      const name = event.event ?? "message"
      messages.push(lastEventId === undefined ? { event: name, data: event.data } : { event: name, data: event.data, id: lastEventId })
    }
  })
  parser.feed(text.startsWith("\uFEFF") ? text.slice(1) : text)
  return messages
}

/** Every kind of line a provider, a proxy or a hostile server may send, each without its line end. */
const anyLine = fc.oneof(
  { weight: 4, arbitrary: fc.string({ maxLength: 12 }).map((s) => `data: ${s.replace(/[\r\n]/g, "")}`) },
  { weight: 2, arbitrary: fc.string({ maxLength: 8 }).map((s) => `data:${s.replace(/[\r\n]/g, "")}`) },
  { weight: 3, arbitrary: fc.constant("") },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      ": ping",
      ":",
      "event: delta",
      "event: content_block_delta",
      "event:",
      "event: ",
      "event",
      "event:x",
      "data",
      "data: ",
      "data:  two spaces",
      "data: a: b",
      "id: 3",
      "id:4",
      "id",
      "id: ",
      "id: a\u0000b",
      "retry: 5",
      "retry: x",
      "foo: bar",
      "foo",
      "Data: case",
      " data: leading space",
      "\uFEFFdata: bom inside"
    )
  }
)
const anyEol = fc.constantFrom("\n", "\r\n", "\r")
/** A document of those lines with any line ends, optionally after a BOM; it ends with a line the reference reads whole. */
const anyDocument = fc
  .tuple(fc.boolean(), fc.array(fc.tuple(anyLine, anyEol), { maxLength: 40 }))
  .map(([bom, lines]) => `${bom ? "\uFEFF" : ""}${lines.map(([line, eol]) => line + eol).join("")}: end\n`)

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

  it("gives the messages of the parser it replaced, whole or cut into any reads (property)", () => {
    fc.assert(
      fc.property(anyDocument, fc.array(fc.nat(), { maxLength: 12 }), (text, cuts) => {
        const expected = referenceMessages(text)
        expect(parseSseText(text)).toEqual(expected)
        expect(feedAll(cutText(text, cuts))).toEqual(expected)
      }),
      { numRuns: 1000 }
    )
  })

  it("joins a data line cut into any number of pieces without a line end as the reference reads it whole (property)", () => {
    // Data lines longer than the reads, as OpenAI and Gemini chunks are with 256 B reads: a line then arrives as a
    // head, pieces without any line end, and the read that ends it (decision 0090 joins them without a copy between).
    const line = fc.oneof(
      { weight: 4, arbitrary: fc.string({ minLength: 1, maxLength: 60 }).map((s) => `data: ${s.replace(/[\r\n]/g, "")}`) },
      { weight: 1, arbitrary: fc.string({ maxLength: 60 }).map((s) => `data:${s.replace(/[\r\n]/g, "")}`) },
      { weight: 1, arbitrary: fc.constantFrom("", "event: delta", "id: 9", ": ping", "dat", "data") }
    )
    const doc = fc
      .array(fc.tuple(line, anyEol), { maxLength: 12 })
      .map((lines) => `${lines.map(([l, e]) => l + e).join("")}: end\n`)
    // Reads of 1–12 characters, their sizes cycled over the document: most data lines span several reads.
    const readSizes = fc.array(fc.integer({ min: 1, max: 12 }), { minLength: 1, maxLength: 16 })
    const inReads = (text: string, sizes: ReadonlyArray<number>): ReadonlyArray<string> => {
      const reads: Array<string> = []
      for (let at = 0, i = 0; at < text.length; i++) {
        const size = sizes[i % sizes.length] as number
        reads.push(text.slice(at, at + size))
        at += size
      }
      return reads
    }
    fc.assert(
      fc.property(doc, readSizes, (text, sizes) => {
        expect(feedAll(inReads(text, sizes))).toEqual(referenceMessages(text))
      }),
      { numRuns: 500 }
    )
  })

  it("ends a line at a CR that ends a read, and takes an LF starting the next read as that CRLF's", () => {
    const parser = createSseParser()
    expect(parser.feed("data: a\r")).toEqual([])
    expect(parser.feed("\r")).toEqual([{ event: "message", data: "a" }])
    expect(parser.feed("\ndata: b\r")).toEqual([])
    expect(parser.feed("\n\r\n")).toEqual([{ event: "message", data: "b" }])
    // A stream that ends on a CR has ended its line: the event is complete (the spec's CR line end).
    expect(parseSseText("data: c\r\r")).toEqual([{ event: "message", data: "c" }])
  })

  it("joins a line cut over many reads, and reads each event name afresh", () => {
    const parser = createSseParser()
    const pieces = ["event: content_", "block_", "delta\ndata: {\"a\"", ":", "1", "}\n", "\n"]
    expect(pieces.flatMap((piece) => [...parser.feed(piece)])).toEqual([{ event: "content_block_delta", data: '{"a":1}' }])
    expect(parseSseText("event: delta\ndata: 1\n\nevent: delta\ndata: 2\n\nevent: delt\ndata: 3\n\nevent: deltas\ndata: 4\n\n").map((m) => m.event)).toEqual([
      "delta",
      "delta",
      "delt",
      "deltas"
    ])
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
