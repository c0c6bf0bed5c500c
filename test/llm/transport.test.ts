import fc from "fast-check"
import { Effect, Fiber, Stream } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import type { Event } from "../../src/llm/event.ts"
import { Item } from "../../src/llm/item.ts"
import type { LlmError } from "../../src/llm/llm-error.ts"
import type { Request } from "../../src/llm/request.ts"
import { openAiChatScheme } from "../../src/llm/schemes/openai-chat.ts"
import { createAnthropicDecoder } from "../../src/llm/schemes/anthropic-decoder.ts"
import { parseSseText } from "../../src/llm/sse.ts"
import type { StreamDecoder } from "../../src/llm/scheme.ts"
import { eventStream } from "../../src/llm/transport/effect-stream.ts"
import { defaultRetryPolicy } from "../../src/llm/transport/retry-policy.ts"
import type { RetryPolicy } from "../../src/llm/transport/retry-policy.ts"
import { streamSse } from "../../src/llm/transport/sse-transport.ts"
import type { TransportOptions } from "../../src/llm/transport/sse-transport.ts"
import { defaultTimeouts } from "../../src/llm/transport/timeouts.ts"
import type { Timeouts } from "../../src/llm/transport/timeouts.ts"
import { sseText, startReplayProvider } from "../../src/testing/replay-provider.ts"
import type { ReplayProvider, ReplayStep } from "../../src/testing/replay-provider.ts"

// Genuine Chat Completions chunks (shape from OpenAI's streaming reference): text, then a tool call whose
// arguments arrive in pieces, then finish_reason, usage and [DONE].
const chunk = (delta: string, finish = "null") =>
  `{"id":"chatcmpl-9","object":"chat.completion.chunk","created":1730000000,"model":"gpt-4o-mini","choices":[{"index":0,"delta":${delta},"finish_reason":${finish}}]}`
const CHAT = sseText([
  { data: chunk(`{"role":"assistant","content":""}`) },
  { data: chunk(`{"content":"Checking the weather — ☀️ "}`) },
  { data: chunk(`{"tool_calls":[{"index":0,"id":"call_abc","type":"function","function":{"name":"get_weather","arguments":""}}]}`) },
  { data: chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"{\\"city\\":"}}]}`) },
  { data: chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"\\"Paris\\"}"}}]}`) },
  { data: chunk(`{}`, `"tool_calls"`) },
  {
    data: `{"id":"chatcmpl-9","object":"chat.completion.chunk","created":1730000000,"model":"gpt-4o-mini","choices":[],"usage":{"prompt_tokens":20,"completion_tokens":9,"total_tokens":29}}`
  },
  { data: "[DONE]" }
])
const SERVER_ERROR = sseText([{ data: `{"error":{"message":"The server had an error while processing your request.","type":"server_error","param":null,"code":null}}` }])
const INVALID_REQUEST = sseText([{ data: `{"error":{"message":"Bad tool schema","type":"invalid_request_error","param":null,"code":null}}` }])

const request: Request = { model: "gpt-4o-mini", items: [Item.userText("Weather in Paris?")], tools: [], config: {} }
const reference = (transcript: string, decoder: StreamDecoder = openAiChatScheme.decoder(request)): ReadonlyArray<Event> => [
  ...parseSseText(transcript).flatMap((message) => decoder.push(message)),
  ...decoder.end()
]

let server: ReplayProvider | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
})

interface Harness {
  readonly sleeps: Array<number>
  run(signal?: AbortSignal): Promise<{ readonly events: Array<Event>; readonly error?: LlmError }>
}

