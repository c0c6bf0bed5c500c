import { readFileSync } from "node:fs"
import { createServer } from "node:http"
import type { IncomingMessage, ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { afterEach, describe, expect, it } from "vitest"
import type { Event } from "../../src/llm/event.ts"
import { Item } from "../../src/llm/item.ts"
import { createLlmClient } from "../../src/llm/llm-client.ts"
import type { LlmClientOptions } from "../../src/llm/llm-client.ts"
import { isLlmError } from "../../src/llm/llm-error.ts"
import type { LlmError } from "../../src/llm/llm-error.ts"
import type { Request } from "../../src/llm/request.ts"

/**
 * The hostile provider, played over real loopback HTTP: a `node:http` server that answers with genuine wire
 * shapes (the same events as in test/fixtures/sse) but misbehaves the way an attacker, a broken proxy or a buggy
 * compatible server would. Every test goes through the public client.
 */

interface Hostile {
  readonly baseUrl: string
  /** Requests received so far. */
  readonly requests: () => number
  /** Settles once the client has hung up on every request received so far. */
  readonly allClosed: () => Promise<void>
  close(): Promise<void>
}

type Handler = (response: ServerResponse, request: IncomingMessage, n: number) => void | Promise<void>

let open: Hostile | undefined
afterEach(async () => {
  await open?.close()
  open = undefined
})

const hostile = async (handler: Handler): Promise<Hostile> => {
  let count = 0
  const closed: Array<Promise<void>> = []
  const server = createServer((request, response) => {
    const n = count++
    closed.push(new Promise((resolve) => response.once("close", () => resolve())))
    request.resume()
    request.once("end", () => void Promise.resolve(handler(response, request, n)).catch(() => response.destroy()))
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  open = {
    baseUrl: `http://127.0.0.1:${port}`,
    requests: () => count,
    allClosed: async () => {
      await Promise.all(closed)
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
  return open
}

const sse = (response: ServerResponse): void => {
  response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" })
  response.flushHeaders()
}

/** Writes and waits until the socket took it (so an endless writer is paced by the client's reading). */
const write = (response: ServerResponse, text: string): Promise<boolean> =>
  new Promise((resolve) => {
    if (response.destroyed) resolve(false)
    else response.write(text, (error) => resolve(error == null && !response.destroyed))
  })

/** Writes `next()` until the client hangs up. */
const endless = async (response: ServerResponse, next: () => string): Promise<void> => {
  while (await write(response, next())) {
    // paced by the socket
  }
}

const event = (name: string | undefined, data: string): string => `${name === undefined ? "" : `event: ${name}\n`}data: ${data}\n\n`

// Genuine shapes (see test/fixtures/sse).
const chatChunk = (delta: string, finish = "null") =>
  event(undefined, `{"id":"chatcmpl-9","object":"chat.completion.chunk","created":1730000000,"model":"gpt-4o-mini","choices":[{"index":0,"delta":${delta},"finish_reason":${finish}}]}`)
const CHAT_DONE = event(undefined, "[DONE]")
const CHAT_TEXT = chatChunk(`{"role":"assistant","content":""}`) + chatChunk(`{"content":"Hello"}`) + chatChunk(`{}`, `"stop"`)

const MESSAGE_START = event(
  "message_start",
  `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"claude-sonnet-4-5","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":10,"output_tokens":1}}}`
)
const PING = event("ping", `{"type": "ping"}`)
const anthropicText = (text: string) =>
  event("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`) +
  event("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":${JSON.stringify(text)}}}`)
const anthropicToolUse = (index: number, id: string, json: string) =>
  event("content_block_start", `{"type":"content_block_start","index":${index},"content_block":{"type":"tool_use","id":"${id}","name":"get_weather","input":{}}}`) +
  event("content_block_delta", `{"type":"content_block_delta","index":${index},"delta":{"type":"input_json_delta","partial_json":${JSON.stringify(json)}}}`) +
  event("content_block_stop", `{"type":"content_block_stop","index":${index}}`)
const ANTHROPIC_END =
  event("content_block_stop", `{"type":"content_block_stop","index":0}`) +
  event("message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":2}}`) +
  event("message_stop", `{"type":"message_stop"}`)
const ANTHROPIC_TOOL_END =
  event("message_delta", `{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":20}}`) +
  event("message_stop", `{"type":"message_stop"}`)

const responsesEvent = (type: string, rest: string) => event(type, `{"type":"${type}",${rest}}`)
const RESPONSE = `{"id":"resp_1","object":"response","created_at":1767225600,"status":"in_progress","model":"gpt-4.1-mini-2025-04-14","output":[],"usage":null}`
const RESPONSES_CREATED = responsesEvent("response.created", `"response":${RESPONSE},"sequence_number":0`)
const responsesCall = (outputIndex: number, ids: string, args: string) =>
  responsesEvent(
    "response.output_item.added",
    `"output_index":${outputIndex},"item":{${ids}"type":"function_call","status":"in_progress","arguments":"","name":"get_weather"},"sequence_number":1`
  ) +
  responsesEvent("response.function_call_arguments.delta", `"output_index":${outputIndex},"delta":${JSON.stringify(args)},"sequence_number":2`) +
  responsesEvent(
    "response.output_item.done",
    `"output_index":${outputIndex},"item":{${ids}"type":"function_call","status":"completed","arguments":${JSON.stringify(args)},"name":"get_weather"},"sequence_number":3`
  )
const RESPONSES_TEXT =
  responsesEvent("response.output_item.added", `"output_index":0,"item":{"id":"msg_1","type":"message","status":"in_progress","content":[],"role":"assistant"},"sequence_number":1`) +
  responsesEvent("response.output_text.delta", `"item_id":"msg_1","output_index":0,"content_index":0,"delta":"Hello","sequence_number":2`) +
  responsesEvent("response.output_item.done", `"output_index":0,"item":{"id":"msg_1","type":"message","status":"completed","content":[],"role":"assistant"},"sequence_number":3`)
const RESPONSES_COMPLETED = responsesEvent(
  "response.completed",
  `"response":{"id":"resp_1","object":"response","status":"completed","output":[],"usage":{"input_tokens":10,"output_tokens":2,"total_tokens":12}},"sequence_number":9`
)

const geminiChunk = (parts: string, finish = "") =>
  event(
    undefined,
    `{"candidates": [{"content": {"parts": [${parts}],"role": "model"}${finish === "" ? "" : `,"finishReason": "${finish}"`},"index": 0}],"usageMetadata": {"promptTokenCount": 74,"candidatesTokenCount": 30,"totalTokenCount": 104},"modelVersion": "gemini-2.5-flash","responseId": "L2AaaZ"}`
  )

const PROVIDER = { chat: "openai", responses: "openai-responses", anthropic: "anthropic", gemini: "gemini" } as const
const BASE_PATH = { chat: "/v1", responses: "/v1", anthropic: "", gemini: "" } as const

const request: Request = { model: "m", items: [Item.userText("Weather in Paris and Tokyo?")], tools: [], config: {} }

const run = async (
  server: Hostile,
  scheme: keyof typeof PROVIDER,
  options: Partial<LlmClientOptions> = {}
): Promise<{ readonly events: ReadonlyArray<Event>; readonly error?: LlmError }> => {
  const client = createLlmClient({
    provider: PROVIDER[scheme],
    model: "m",
    apiKey: "test-key",
    baseUrl: `${server.baseUrl}${BASE_PATH[scheme]}`,
    retry: { sleep: async () => undefined },
    ...options
  })
  const events: Array<Event> = []
  try {
    for await (const each of client.stream(request)) events.push(each)
    return { events }
  } catch (error) {
    expect(isLlmError(error)).toBe(true)
    return { events, error: error as LlmError }
  }
}

/** The tool calls of a response, as (id, arguments) in block order. */
const calls = (events: ReadonlyArray<Event>): ReadonlyArray<{ readonly id: string; readonly args: string }> => {
  const byIndex = new Map<number, { id: string; args: string }>()
  for (const e of events) {
    if (e.type === "block_start" && e.block.kind === "tool_use") byIndex.set(e.index, { id: e.block.id, args: "" })
    if (e.type === "block_delta" && e.delta.kind === "input_json") {
      const call = byIndex.get(e.index)
      if (call !== undefined) call.args += e.delta.json
    }
  }
  return [...byIndex.values()]
}

const text = (events: ReadonlyArray<Event>): string =>
  events.map((e) => (e.type === "block_delta" && e.delta.kind === "text" ? e.delta.text : "")).join("")

// Deadlines far beyond the test's own timeout: if the client waited for one, the test would fail.
const PATIENT = { timeouts: { headersMs: 60_000, firstEventMs: 60_000, idleMs: 60_000 } }

describe("a terminal event completes the response, whatever the connection does next", () => {
  it.each([
    ["chat", CHAT_TEXT + CHAT_DONE],
    ["anthropic", MESSAGE_START + anthropicText("Hello") + ANTHROPIC_END],
    ["responses", RESPONSES_CREATED + RESPONSES_TEXT + RESPONSES_COMPLETED]
  ] as const)("%s: the answer is kept and the body is not read further", async (scheme, transcript) => {
    const server = await hostile(async (response) => {
      sse(response)
      await write(response, transcript)
      // … and the connection is left open, silent.
    })
    const { events, error } = await run(server, scheme, PATIENT)
    expect(error).toBeUndefined()
    expect(text(events)).toBe("Hello")
    expect(events.at(-1)).toMatchObject({ type: "status", status: "completed" })
    await server.allClosed() // the client hung up
  })

  it("stops at the terminal event even when the server keeps streaming after it", async () => {
    const server = await hostile(async (response) => {
      sse(response)
      await write(response, CHAT_TEXT + CHAT_DONE)
      await endless(response, () => chatChunk(`{"content":"junk"}`))
    })
    const { events, error } = await run(server, "chat", PATIENT)
    expect(error).toBeUndefined()
    expect(text(events)).toBe("Hello")
    await server.allClosed()
  })

  it.each([
    ["chat", CHAT_TEXT],
    ["gemini", geminiChunk(`{"text": "Hello"}`) + geminiChunk(`{"text": ""}`, "STOP")]
  ] as const)("%s: a whole response without its final marker is ended, not failed, when the stream goes quiet", async (scheme, transcript) => {
    const server = await hostile(async (response) => {
      sse(response)
      await write(response, transcript)
    })
    const { events, error } = await run(server, scheme, { timeouts: { idleMs: 200 } })
    expect(error).toBeUndefined()
    expect(text(events)).toBe("Hello")
    expect(events.at(-1)).toMatchObject({ type: "status", status: "completed", stopReason: "end_turn" })
    expect(server.requests()).toBe(1)
  })
})

describe("size limits per response", () => {
  const MiB = 1024 * 1024

  it("text: an endless answer fails with LlmLimitExceeded once past maxTextBytes, not retried", async () => {
    const server = await hostile(async (response) => {
      sse(response)
      await write(response, chatChunk(`{"role":"assistant","content":""}`))
      const piece = chatChunk(`{"content":${JSON.stringify("é".repeat(8192))}}`)
      await endless(response, () => piece)
    })
    const { events, error } = await run(server, "chat", { limits: { maxTextBytes: MiB } })
    expect(error).toMatchObject({ _tag: "LlmLimitExceeded", limit: "maxTextBytes", max: MiB })
    const seen = (error as Extract<LlmError, { _tag: "LlmLimitExceeded" }>).seen
    expect(seen).toBeGreaterThan(MiB)
    expect(seen).toBeLessThanOrEqual(MiB + 16384)
    expect(error?.message).toContain("maxTextBytes")
    // Nothing past the bound reached the consumer, and the open block was closed.
    expect(Buffer.byteLength(text(events))).toBeLessThanOrEqual(MiB)
    expect(events.some((e) => e.type === "block_abort")).toBe(true)
    expect(server.requests()).toBe(1)
    await server.allClosed()
  })

  it("arguments: one call's endless argument text is cut at maxArgumentBytes", async () => {
    const server = await hostile(async (response) => {
      sse(response)
      await write(
        response,
        chatChunk(`{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"get_weather","arguments":""}}]}`)
      )
      const piece = chatChunk(`{"tool_calls":[{"index":0,"function":{"arguments":${JSON.stringify(`[${"1,".repeat(4096)}`)}}}]}`)
      await endless(response, () => piece)
    })
    const { error } = await run(server, "chat", { limits: { maxArgumentBytes: 256 * 1024 } })
    expect(error).toMatchObject({ _tag: "LlmLimitExceeded", limit: "maxArgumentBytes", max: 256 * 1024 })
    expect(server.requests()).toBe(1)
  })

  it("arguments sent before the call's name are bounded too", async () => {
    const server = await hostile(async (response) => {
      sse(response)
      const piece = chatChunk(`{"tool_calls":[{"index":0,"function":{"arguments":${JSON.stringify("x".repeat(8192))}}}]}`)
      await endless(response, () => piece)
    })
    const { error } = await run(server, "chat", { limits: { maxArgumentBytes: 256 * 1024 } })
    expect(error).toMatchObject({ _tag: "LlmLimitExceeded", limit: "maxArgumentBytes" })
  })

  it("reasoning: endless thinking fails at maxReasoningBytes", async () => {
    const server = await hostile(async (response) => {
      sse(response)
      await write(response, MESSAGE_START + event("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}`))
      const piece = event("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":${JSON.stringify("hmm ".repeat(2048))}}}`)
      await endless(response, () => piece)
    })
    const { error } = await run(server, "anthropic", { limits: { maxReasoningBytes: 512 * 1024 } })
    expect(error).toMatchObject({ _tag: "LlmLimitExceeded", limit: "maxReasoningBytes", max: 512 * 1024 })
  })

  it("reasoning: an endless signature is bounded as it accumulates", async () => {
    const server = await hostile(async (response) => {
      sse(response)
      await write(response, MESSAGE_START + event("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}`))
      const piece = event("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"${"A".repeat(8192)}"}}`)
      await endless(response, () => piece)
    })
    const { error } = await run(server, "anthropic", { limits: { maxReasoningBytes: 512 * 1024 } })
    expect(error).toMatchObject({ _tag: "LlmLimitExceeded", limit: "maxReasoningBytes" })
  })

  it.each([
    ["a data line", "data: "],
    ["a comment line", ": "]
  ])("one SSE event: %s that never ends cannot grow the buffer past maxEventChars", async (_, start) => {
    const server = await hostile(async (response) => {
      sse(response)
      await write(response, start)
      const piece = "y".repeat(16384)
      await endless(response, () => piece)
    })
    const { error } = await run(server, "chat", { limits: { maxEventChars: MiB } })
    expect(error).toMatchObject({ _tag: "LlmLimitExceeded", limit: "maxEventChars", max: MiB })
    expect(server.requests()).toBe(1)
  })

  it("refuses a limit that is not a positive number", () => {
    expect(() => createLlmClient({ provider: "openai", model: "m", apiKey: "k", limits: { maxTextBytes: 0 } })).toThrow(/limits\.maxTextBytes/)
  })
})

describe("keep-alives satisfy no deadline", () => {
  it("a flood of Anthropic pings after message_start: the first-content deadline still fires", async () => {
    const server = await hostile(async (response) => {
      sse(response)
      await write(response, MESSAGE_START)
      const pings = PING.repeat(64)
      await endless(response, () => pings)
    })
    const { events, error } = await run(server, "anthropic", { retry: { maxRetries: 0 }, timeouts: { firstEventMs: 300 } })
    expect(error).toMatchObject({ _tag: "LlmTimeout", phase: "first_event", afterMs: 300 })
    // Nothing was held back for the consumer: no ping (and no "started" without content) came out.
    expect(events.filter((e) => e.type === "ping")).toHaveLength(0)
    await server.allClosed()
  })

  it("comments, empty events and empty chunks before content: the first-content deadline fires", async () => {
    const server = await hostile(async (response) => {
      sse(response)
      const noise = ": keep-alive\n\n" + "data:\n\n" + "data: \n\n" + chatChunk(`{"role":"assistant","content":""}`) + chatChunk(`{}`)
      await endless(response, () => noise)
    })
    const { error } = await run(server, "chat", { retry: { maxRetries: 0 }, timeouts: { firstEventMs: 300 } })
    expect(error).toMatchObject({ _tag: "LlmTimeout", phase: "first_event", afterMs: 300 })
  })

  it("pings after content do not re-arm the idle deadline", async () => {
    const server = await hostile(async (response) => {
      sse(response)
      await write(response, MESSAGE_START + anthropicText("Hel"))
      await endless(response, () => PING)
    })
    const { events, error } = await run(server, "anthropic", { timeouts: { idleMs: 300 } })
    expect(error).toMatchObject({ _tag: "LlmTimeout", phase: "idle", afterMs: 300 })
    expect(text(events)).toBe("Hel")
    expect(server.requests()).toBe(1)
  })

  it("the total deadline bounds a stream that keeps making progress", async () => {
    const server = await hostile(async (response) => {
      sse(response)
      await write(response, chatChunk(`{"role":"assistant","content":""}`))
      while (await write(response, chatChunk(`{"content":"more "}`))) await new Promise((resolve) => setTimeout(resolve, 10))
    })
    const { events, error } = await run(server, "chat", { timeouts: { totalMs: 400, idleMs: 60_000 } })
    expect(error).toMatchObject({ _tag: "LlmTimeout", phase: "total", afterMs: 400 })
    expect(text(events).length).toBeGreaterThan(0)
    expect(server.requests()).toBe(1)
  })

  it("the total deadline covers retries and back-off", async () => {
    const server = await hostile((response) => {
      response.writeHead(503, { "content-type": "application/json" }).end(`{"error":{"message":"busy","type":"server_error"}}`)
    })
    const { error } = await run(server, "chat", {
      // Long enough for the first 503 to arrive on a loaded machine, so the deadline's message can name it.
      timeouts: { totalMs: 1_500 },
      retry: { maxRetries: 1_000_000, baseDelayMs: 20, maxDelayMs: 20 }
    })
    expect(error).toMatchObject({ _tag: "LlmTimeout", phase: "total", afterMs: 1_500 })
    expect(error?.message).toContain("HTTP 503")
  })
})

describe("a success that is not an event stream", () => {
  it("an HTML proxy page is a protocol error naming the type and the first bytes, neutralised, not retried", async () => {
    const page = `<!DOCTYPE html>\n<html><head><title>\u001b[2J\u001b]52;c;ZXZpbA==\u0007Gateway\u202e</title></head><body>${"x".repeat(10_000)}</body></html>`
    const server = await hostile((response) => {
      response.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(page)
    })
    const { events, error } = await run(server, "chat")
    expect(error).toMatchObject({ _tag: "LlmProtocolError" })
    expect(error?.message).toContain('Content-Type "text/html; charset=utf-8"')
    expect(error?.message).toContain("<!DOCTYPE html>\\u000a<html><head><title>\\u001b[2J\\u001b]52;c;ZXZpbA==\\u0007Gateway\\u202e")
    expect(error?.message).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u202a-\u202e]/)
    expect(error?.message.length).toBeLessThan(600)
    expect(events).toEqual([])
    expect(server.requests()).toBe(1)
  })

  it("a JSON body is still reported with its text", async () => {
    const server = await hostile((response) => {
      response.writeHead(200, { "content-type": "application/json" }).end(`{"error":{"message":"quota","type":"insufficient_quota"}}`)
    })
    const { error } = await run(server, "chat")
    expect(error).toMatchObject({ _tag: "LlmProtocolError" })
    expect(error?.message).toContain(`"insufficient_quota"`)
    expect(server.requests()).toBe(1)
  })
})

describe("every call of a response has its own id and its own arguments", () => {
  const serve = (transcript: string) =>
    hostile(async (response) => {
      sse(response)
      await write(response, transcript)
      response.end()
    })

  it("chat: two calls under one id", async () => {
    const server = await serve(
      chatChunk(`{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"get_weather","arguments":""}}]}`) +
        chatChunk(`{"tool_calls":[{"index":0,"function":{"arguments":"{\\"city\\":\\"Paris\\"}"}}]}`) +
        chatChunk(`{"tool_calls":[{"index":1,"id":"call_1","type":"function","function":{"name":"get_weather","arguments":""}}]}`) +
        chatChunk(`{"tool_calls":[{"index":1,"function":{"arguments":"{\\"city\\":\\"Tokyo\\"}"}}]}`) +
        chatChunk(`{}`, `"tool_calls"`) +
        CHAT_DONE
    )
    const { events, error } = await run(server, "chat")
    expect(error).toBeUndefined()
    expect(calls(events)).toEqual([
      { id: "call_1", args: `{"city":"Paris"}` },
      { id: "call_1_2", args: `{"city":"Tokyo"}` }
    ])
  })

  it("anthropic: two tool_use blocks under one id", async () => {
    const server = await serve(
      MESSAGE_START +
        anthropicToolUse(0, "toolu_01A", `{"location": "Paris"}`) +
        anthropicToolUse(1, "toolu_01A", `{"location": "Tokyo"}`) +
        anthropicToolUse(2, "toolu_01A_2", `{"location": "Oslo"}`) +
        ANTHROPIC_TOOL_END
    )
    const { events, error } = await run(server, "anthropic")
    expect(error).toBeUndefined()
    const got = calls(events)
    expect(got.map((c) => c.args)).toEqual([`{"location": "Paris"}`, `{"location": "Tokyo"}`, `{"location": "Oslo"}`])
    expect(new Set(got.map((c) => c.id)).size).toBe(3)
    expect(got.map((c) => c.id).every((id) => /^[a-zA-Z0-9_-]+$/.test(id))).toBe(true)
    expect(got[0]?.id).toBe("toolu_01A")
  })

  it("responses: two calls under one call_id, and calls without any id", async () => {
    const server = await serve(
      RESPONSES_CREATED +
        responsesCall(0, `"id":"fc_1","call_id":"call_X",`, `{"city":"Paris"}`) +
        responsesCall(1, `"id":"fc_2","call_id":"call_X",`, `{"city":"Tokyo"}`) +
        responsesCall(2, "", `{"city":"Oslo"}`) +
        responsesCall(3, "", `{"city":"Rome"}`) +
        RESPONSES_COMPLETED
    )
    const { events, error } = await run(server, "responses")
    expect(error).toBeUndefined()
    const got = calls(events)
    expect(got.map((c) => c.args)).toEqual([`{"city":"Paris"}`, `{"city":"Tokyo"}`, `{"city":"Oslo"}`, `{"city":"Rome"}`])
    expect(got[0]?.id).toBe("call_X")
    expect(got[1]?.id).toBe("call_X_2")
    expect(got[2]?.id).toMatch(/^call_[0-9a-f]{8}_\d+$/)
    expect(new Set(got.map((c) => c.id)).size).toBe(4)
  })

  it("gemini: a repeated id becomes a generated one, never sent back", async () => {
    const server = await serve(
      geminiChunk(`{"functionCall": {"id": "fc_1", "name": "get_weather","args": {"location": "Paris"}}},{"functionCall": {"id": "fc_1", "name": "get_weather","args": {"location": "Tokyo"}}}`, "STOP")
    )
    const { events, error } = await run(server, "gemini")
    expect(error).toBeUndefined()
    const got = calls(events)
    expect(got[0]).toEqual({ id: "fc_1", args: `{"location":"Paris"}` })
    expect(got[1]?.id).toMatch(/^llmw_gemini_/)
    expect(got[1]?.args).toBe(`{"location":"Tokyo"}`)
  })

  it("gemini: arguments nested thousands of levels deep are decoded without overflowing", async () => {
    const depth = 20_000
    const deep = `${`{"a":`.repeat(depth)}1${"}".repeat(depth)}`
    const server = await serve(geminiChunk(`{"functionCall": {"name": "get_weather","args": ${deep}}}`, "STOP"))
    const { events, error } = await run(server, "gemini")
    expect(error).toBeUndefined()
    expect(calls(events)[0]?.args).toBe(deep)
  })

  it("anthropic: a second message (another id) spliced into the response is a protocol error; no call completes", async () => {
    const spliced = readFileSync(new URL("../fixtures/sse/anthropic/spliced-message-start.sse", import.meta.url), "utf8")
    const server = await serve(spliced)
    const { events, error } = await run(server, "anthropic")
    expect(error).toMatchObject({ _tag: "LlmProtocolError" })
    expect(error?.message).toContain("a second message_start")
    expect(events.filter((e) => e.type === "block_stop").map((e) => e.index)).toEqual([0])
    expect(events.filter((e) => e.type === "block_abort").map((e) => e.index)).toEqual([1])
    expect(server.requests()).toBe(1)
  })

  it("anthropic: a block opened twice is a protocol error, not a dangling call", async () => {
    const server = await serve(
      MESSAGE_START +
        event("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_1","name":"get_weather","input":{}}}`) +
        anthropicToolUse(0, "toolu_2", "{}") +
        ANTHROPIC_TOOL_END
    )
    const { events, error } = await run(server, "anthropic")
    expect(error).toMatchObject({ _tag: "LlmProtocolError" })
    expect(error?.message).toContain("already open")
    const started = events.filter((e) => e.type === "block_start").map((e) => e.index)
    const closed = events.filter((e) => e.type === "block_stop" || e.type === "block_abort").map((e) => e.index)
    expect(closed).toEqual(started)
    expect(server.requests()).toBe(1)
  })
})
