import { Sse } from "effect/encoding"
import { defaultResponseLimits, limitExceeded } from "./limits.ts"
import type { SseMessage } from "./scheme.ts"

/**
 * An incremental SSE parser over effect's WHATWG-conformant `Sse.makeParser`. Feed text chunks as they arrive;
 * complete messages are appended to the returned batch. `retry:` directives are ignored: providers do not use
 * them and reconnection is the transport's decision. Comments never become messages.
 *
 * The pending event (its data so far plus an unfinished line) is bounded by `maxEventChars`: a runaway event or
 * a line that never ends throws `LlmLimitExceeded` instead of growing the buffer. The parser counts no further
 * than the bound, so the error's `seen` is `maxEventChars + 1`.
 */
export interface SseParser {
  /** Parses a chunk and returns the messages it completed (possibly none). */
  feed(chunk: string): ReadonlyArray<SseMessage>
}

/** An incremental SSE parser whose pending event is bounded by `maxEventChars` (see `SseParser`). */
export const createSseParser = (maxEventChars: number = defaultResponseLimits.maxEventChars): SseParser => {
  let batch: Array<SseMessage> = []
  const parser = Sse.makeParser(
    (event) => {
      if (event._tag === "Event") {
        batch.push(event.id === undefined ? { event: event.event, data: event.data } : { event: event.event, data: event.data, id: event.id })
      }
    },
    { maxEventSize: maxEventChars }
  )
  return {
    feed(chunk) {
      const error = parser.feed(chunk)
      if (error !== undefined) throw limitExceeded("maxEventChars", maxEventChars, maxEventChars + 1)
      const out = batch
      batch = []
      return out
    }
  }
}

/** Parses a whole SSE document (a recorded transcript, for instance). A trailing event without a blank line is dropped, as the SSE spec requires. */
export const parseSseText = (text: string): ReadonlyArray<SseMessage> => createSseParser().feed(text)
