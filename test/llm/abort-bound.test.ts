/**
 * Deadlines and cancels hold when `fetch` never hears of the abort (decision 0092): the transport's
 * `AttemptAbort`, and `fetchBoundByAbort` / `readCapped` for the plugin side's requests.
 *
 * Node's fetch can lose the link between the caller's signal and the request once a collection has run
 * (nodejs/undici#3644): CI saw a stream of keep-alives outlive its 300 ms first-content deadline by 8 s, the
 * deadline's timer having fired. The fetch here models that loss exactly and every time: it passes the request on
 * without the signal. Real loopback servers; each test checks the call ends with the right typed error and that
 * the connection is released.
 */
import { createServer } from "node:http"
import type { Server, ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { afterEach, describe, expect, it } from "vitest"
import type { Event } from "../../src/llm/event.ts"
import { Item } from "../../src/llm/item.ts"
import type { Request } from "../../src/llm/request.ts"
import { openAiChatScheme } from "../../src/llm/schemes/openai-chat.ts"
import { fetchBoundByAbort } from "../../src/llm/transport/abort-bound.ts"
import { AttemptAbort } from "../../src/llm/transport/attempt-abort.ts"
import { readCapped } from "../../src/llm/transport/read-capped.ts"
import { defaultRetryPolicy } from "../../src/llm/transport/retry-policy.ts"
import { streamSse } from "../../src/llm/transport/sse-transport.ts"
import type { TransportOptions } from "../../src/llm/transport/sse-transport.ts"
import { defaultTimeouts } from "../../src/llm/transport/timeouts.ts"
import type { Timeouts } from "../../src/llm/transport/timeouts.ts"

/** A fetch that never hears of an abort: the request goes out without the caller's signal. */
const deafFetch: typeof globalThis.fetch = (input, init) => {
  const { signal: _dropped, ...rest } = init ?? {}
  return globalThis.fetch(input, rest)
}

const request: Request = { model: "gpt-4o-mini", items: [Item.userText("hi")], tools: [], config: {} }
const role = `data: {"id":"c1","object":"chat.completion.chunk","created":1730000000,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}\n\n`
const text = (piece: string) =>
  `data: {"id":"c1","object":"chat.completion.chunk","created":1730000000,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"content":${JSON.stringify(piece)}},"finish_reason":null}]}\n\n`

interface Served {
  readonly url: string
  /** Settles when the connection of the n-th request closes. */
  disconnected(n: number): Promise<void>
}

let server: Server | undefined
afterEach(async () => {
  server?.closeAllConnections()
  await new Promise<void>((resolve) => (server === undefined ? resolve() : server.close(() => resolve())))
  server = undefined
})

const serve = async (reply: (response: ServerResponse) => void): Promise<Served> => {
  const closed: Array<Promise<void>> = []
  server = createServer((incoming, response) => {
    closed.push(new Promise((resolve) => response.once("close", () => resolve())))
    incoming.resume()
    incoming.once("end", () => reply(response))
  })
  await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/v1/chat/completions`,
    disconnected: async (n) => {
      while (closed[n] === undefined) await new Promise((resolve) => setTimeout(resolve, 5))
      return closed[n]
    }
  }
}

const sseHead = (response: ServerResponse) => response.writeHead(200, { "content-type": "text/event-stream" })

/** Keep-alive comments every 5 ms after `prefix`, until the client hangs up. */
const keepAlives =
  (prefix: string) =>
  (response: ServerResponse): void => {
    sseHead(response)
    response.write(prefix)
    const every = setInterval(() => response.write(": keep-alive\n\n"), 5)
    response.once("close", () => clearInterval(every))
  }

const run = async (url: string, timeouts: Partial<Timeouts>, signal?: AbortSignal, onEvent?: (event: Event) => void) => {
  const options: TransportOptions = {
    retry: { ...defaultRetryPolicy, maxRetries: 0 },
    timeouts: { ...defaultTimeouts, ...timeouts },
    fetch: deafFetch,
    maxErrorBodyBytes: 1024
  }
  const events: Array<Event> = []
  const started = performance.now()
  try {
    for await (const event of streamSse({ url, headers: {}, body: "{}", decoder: () => openAiChatScheme.decoder(request) }, options, signal)) {
      events.push(event)
      onEvent?.(event)
    }
    return { events, error: undefined, ms: performance.now() - started }
  } catch (error) {
    return { events, error: error as { _tag?: string; phase?: string }, ms: performance.now() - started }
  }
}

describe("streamSse with a fetch that never hears of the abort", () => {
  it("keep-alives forever before content: the first-content deadline ends the call and the connection", async () => {
    const served = await serve(keepAlives(role))
    const { error, ms } = await run(served.url, { firstEventMs: 150 })
    expect(error).toMatchObject({ _tag: "LlmTimeout", phase: "first_event" })
    // Far under the 60 s test timeout, which is where the call would otherwise end.
    expect(ms).toBeLessThan(10_000)
    await served.disconnected(0)
  })

  it("keep-alives forever after content: the idle deadline ends the call, the open block is closed", async () => {
    const served = await serve(keepAlives(role + text("partial")))
    const { events, error } = await run(served.url, { idleMs: 150 })
    expect(error).toMatchObject({ _tag: "LlmTimeout", phase: "idle" })
    expect(events.filter((event) => event.type === "block_start")).toHaveLength(1)
    expect(events.filter((event) => event.type === "block_stop" || event.type === "block_abort")).toHaveLength(1)
    await served.disconnected(0)
  })

  it("a cancel mid-stream ends the call as cancelled and hangs up", async () => {
    const served = await serve(keepAlives(role + text("partial")))
    const controller = new AbortController()
    const { events, error } = await run(served.url, {}, controller.signal, (event) => {
      if (event.type === "block_delta") setTimeout(() => controller.abort(), 20)
    })
    expect(error?._tag).toBe("LlmCancelled")
    expect(events.some((event) => event.type === "block_delta")).toBe(true)
    await served.disconnected(0)
  })

  it("headers withheld: the headers deadline ends the call; the late answer's body is cancelled", async () => {
    const served = await serve((response) => {
      setTimeout(() => keepAlives(role)(response), 400)
    })
    const { error } = await run(served.url, { headersMs: 100 })
    expect(error).toMatchObject({ _tag: "LlmTimeout", phase: "headers" })
    await served.disconnected(0)
  })

  it("an error body that stops half way: the idle deadline ends reading it", async () => {
    const served = await serve((response) => {
      response.writeHead(500, { "content-type": "application/json" })
      response.write(`{"error":{"message":"upstream`)
    })
    const { error } = await run(served.url, { idleMs: 150 })
    expect(error).toMatchObject({ _tag: "LlmTimeout", phase: "idle" })
    await served.disconnected(0)
  })
})