const harness = async (
  script: ReadonlyArray<ReplayStep>,
  settings: { retry?: Partial<RetryPolicy>; timeouts?: Partial<Timeouts>; decoder?: () => StreamDecoder; consumeMs?: number } = {}
): Promise<Harness> => {
  server = await startReplayProvider({ scheme: "openai-chat", script })
  const sleeps: Array<number> = []
  const options: TransportOptions = {
    retry: {
      ...defaultRetryPolicy,
      random: () => 0.5,
      sleep: async (ms) => {
        sleeps.push(ms)
      },
      ...settings.retry
    },
    timeouts: { ...defaultTimeouts, ...settings.timeouts },
    fetch: globalThis.fetch,
    maxErrorBodyBytes: 1024
  }
  const url = `${server.baseUrl}/chat/completions`
  return {
    sleeps,
    run: async (signal) => {
      const events: Array<Event> = []
      try {
        for await (const event of streamSse(
          { url, headers: {}, body: "{}", decoder: settings.decoder ?? (() => openAiChatScheme.decoder(request)) },
          options,
          signal
        )) {
          events.push(event)
          if (settings.consumeMs !== undefined) await new Promise((resolve) => setTimeout(resolve, settings.consumeMs))
        }
        return { events }
      } catch (error) {
        return { events, error: error as LlmError }
      }
    }
  }
}

const ok: ReplayStep = { kind: "stream", transcript: CHAT }

describe("streamSse over HTTP", () => {
  it("yields exactly what the decoder makes of the transcript", async () => {
    const h = await harness([ok])
    const { events, error } = await h.run()
    expect(error).toBeUndefined()
    expect(events).toEqual(reference(CHAT))
    expect(events.filter((e) => e.type === "block_start").map((e) => e.type === "block_start" && e.block.kind)).toEqual(["text", "tool_use"])
  })

  it("passes over messages whose data is blank, Unicode whitespace included, without decoding them", async () => {
    // The chat decoder fails a chunk that is not JSON, so any blank message it were given would show as an error.
    const blanks = ["", " ", "\t", "\u00a0", "\u2028 \ufeff", "\u3000"]
    const messages = parseSseText(CHAT).flatMap((message, i) => [{ data: blanks[i % blanks.length] as string }, { data: message.data }])
    const h = await harness([{ kind: "stream", transcript: sseText(messages) }])
    const { events, error } = await h.run()
    expect(error).toBeUndefined()
    expect(events).toEqual(reference(CHAT))
  })

  it("gives the same events whatever the chunk boundaries, split multi-byte characters included", async () => {
    const expected = reference(CHAT)
    const length = Buffer.byteLength(CHAT)
    await fc.assert(
      fc.asyncProperty(fc.array(fc.integer({ min: 1, max: length - 1 }), { maxLength: 40 }), async (splitAt) => {
        const h = await harness([{ kind: "stream", transcript: CHAT, splitAt }])
        const { events, error } = await h.run()
        await server?.close()
        server = undefined
        expect(error).toBeUndefined()
        expect(events).toEqual(expected)
      }),
      { numRuns: 25 }
    )
  })
})

