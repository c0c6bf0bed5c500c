import { createParser } from "eventsource-parser"
import { defaultResponseLimits, limitExceeded } from "./limits.ts"
import type { SseMessage } from "./scheme.ts"

/**
 * An incremental SSE parser over `eventsource-parser` (chosen on measured throughput against effect's `Sse`
 * parser, see docs/decisions/0070-sse-parser.md). Feed text chunks as they arrive; complete messages are
 * appended to the returned batch. `retry:` directives are ignored: providers do not use them and reconnection is
 * the transport's decision. Comments (keep-alives) never become messages; unknown fields are ignored, as the
 * SSE spec says. An event without a name is a `message`; `id` is the last event id seen, as in `EventSource`.
 *
 * The pending event (its data so far plus an unfinished line) is bounded by `maxEventChars`: a runaway event or
 * a line that never ends throws `LlmLimitExceeded` instead of growing the buffer. The bound is checked after
 * every chunk, so the error's `seen` is `maxEventChars + 1`; after it the parser refuses further input.
 */
export interface SseParser {
  /** Parses a chunk and returns the messages it completed (possibly none). */
  feed(chunk: string): ReadonlyArray<SseMessage>
}

const BOM = "\uFEFF"

/** An incremental SSE parser whose pending event is bounded by `maxEventChars` (see `SseParser`). */
export const createSseParser = (maxEventChars: number = defaultResponseLimits.maxEventChars): SseParser => {
  let batch: Array<SseMessage> = []
  let lastEventId: string | undefined
  let tooLarge = false
  let first = true
  const parser = createParser({
    onEvent: (event) => {
      if (event.id !== undefined) lastEventId = event.id
      const name = event.event ?? "message"
      batch.push(lastEventId === undefined ? { event: name, data: event.data } : { event: name, data: event.data, id: lastEventId })
    },
    onError: (error) => {
      // Only the size bound matters; an unknown field or a bad `retry` is ignored, as the spec says.
      if (error.type === "max-buffer-size-exceeded") tooLarge = true
    },
    maxBufferSize: maxEventChars
  })
  const refuse = () => limitExceeded("maxEventChars", maxEventChars, maxEventChars + 1)
  return {
    feed(chunk) {
      if (tooLarge) throw refuse()
      if (chunk.length === 0) return []
      if (first) {
        first = false
        // A decoder reading bytes strips the BOM itself; a caller feeding text may not have.
        if (chunk.startsWith(BOM)) chunk = chunk.slice(1)
      }
      parser.feed(chunk)
      if (tooLarge) {
        batch = []
        throw refuse()
      }
      const out = batch
      batch = []
      return out
    }
  }
}

/** Parses a whole SSE document (a recorded transcript, for instance). A trailing event without a blank line is dropped, as the SSE spec requires. */
export const parseSseText = (text: string): ReadonlyArray<SseMessage> => createSseParser().feed(text)
