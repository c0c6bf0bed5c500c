/**
 * SSE parsers measured against each other on the same bytes and reads (bench/stream.ts): each variant decodes
 * the chunks with a streaming TextDecoder, parses them into messages and counts the messages' data characters,
 * so every variant does the same observable work and none can skip the data.
 */
import { Sse } from "effect/encoding"
import { createParser } from "eventsource-parser"
import { createSseParser } from "#internal/llm/sse"

export type ParserRun = (chunks: ReadonlyArray<Uint8Array>) => number

/**
 * The floor: what any SSE parser must at least do — split lines on LF with a carry between reads and take the
 * `data:` lines, dispatching on the blank line. No CR handling, no bounds, no fields but data: not a parser.
 */
export const lineSplitterFloor: ParserRun = (chunks) => {
  const text = new TextDecoder()
  let carry = ""
  let data = ""
  let chars = 0
  for (const chunk of chunks) {
    const s = carry + text.decode(chunk, { stream: true })
    let start = 0
    let nl = s.indexOf("\n", start)
    while (nl !== -1) {
      if (nl === start) {
        chars += data.length
        data = ""
      } else if (s.startsWith("data:", start)) {
        data = s.slice(s.charCodeAt(start + 5) === 32 ? start + 6 : start + 5, nl)
      }
      start = nl + 1
      nl = s.indexOf("\n", start)
    }
    carry = s.slice(start)
  }
  return chars
}

/** effect 4's `Sse.makeParser` (effect/encoding), with its event size bound. */
export const effectSse: ParserRun = (chunks) => {
  const text = new TextDecoder()
  let chars = 0
  const parser = Sse.makeParser(
    (event) => {
      if (event._tag === "Event") chars += event.data.length
    },
    { maxEventSize: 16 * 1024 * 1024 }
  )
  for (const chunk of chunks) {
    if (parser.feed(text.decode(chunk, { stream: true })) !== undefined) throw new Error("event too large")
  }
  return chars
}

/** eventsource-parser 3 (`createParser`), with its buffer bound. */
export const eventsourceParser: ParserRun = (chunks) => {
  const text = new TextDecoder()
  let chars = 0
  const parser = createParser({
    onEvent: (event) => {
      chars += event.data.length
    },
    maxBufferSize: 16 * 1024 * 1024
  })
  for (const chunk of chunks) parser.feed(text.decode(chunk, { stream: true }))
  return chars
}

/** Ours as the transport runs it: `createSseParser` (bounds, batch per read, message objects). */
export const oursSse: ParserRun = (chunks) => {
  const text = new TextDecoder()
  const sse = createSseParser()
  let chars = 0
  for (const chunk of chunks) for (const message of sse.feed(text.decode(chunk, { stream: true }))) chars += message.data.length
  return chars
}

export const PARSERS: ReadonlyArray<readonly [string, ParserRun]> = [
  ["line splitter (floor)", lineSplitterFloor],
  ["effect `Sse.makeParser`", effectSse],
  ["eventsource-parser", eventsourceParser],
  ["ours: `createSseParser`", oursSse]
]