describe("retries", () => {
  it("waits the Retry-After seconds on 429, then succeeds", async () => {
    const h = await harness([{ kind: "status", status: 429, headers: { "retry-after": "2" }, body: "slow down" }, ok])
    const { events, error } = await h.run()
    expect(error).toBeUndefined()
    expect(h.sleeps).toEqual([2000])
    expect(server?.requests).toHaveLength(2)
    expect(events).toEqual(reference(CHAT))
  })

  it("reads Retry-After as an HTTP-date", async () => {
    const now = Date.parse("2026-01-01T00:00:00Z")
    const h = await harness(
      [{ kind: "status", status: 429, headers: { "retry-after": new Date(now + 7000).toUTCString() } }, ok],
      { retry: { now: () => now } }
    )
    expect((await h.run()).error).toBeUndefined()
    expect(h.sleeps).toEqual([7000])
  })

  it("caps Retry-After, in both forms", async () => {
    const now = Date.parse("2026-01-01T00:00:00Z")
    const h = await harness(
      [
        { kind: "status", status: 429, headers: { "retry-after": "3600" } },
        { kind: "status", status: 503, headers: { "retry-after": new Date(now + 86_400_000).toUTCString() } },
        ok
      ],
      { retry: { now: () => now, maxRetryAfterMs: 5000 } }
    )
    expect((await h.run()).error).toBeUndefined()
    expect(h.sleeps).toEqual([5000, 5000])
  })

  it("backs off with full jitter on 5xx and gives up after maxRetries", async () => {
    const h = await harness([{ kind: "status", status: 503, body: '{"error":"busy"}' }], {
      retry: { maxRetries: 3, baseDelayMs: 100, maxDelayMs: 300, random: () => 0.75 }
    })
    const { events, error } = await h.run()
    expect(events).toEqual([])
    expect(error).toMatchObject({ _tag: "LlmHttpError", status: 503, body: '{"error":"busy"}' })
    // 0.75 × min(300, 100·2^n): 75, 150, 225
    expect(h.sleeps).toEqual([75, 150, 225])
    expect(server?.requests).toHaveLength(4)
  })

  it("retries 5xx then succeeds", async () => {
    const h = await harness([{ kind: "status", status: 500 }, { kind: "status", status: 502 }, ok])
    const { events, error } = await h.run()
    expect(error).toBeUndefined()
    expect(events).toEqual(reference(CHAT))
    expect(server?.requests).toHaveLength(3)
  })

  it.each([400, 401, 403, 404, 422])("does not retry %i", async (status) => {
    const h = await harness([{ kind: "status", status, body: '{"error":{"message":"no"}}' }, ok])
    const { error } = await h.run()
    expect(error).toMatchObject({ _tag: "LlmHttpError", status, body: '{"error":{"message":"no"}}' })
    expect(server?.requests).toHaveLength(1)
  })

  it.each([408, 409, 425])("retries %i", async (status) => {
    const h = await harness([{ kind: "status", status }, ok])
    expect((await h.run()).error).toBeUndefined()
    expect(server?.requests).toHaveLength(2)
  })

  it("caps the error body it keeps", async () => {
    const h = await harness([{ kind: "status", status: 400, body: "x".repeat(5000) }])
    const { error } = await h.run()
    expect(error?._tag).toBe("LlmHttpError")
    const body = (error as Extract<LlmError, { _tag: "LlmHttpError" }>).body
    expect(body.startsWith("x".repeat(1024))).toBe(true)
    expect(body.length).toBeLessThan(1100)
  })

  it("retries a transient error event that arrives before any content, invisibly", async () => {
    const h = await harness([{ kind: "stream", transcript: SERVER_ERROR }, ok])
    const { events, error } = await h.run()
    expect(error).toBeUndefined()
    expect(events).toEqual(reference(CHAT))
    expect(server?.requests).toHaveLength(2)
  })

  it("retries Anthropic's overloaded_error before content", async () => {
    const overloaded = sseText([
      { event: "message_start", data: `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"claude-sonnet-4-5","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":10,"output_tokens":1}}}` },
      { event: "error", data: `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}` }
    ])
    const text = sseText([
      { event: "message_start", data: `{"type":"message_start","message":{"id":"msg_2","type":"message","role":"assistant","content":[],"model":"claude-sonnet-4-5","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":10,"output_tokens":1}}}` },
      { event: "content_block_start", data: `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}` },
      { event: "content_block_delta", data: `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}` },
      { event: "content_block_stop", data: `{"type":"content_block_stop","index":0}` },
      { event: "message_delta", data: `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":2}}` },
      { event: "message_stop", data: `{"type":"message_stop"}` }
    ])
    const h = await harness([{ kind: "stream", transcript: overloaded }, { kind: "stream", transcript: text }], { decoder: createAnthropicDecoder })
    const { events, error } = await h.run()
    expect(error).toBeUndefined()
    expect(events).toEqual(reference(text, createAnthropicDecoder()))
    expect(events.filter((e) => e.type === "status")).toHaveLength(2) // one started, one completed: the failed attempt left no trace
  })

  it("does not retry a transient error once content was yielded", async () => {
    const cut = CHAT.indexOf("data:", CHAT.indexOf("Checking"))
    const h = await harness([{ kind: "stream", transcript: CHAT.slice(0, cut) + SERVER_ERROR }, ok])
    const { events, error } = await h.run()
    expect(error).toMatchObject({ _tag: "LlmProviderError", code: "server_error" })
    expect(events.some((e) => e.type === "block_delta")).toBe(true)
    expect(events.some((e) => e.type === "error" && e.code === "server_error")).toBe(true)
    expect(server?.requests).toHaveLength(1)
  })

  it("does not retry a non-transient error event", async () => {
    const h = await harness([{ kind: "stream", transcript: INVALID_REQUEST }, ok])
    const { events, error } = await h.run()
    expect(error).toMatchObject({ _tag: "LlmProviderError", code: "invalid_request_error" })
    expect(events.some((e) => e.type === "error")).toBe(true)
    expect(server?.requests).toHaveLength(1)
  })

  it("retries a dropped connection", async () => {
    const h = await harness([{ kind: "reset" }, ok])
    expect((await h.run()).error).toBeUndefined()
    expect(server?.requests).toHaveLength(2)
  })
})

