/**
 * Responses as `fetch` gives them, fed from memory: a byte stream that delivers one chunk per read, each in a
 * buffer of its own (what Node's fetch hands a reader; see bench/stream.ts). Shared by the benchmarks that run the
 * client, its floor and the AI SDK on the same bytes.
 */
import { do_not_optimize } from "mitata"
import { createLlmClient } from "#internal/llm/llm-client"
import { floorEvents } from "./client-floor.ts"

/** The chunks as the body of a fetch response: a byte stream, one chunk per read, each in a buffer of its own. */
export const fetchedBody = (chunks: ReadonlyArray<Uint8Array>): ReadableStream<Uint8Array> => {
  let next = 0
  return new ReadableStream({
    type: "bytes",
    pull(controller) {
      const chunk = chunks[next++]
      if (chunk === undefined) controller.close()
      else controller.enqueue(chunk.slice())
    }
  })
}

/** A `fetch` that answers every call with a 200 event stream of `chunks`. */
export const answerWith = (chunks: ReadonlyArray<Uint8Array>) => async (): Promise<Response> =>
  new Response(fetchedBody(chunks), { status: 200, headers: { "content-type": "text/event-stream" } })

/** One call of our client (`createLlmClient(...).stream()` drained with `for await`) on `chunks`. */
export const viaClient = (provider: string, chunks: ReadonlyArray<Uint8Array>) => {
  const client = createLlmClient({
    provider,
    model: "bench-model",
    apiKey: "bench-key",
    baseUrl: "http://127.0.0.1:9",
    retry: { maxRetries: 0 },
    fetch: answerWith(chunks)
  })
  const request = { model: "bench-model", items: [], tools: [], config: {} }
  return async (): Promise<number> => {
    let events = 0
    for await (const event of client.stream(request)) {
      do_not_optimize(event)
      events++
    }
    return events
  }
}

/** The client floor on the same kind of response (client-floor.ts). */
export const viaFloor = (chunks: ReadonlyArray<Uint8Array>) => {
  const fetch = answerWith(chunks)
  return async (): Promise<number> => {
    const response = await fetch()
    let values = 0
    for await (const value of floorEvents(response.body as ReadableStream<Uint8Array>)) {
      do_not_optimize(value)
      values++
    }
    return values
  }
}