describe("fetchBoundByAbort", () => {
  it("rejects with the signal's reason when the signal was aborted already, and cancels the late body", async () => {
    let cancelled: unknown
    const late = new Response(new ReadableStream({ cancel: (reason) => void (cancelled = reason) }))
    const reason = new Error("stop")
    await expect(fetchBoundByAbort(async () => late, "http://127.0.0.1:9/", { signal: AbortSignal.abort(reason) })).rejects.toBe(reason)
    await new Promise((resolve) => setTimeout(resolve, 0))
    expect(cancelled).toBe(reason)
  })

  it("passes the answer or the failure through when no abort comes", async () => {
    const answer = new Response("ok")
    expect(await fetchBoundByAbort(async () => answer, "http://127.0.0.1:9/", { signal: new AbortController().signal })).toBe(answer)
    const failure = new TypeError("fetch failed")
    await expect(fetchBoundByAbort(() => Promise.reject(failure), "http://127.0.0.1:9/", {})).rejects.toBe(failure)
  })
})

describe("a hostile fetch's late answer", () => {
  /** Late answers that break the usual ways: a throwing `body` getter, a cancel that throws or rejects, not a Response. */
  const hostileAnswers = (): ReadonlyArray<unknown> => [
    Object.defineProperty({}, "body", { get: () => { throw new Error("body getter") } }),
    { body: { cancel: () => { throw new Error("cancel throws") } } },
    { body: { cancel: () => Promise.reject(new Error("cancel rejects")) } },
    "not a response",
    null
  ]

  it("fetchBoundByAbort: after an abort, nothing of a hostile late answer escapes (no unhandled rejection)", async () => {
    for (const late of hostileAnswers()) {
      let answer!: (value: unknown) => void
      const controller = new AbortController()
      const pending = fetchBoundByAbort(() => new Promise<unknown>((resolve) => (answer = resolve)) as Promise<Response>, "http://127.0.0.1:9/", { signal: controller.signal })
      controller.abort(new Error("stop"))
      await expect(pending).rejects.toThrow("stop")
      answer(late)
      await new Promise((resolve) => setTimeout(resolve, 5))
    }
  })

  it("AttemptAbort: after an abort, nothing of a hostile late answer escapes; a plain value is the answer", async () => {
    for (const late of hostileAnswers()) {
      let answer!: (value: unknown) => void
      const attempt = new AttemptAbort()
      const pending = attempt.fetch(() => new Promise<unknown>((resolve) => (answer = resolve)) as Promise<Response>, "http://127.0.0.1:9/", {})
      attempt.abort(new Error("stop"))
      await expect(pending).rejects.toThrow("stop")
      answer(late)
      await new Promise((resolve) => setTimeout(resolve, 5))
    }
    const plain = new Response("")
    expect(await new AttemptAbort().fetch((() => plain) as unknown as typeof fetch, "http://127.0.0.1:9/", {})).toBe(plain)
    expect(await fetchBoundByAbort((() => plain) as unknown as typeof fetch, "http://127.0.0.1:9/", { signal: new AbortController().signal })).toBe(plain)
  })
})