describe("incomplete streams", () => {
  const afterContent = Buffer.byteLength(CHAT.slice(0, CHAT.indexOf('\\"Paris')))

  it.each(["end", "reset"] as const)("closes open blocks and reports a network error when cut after content (%s)", async (truncateBy) => {
    const h = await harness([{ kind: "stream", transcript: CHAT, truncateAtByte: afterContent, truncateBy }, ok])
    const { events, error } = await h.run()
    expect(error?._tag).toBe("LlmNetworkError")
    const started = events.filter((e) => e.type === "block_start").map((e) => e.index)
    const closed = events.filter((e) => e.type === "block_stop" || e.type === "block_abort").map((e) => e.index)
    expect(started.length).toBeGreaterThan(0)
    expect([...closed].sort()).toEqual([...started].sort())
    expect(server?.requests).toHaveLength(1)
  })

  it("retries a stream cut before any content", async () => {
    const h = await harness([{ kind: "stream", transcript: CHAT, truncateAtByte: 40 }, ok])
    const { events, error } = await h.run()
    expect(error).toBeUndefined()
    expect(events).toEqual(reference(CHAT))
  })

  it("accepts a stream that finished without [DONE] when the decoder judges it complete", async () => {
    const noDone = CHAT.slice(0, CHAT.indexOf("data: [DONE]"))
    const h = await harness([{ kind: "stream", transcript: noDone }])
    const { events, error } = await h.run()
    expect(error).toBeUndefined()
    expect(events.at(-1)).toMatchObject({ type: "status", status: "completed" })
  })
})

describe("redirects", () => {
  it("are not followed and not retried: a protocol error naming the redirect", async () => {
    const h = await harness([{ kind: "status", status: 307, headers: { location: "http://127.0.0.1:9/elsewhere" } }, ok])
    const { error } = await h.run()
    expect(error).toMatchObject({ _tag: "LlmProtocolError" })
    expect(error?.message).toMatch(/redirect/)
    expect(server?.requests).toHaveLength(1)
  })
})

describe("a success that is not a stream", () => {
  it("is a protocol error carrying the body, not retried as a truncated stream", async () => {
    const h = await harness([{ kind: "status", status: 200, body: '{"choices":[{"message":{"content":"hi"}}]}' }, ok])
    const { events, error } = await h.run()
    expect(error).toMatchObject({ _tag: "LlmProtocolError" })
    expect(error?.message).toContain('"content":"hi"')
    expect(events).toEqual([])
    expect(server?.requests).toHaveLength(1)
  })
})

