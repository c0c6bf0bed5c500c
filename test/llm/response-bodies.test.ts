import { createServer } from "node:http"
import type { Server } from "node:http"
import type { AddressInfo } from "node:net"
import fc from "fast-check"
import { afterEach, describe, expect, it } from "vitest"
import type { Event } from "../../src/llm/event.ts"
import { createLlmClient } from "../../src/llm/llm-client.ts"
import type { LlmError } from "../../src/llm/llm-error.ts"
import type { Request } from "../../src/llm/request.ts"
import type { SchemeName } from "../../src/llm/scheme.ts"
import { sseText } from "../../src/testing/replay-provider.ts"
import { listTranscripts, loadTranscript } from "../support/sse-fixtures.ts"

// The transport reads a body with its default reader, whatever stream the `fetch` answers with (decision 0087):
// fetch's own byte stream, or any stream a custom `fetch` builds.

const PROVIDER_FOR: Readonly<Record<SchemeName, string>> = {
  "openai-chat": "openai",
  "openai-responses": "openai-responses",
  anthropic: "anthropic",
  gemini: "gemini"
}
const request: Request = { model: "m", items: [], tools: [], config: {} }

const collect = async (stream: AsyncIterable<Event>): Promise<{ events: Array<Event>; error?: string }> => {
  const events: Array<Event> = []
  try {
    for await (const event of stream) events.push(event)
    return { events }
  } catch (error) {
    return { events, error: (error as LlmError)._tag }
  }
}

/** Tool call ids the decoders make up where the wire has none differ per run; numbered in order of appearance. */
const withStableIds = (events: ReadonlyArray<Event>): ReadonlyArray<Event> => {
  const ids = new Map<string, string>()
  return events.map((event) => {
    if (event.type !== "block_start" || event.block.kind !== "tool_use") return event
    if (!ids.has(event.block.id)) ids.set(event.block.id, `id-${ids.size}`)
    return { ...event, block: { ...event.block, id: ids.get(event.block.id) as string } }
  })
}

let server: Server | undefined
afterEach(async () => {
  server?.closeAllConnections()
  await new Promise((resolve) => (server === undefined ? resolve(undefined) : server.close(resolve)))
  server = undefined
})

describe("a consumer that falls behind its server", () => {
  it("reads the backlog of a real fetch body in a few reads, not one per write, with the same events", async () => {
    const delta = (i: number) =>
      `{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"w${i} "},"finish_reason":null}]}`
    const WRITES = 40
    const first = sseText([{ data: `{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"w "},"finish_reason":null}]}` }])
    const rest = Array.from({ length: WRITES }, (_, i) => sseText([{ data: delta(i) }]))
    const last = sseText([
      { data: `{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` },
      { data: "[DONE]" }
    ])
    let consumed!: () => void
    const firstConsumed = new Promise<void>((resolve) => (consumed = resolve))
    let written!: () => void
    const allWritten = new Promise<void>((resolve) => (written = resolve))
    server = createServer((_, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" })
      res.write(first)
      // Each event its own write, a turn of the event loop apart, while the consumer holds the first event.
      void firstConsumed.then(async () => {
        for (const text of rest) {
          res.write(text)
          await new Promise((resolve) => setImmediate(resolve))
        }
        res.end(last)
        written()
      })
    })
    await new Promise<void>((resolve) => server?.listen(0, "127.0.0.1", resolve))
    const { port } = server.address() as AddressInfo
    let reads = 0
    const counting: typeof globalThis.fetch = async (input, init) => {
      const response = await globalThis.fetch(input, init)
      const body = response.body as ReadableStream<Uint8Array>
      const getReader = body.getReader.bind(body) as () => ReadableStreamDefaultReader<Uint8Array>
      Object.defineProperty(body, "getReader", {
        value: () => {
          const reader = getReader()
          const read = reader.read.bind(reader)
          Object.defineProperty(reader, "read", { value: () => (reads++, read()) })
          return reader
        }
      })
      return response
    }
    const client = createLlmClient({ provider: "openai", model: "m", apiKey: "k", baseUrl: `http://127.0.0.1:${port}`, retry: { maxRetries: 0 }, fetch: counting })
    const events: Array<Event> = []
    for await (const event of client.stream(request)) {
      if (events.length === 0) {
        consumed()
        await allWritten
      }
      events.push(event)
    }
    const text = events.flatMap((event) => (event.type === "block_delta" && event.delta.kind === "text" ? [event.delta.text] : [])).join("")
    expect(text).toBe(`w ${rest.map((_, i) => `w${i} `).join("")}`)
    expect(events.at(-1)).toMatchObject({ type: "status", status: "completed" })
    // The 42 writes were all queued when the consumer came back: Node's fetch hands them over together.
    expect(reads).toBeGreaterThan(1)
    expect(reads).toBeLessThan(WRITES / 4)
  })
})

describe("the body a custom fetch answers with", () => {
  const fixtures = (Object.keys(PROVIDER_FOR) as ReadonlyArray<SchemeName>).flatMap((scheme) => listTranscripts(scheme).map((name) => ({ scheme, name })))

  /** A web stream of `chunks`: a default stream with everything queued, or a byte stream delivering one per read, as fetch's. */
  const bodyOf = (chunks: ReadonlyArray<Uint8Array>, kind: "default" | "bytes"): ReadableStream<Uint8Array> => {
    if (kind === "default") {
      return new ReadableStream<Uint8Array>({
        start(controller) {
          for (const chunk of chunks) controller.enqueue(chunk)
          controller.close()
        }
      })
    }
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

  it("is read alike, default stream or byte stream, however the recorded bytes are cut", async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...fixtures), fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 30 }), async ({ scheme, name }, fractions) => {
        const bytes = new TextEncoder().encode(loadTranscript(scheme, name))
        const cuts = [...new Set(fractions.map((f) => Math.floor(f * bytes.length)))].filter((at) => at > 0).sort((a, b) => a - b)
        const chunks = [0, ...cuts].map((from, i) => bytes.subarray(from, cuts[i] ?? bytes.length)).filter((chunk) => chunk.length > 0)
        const run = async (kind: "default" | "bytes", pieces: ReadonlyArray<Uint8Array>) => {
          const client = createLlmClient({
            provider: PROVIDER_FOR[scheme],
            model: "m",
            apiKey: "k",
            baseUrl: "http://127.0.0.1:9",
            retry: { maxRetries: 0 },
            fetch: async () => new Response(bodyOf(pieces, kind), { status: 200, headers: { "content-type": "text/event-stream" } })
          })
          const result = await collect(client.stream(request))
          return { events: withStableIds(result.events), error: result.error }
        }
        const whole = await run("default", [bytes])
        expect(await run("default", chunks)).toEqual(whole)
        expect(await run("bytes", chunks)).toEqual(whole)
      }),
      { numRuns: 60 }
    )
  })
})
