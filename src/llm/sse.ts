import { Sse } from "effect/encoding"
import { LlmProtocolError } from "./llm-error.ts"
import type { SseMessage } from "./scheme.ts"

/** Pending-event cap: far above any provider event, low enough that a runaway stream cannot exhaust memory. */
const MAX_EVENT_SIZE = 16 * 1024 * 1024

/**
 * An incremental SSE parser over effect's WHATWG-conformant `Sse.makeParser`. Feed text chunks as they arrive;
 * complete messages are appended to the returned batch. `retry:` directives are ignored: providers do not use
 * them and reconnection is the transport's decision.
 */
export interface SseParser {
  /** Parses a chunk and returns the messages it completed (possibly none). */
  feed(chunk: string): ReadonlyArray<SseMessage>
}

export const createSseParser = (): SseParser => {
  let batch: Array<SseMessage> = []
  const parser = Sse.makeParser(
    (event) => {
      if (event._tag === "Event") {
        batch.push(event.id === undefined ? { event: event.event, data: event.data } : { event: event.event, data: event.data, id: event.id })
      }
    },
    { maxEventSize: MAX_EVENT_SIZE }
  )
  return {
    feed(chunk) {
      const error = parser.feed(chunk)
      if (error !== undefined) throw new LlmProtocolError({ message: `SSE event larger than ${MAX_EVENT_SIZE} characters` })
      const out = batch
      batch = []
      return out
    }
  }
}

/** Parses a whole SSE document (a recorded transcript, for instance). A trailing event without a blank line is dropped, as the SSE spec requires. */
export const parseSseText = (text: string): ReadonlyArray<SseMessage> => createSseParser().feed(text)