describe("timeouts", () => {
  it("times out waiting for headers, retrying first", async () => {
    const h = await harness([{ kind: "no_headers" }], { retry: { maxRetries: 1 }, timeouts: { headersMs: 100 } })
    const { error } = await h.run()
    expect(error).toMatchObject({ _tag: "LlmTimeout", phase: "headers", afterMs: 100 })
    expect(server?.requests).toHaveLength(2)
  })

  it("times out waiting for the first event", async () => {
    const h = await harness([{ kind: "stream", transcript: CHAT, stallAfterEvents: 0 }], {
      retry: { maxRetries: 0 },
      timeouts: { firstEventMs: 100 }
    })
    expect((await h.run()).error).toMatchObject({ _tag: "LlmTimeout", phase: "first_event" })
  })

  it("times out when idle between events, closes blocks and does not retry", async () => {
    const h = await harness([{ kind: "stream", transcript: CHAT, stallAfterEvents: 4 }, ok], { timeouts: { idleMs: 150 } })
    const { events, error } = await h.run()
    expect(error).toMatchObject({ _tag: "LlmTimeout", phase: "idle", afterMs: 150 })
    expect(events.filter((e) => e.type === "block_start")).toHaveLength(2)
    expect(events.filter((e) => e.type === "block_stop" || e.type === "block_abort")).toHaveLength(2)
    expect(server?.requests).toHaveLength(1)
  })

  it("does not time out a slow stream that keeps sending events", async () => {
    const eventEnds = [...CHAT.matchAll(/\n\n/g)].map((m) => Buffer.byteLength(CHAT.slice(0, m.index + 2)))
    const h = await harness([{ kind: "stream", transcript: CHAT, splitAt: eventEnds, gapMs: 40 }], {
      timeouts: { firstEventMs: 200, idleMs: 200 }
    })
    // The whole stream takes ~8 × 40 ms, well over the idle limit, yet no gap comes near it.
    expect((await h.run()).error).toBeUndefined()
  })

  it("does not count the consumer's time as idle: a slow hook cannot kill a healthy stream", async () => {
    const h = await harness([{ kind: "stream", transcript: CHAT }], { timeouts: { idleMs: 60 }, consumeMs: 120 })
    const { events, error } = await h.run()
    expect(error).toBeUndefined()
    expect(events.at(-1)).toMatchObject({ type: "status", status: "completed" })
  })
})

describe("cancellation", () => {
  it("cancels before headers", async () => {
    const h = await harness([{ kind: "no_headers" }])
    const started = Date.now()
    const { error } = await h.run(AbortSignal.timeout(80))
    expect(error?._tag).toBe("LlmCancelled")
    expect(Date.now() - started).toBeLessThan(2000)
  })

  it("cancels mid-stream", async () => {
    server = await startReplayProvider({ scheme: "openai-chat", script: [{ kind: "stream", transcript: CHAT, stallAfterEvents: 3 }] })
    const controller = new AbortController()
    const events: Array<Event> = []
    const options: TransportOptions = { retry: defaultRetryPolicy, timeouts: defaultTimeouts, fetch, maxErrorBodyBytes: 1024 }
    const run = async () => {
      for await (const event of streamSse(
        { url: `${server!.baseUrl}/chat/completions`, headers: {}, body: "{}", decoder: () => openAiChatScheme.decoder(request) },
        options,
        controller.signal
      )) {
        events.push(event)
        if (event.type === "block_delta") controller.abort()
      }
    }
    await expect(run()).rejects.toMatchObject({ _tag: "LlmCancelled" })
    expect(events.at(-1)?.type).toBe("block_delta")
  })

  it("cancels during the back-off sleep", async () => {
    const h = await harness([{ kind: "status", status: 429, headers: { "retry-after": "30" } }, ok], {
      retry: { sleep: defaultRetryPolicy.sleep }
    })
    const started = Date.now()
    const { error } = await h.run(AbortSignal.timeout(100))
    expect(error?._tag).toBe("LlmCancelled")
    expect(Date.now() - started).toBeLessThan(2000)
    expect(server?.requests).toHaveLength(1)
  })

  it("stopping iteration early hangs up", async () => {
    const h = await harness([{ kind: "stream", transcript: CHAT, stallAfterEvents: 3 }])
    server = server!
    const url = `${server.baseUrl}/chat/completions`
    const options: TransportOptions = { retry: defaultRetryPolicy, timeouts: defaultTimeouts, fetch, maxErrorBodyBytes: 1024 }
    for await (const event of streamSse({ url, headers: {}, body: "{}", decoder: () => openAiChatScheme.decoder(request) }, options)) {
      if (event.type === "block_start") break
    }
    await server.requests[0]!.disconnected
    expect(h.sleeps).toEqual([])
  })

  it("a finished attempt aborts its request as an AbortError, whether the body ended or was left open", async () => {
    for (const leftOpen of [false, true]) {
      let seen: AbortSignal | undefined
      const body = new TextEncoder().encode(CHAT)
      const options: TransportOptions = {
        retry: defaultRetryPolicy,
        timeouts: defaultTimeouts,
        maxErrorBodyBytes: 1024,
        fetch: async (_url, init) => {
          seen = init?.signal ?? undefined
          const stream = new ReadableStream<Uint8Array>({
            start(controller) {
              controller.enqueue(body)
              if (!leftOpen) controller.close()
            }
          })
          return new Response(stream, { status: 200, headers: { "content-type": "text/event-stream" } })
        }
      }
      const events: Array<Event> = []
      for await (const event of streamSse({ url: "http://127.0.0.1:9/v1/chat/completions", headers: {}, body: "{}", decoder: () => openAiChatScheme.decoder(request) }, options)) {
        events.push(event)
      }
      expect(events).toEqual(reference(CHAT))
      expect(seen?.aborted).toBe(true)
      expect((seen?.reason as { name?: unknown } | undefined)?.name).toBe("AbortError")
    }
  })

  it("an already-aborted signal sends nothing", async () => {
    const h = await harness([ok])
    expect((await h.run(AbortSignal.abort())).error?._tag).toBe("LlmCancelled")
    expect(server?.requests).toHaveLength(0)
  })
})