describe("AttemptAbort", () => {
  it("an abort rejects the pending fetch with its reason and cancels the answer that arrives later", async () => {
    let cancelled: unknown
    let answer!: (response: Response) => void
    const attempt = new AttemptAbort()
    const pending = attempt.fetch(() => new Promise<Response>((resolve) => (answer = resolve)), "http://127.0.0.1:9/", { method: "POST" })
    const reason = new Error("deadline")
    attempt.abort(reason)
    await expect(pending).rejects.toBe(reason)
    answer(new Response(new ReadableStream({ cancel: (why) => void (cancelled = why) })))
    await new Promise((resolve) => setTimeout(resolve, 0))
    expect(cancelled).toBe(reason)
  })

  it("after an abort no request is sent; the first abort's reason stays", async () => {
    const attempt = new AttemptAbort()
    const first = new Error("first")
    attempt.abort(first)
    attempt.abort(new Error("second"))
    let sent = 0
    await expect(attempt.fetch(async () => (sent++, new Response("")), "http://127.0.0.1:9/", {})).rejects.toBe(first)
    expect(sent).toBe(0)
    expect(attempt.signal.reason).toBe(first)
  })

  it("hands fetch its signal, and an abort cancels the watched reader: a pending read reports done", async () => {
    const attempt = new AttemptAbort()
    let seen: AbortSignal | null | undefined
    const response = await attempt.fetch(
      async (_input, init) => ((seen = init?.signal), new Response(new ReadableStream<Uint8Array>())),
      "http://127.0.0.1:9/",
      {}
    )
    expect(seen).toBe(attempt.signal)
    const reader = response.body!.getReader()
    attempt.watch(reader)
    const read = reader.read()
    attempt.abort()
    expect(await read).toEqual({ done: true, value: undefined })
    expect(attempt.signal.aborted).toBe(true)
  })
})

describe("readCapped with a signal", () => {
  it("rejects with the signal's reason while the body is silent, and cancels the body", async () => {
    let cancelled = false
    const silent = new ReadableStream<Uint8Array>({
      start: (controller) => controller.enqueue(new TextEncoder().encode("partial")),
      cancel: () => void (cancelled = true)
    })
    const reason = new Error("deadline")
    const controller = new AbortController()
    setTimeout(() => controller.abort(reason), 30)
    await expect(readCapped(silent, 1024, controller.signal)).rejects.toBe(reason)
    expect(cancelled).toBe(true)
  })
})