describe("eventStream (Effect)", () => {
  const client = (url: string) => ({
    scheme: "openai-chat" as const,
    provider: "test",
    model: "m",
    encodeRequest: () => "{}",
    validate: () => [],
    stream: (_: Request, options?: { signal?: AbortSignal }) =>
      streamSse(
        { url, headers: {}, body: "{}", decoder: () => openAiChatScheme.decoder(request) },
        { retry: defaultRetryPolicy, timeouts: defaultTimeouts, fetch, maxErrorBodyBytes: 1024 },
        options?.signal
      )
  })

  it("collects the same events", async () => {
    server = await startReplayProvider({ scheme: "openai-chat", script: [ok] })
    const events = await Effect.runPromise(Stream.runCollect(eventStream(client(`${server.baseUrl}/chat/completions`), request)))
    expect([...events]).toEqual(reference(CHAT))
  })

  it("fails with the typed error", async () => {
    server = await startReplayProvider({ scheme: "openai-chat", script: [{ kind: "status", status: 400, body: "bad" }] })
    const exit = await Effect.runPromise(Effect.flip(Stream.runCollect(eventStream(client(`${server.baseUrl}/chat/completions`), request))))
    expect(exit).toMatchObject({ _tag: "LlmHttpError", status: 400 })
  })

  it("interrupting the fiber closes the connection", async () => {
    server = await startReplayProvider({ scheme: "openai-chat", script: [{ kind: "stream", transcript: CHAT, stallAfterEvents: 3 }] })
    const fiber = Effect.runFork(Stream.runCollect(eventStream(client(`${server.baseUrl}/chat/completions`), request)))
    await new Promise((resolve) => setTimeout(resolve, 150))
    await Effect.runPromise(Fiber.interrupt(fiber))
    // The reply is stalled: only the client hanging up closes this connection.
    await server.requests[0]!.disconnected
  })
})

describe("readCapped", () => {
  it("marks truncation only when the body really was longer", async () => {
    const { readCapped } = await import("../../src/llm/transport/read-capped.ts")
    const body = (text: string) => new Response(text).body
    expect(await readCapped(body("abc"), 3)).toBe("abc")
    expect(await readCapped(body("abcd"), 3)).toBe("abc… [truncated at 3 bytes]")
    expect(await readCapped(null, 3)).toBe("")
  })
})
