import { EventEmitter } from "node:events"
import { afterEach, beforeEach, expect } from "vitest"
import { type Item, type LlmClient, type Timeouts, createLlmClient, isWorkerError } from "../../../src/index.ts"
import { type HostileProvider, type Reply, startHostileProvider } from "./hostile-provider.ts"
import { type HostileScheme, PROVIDER_OF } from "./wire.ts"

/**
 * Shared checks of the hostile suite: clients pointed at the hostile provider the way a user would (the
 * provider's base-URL and key variables), bounded waits that turn a hang into a readable failure, the
 * unhandled-rejection watch, and the history / next-request well-formedness rules.
 */

/**
 * A deadline far above any honest run here on a loaded 2-core machine (the runs that wait for a deadline use
 * deadlines of a few hundred ms); only a hang reaches it, and then the test fails saying so instead of timing out.
 */
export const HANG_MS = 8_000

/** A client for `scheme`'s built-in provider, configured through its environment variables, without retries. */
export const clientFor = (
  scheme: HostileScheme,
  server: HostileProvider,
  options: { readonly timeouts?: Partial<Timeouts>; readonly maxRetries?: number } = {}
): LlmClient => {
  const { provider, baseUrlEnv, keyEnv } = PROVIDER_OF[scheme]
  return createLlmClient({
    provider,
    model: scheme === "anthropic" ? "claude-sonnet-4-5" : scheme === "gemini" ? "gemini-2.5-flash" : "gpt-4.1-mini",
    env: { [baseUrlEnv]: server.baseUrl, [keyEnv]: "hostile-test-key" },
    // Fast retries when a test allows them: the point is how many happen, not how long they wait.
    retry: { maxRetries: options.maxRetries ?? 0, baseDelayMs: 1, maxDelayMs: 2, maxRetryAfterMs: 2 },
    ...(options.timeouts === undefined ? {} : { timeouts: options.timeouts })
  })
}

export type Settled<T> =
  | { readonly kind: "resolved"; readonly value: T }
  | { readonly kind: "rejected"; readonly error: unknown }
  | { readonly kind: "hung" }

/** Tells pending `settle` calls that an unhandled rejection happened (see `watchUnhandled`). */
const unhandledSignal = new EventEmitter()

/** How long a run may still take to settle after an unhandled rejection before it counts as hung. */
const AFTER_UNHANDLED_MS = 500

/**
 * Waits for `promise` at most `ms`; a run still pending then is reported as hung instead of timing the test out,
 * and `onHang` (typically `worker.cancel`) is called so the hung run does not outlive its test.
 */
export const settle = async <T>(promise: Promise<T>, ms = HANG_MS, onHang?: () => void): Promise<Settled<T>> => {
  let timer: ReturnType<typeof setTimeout> | undefined
  // A failure path that throws inside a rejection handler leaves the run pending forever and reports an
  // unhandled rejection: from then on the run gets a short grace instead of the whole hang guard.
  let onUnhandled: (() => void) | undefined
  const hung = new Promise<Settled<T>>((resolve) => {
    timer = setTimeout(() => resolve({ kind: "hung" }), ms)
    onUnhandled = () => {
      clearTimeout(timer)
      timer = setTimeout(() => resolve({ kind: "hung" }), AFTER_UNHANDLED_MS)
    }
    unhandledSignal.once("unhandled", onUnhandled)
  })
  try {
    return await Promise.race([
      promise.then(
        (value): Settled<T> => ({ kind: "resolved", value }),
        (error: unknown): Settled<T> => ({ kind: "rejected", error })
      ),
      hung.then((result) => {
        onHang?.()
        return result
      })
    ])
  } finally {
    clearTimeout(timer)
    if (onUnhandled !== undefined) unhandledSignal.off("unhandled", onUnhandled)
  }
}

/** `settle` for a worker run: a hung run is cancelled. */
export const settleRun = <T>(worker: { cancel(): void }, promise: Promise<T>, ms = HANG_MS): Promise<Settled<T>> =>
  settle(promise, ms, () => {
    try {
      worker.cancel()
    } catch {
      // a worker that cannot even be cancelled has already failed the assertion that follows
    }
  })

/** Describes a settled run for assertion messages (never throws on hostile values). */
export const show = (settled: Settled<unknown>): string => {
  try {
    if (settled.kind === "hung") return "the run did not settle"
    if (settled.kind === "resolved") return `resolved: ${JSON.stringify((settled.value as { status?: unknown }).status)}`
    const error = settled.error as { _tag?: unknown; message?: unknown }
    return `rejected: ${String(error?._tag)} ${String(error?.message).slice(0, 300)}`
  } catch {
    return `${settled.kind} (undescribable)`
  }
}

/** The run settled, and if it rejected, with a `WorkerError`. */
export const expectSettledAsWorker = (settled: Settled<unknown>): void => {
  expect(settled.kind, show(settled)).not.toBe("hung")
  if (settled.kind === "rejected") expect(isWorkerError(settled.error), show(settled)).toBe(true)
}

/**
 * Unhandled rejections and uncaught exceptions seen while a test runs. Installed per test file; vitest still
 * reports them itself, this makes the failing test say so.
 */
export const watchUnhandled = (): { readonly seen: Array<unknown> } => {
  const state = { seen: [] as Array<unknown> }
  const onRejection = (reason: unknown): void => {
    state.seen.push(reason)
    unhandledSignal.emit("unhandled")
  }
  beforeEach(() => {
    state.seen.length = 0
    process.on("unhandledRejection", onRejection)
    process.on("uncaughtException", onRejection)
  })
  afterEach(async () => {
    // Rejections are reported after a macrotask; let any pending one surface before checking.
    await new Promise((resolve) => setTimeout(resolve, 20))
    process.off("unhandledRejection", onRejection)
    process.off("uncaughtException", onRejection)
    expect(state.seen.map((reason) => describeSafely(reason)), "unhandled rejections / uncaught exceptions").toEqual([])
  })
  return state
}

const describeSafely = (value: unknown): string => {
  try {
    return value instanceof Error ? `${value.name}: ${value.message}` : String(value)
  } catch {
    return "(a value that cannot be described)"
  }
}

/** Every call in `history` has a non-empty unique id and exactly one result, and every result answers a call. */
export const expectOneResultPerCall = (history: ReadonlyArray<Item>): void => {
  const calls = history.filter((item) => item.type === "function_call")
  const outputs = history.filter((item) => item.type === "function_call_output")
  const callIds = calls.map((call) => call.callId)
  expect(callIds.every((id) => id !== ""), "every call has an id").toBe(true)
  expect(new Set(callIds).size, "call ids are unique").toBe(callIds.length)
  const outputIds = outputs.map((output) => output.callId)
  expect(new Set(outputIds).size, "one result per call id").toBe(outputIds.length)
  expect([...outputIds].sort(), "every call has exactly one result").toEqual([...callIds].sort())
}

/** The tool calls and results one request body carries, in order, read from the scheme's wire format. */
export interface Exchange {
  readonly calls: ReadonlyArray<string>
  readonly results: ReadonlyArray<string>
  /** Whether every batch of results directly follows the calls it answers, as each provider requires. */
  readonly adjacent: boolean
}

type Json = Record<string, unknown>
const records = (value: unknown): ReadonlyArray<Json> =>
  Array.isArray(value) ? value.filter((v): v is Json => typeof v === "object" && v !== null) : []

/** Reads the tool exchange out of a request body the client sent to the hostile provider. */
export const exchangeOf = (scheme: HostileScheme, body: string): Exchange => {
  const request = JSON.parse(body) as Json
  const calls: Array<string> = []
  const results: Array<string> = []
  let adjacent = true
  switch (scheme) {
    case "openai-chat": {
      const messages = records(request["messages"])
      messages.forEach((message, i) => {
        const ids = records(message["tool_calls"]).map((call) => String(call["id"]))
        if (ids.length === 0) return
        calls.push(...ids)
        const answered = messages.slice(i + 1, i + 1 + ids.length)
        if (!answered.every((m) => m["role"] === "tool")) adjacent = false
      })
      for (const message of messages) if (message["role"] === "tool") results.push(String(message["tool_call_id"]))
      break
    }
    case "openai-responses": {
      for (const item of records(request["input"])) {
        if (item["type"] === "function_call") calls.push(String(item["call_id"]))
        if (item["type"] === "function_call_output") results.push(String(item["call_id"]))
      }
      break
    }
    case "anthropic": {
      const messages = records(request["messages"])
      messages.forEach((message, i) => {
        const ids = records(message["content"])
          .filter((block) => block["type"] === "tool_use")
          .map((block) => String(block["id"]))
        calls.push(...ids)
        if (ids.length === 0) return
        const next = records(messages[i + 1]?.["content"])
          .filter((block) => block["type"] === "tool_result")
          .map((block) => String(block["tool_use_id"]))
        if ([...next].sort().join("\n") !== [...ids].sort().join("\n")) adjacent = false
      })
      for (const message of messages) {
        for (const block of records(message["content"])) if (block["type"] === "tool_result") results.push(String(block["tool_use_id"]))
      }
      break
    }
    case "gemini": {
      // Gemini pairs responses with calls by name and position within the next content, not by id.
      const contents = records(request["contents"])
      contents.forEach((content, i) => {
        const named = records(content["parts"]).flatMap((part) => records([part["functionCall"]]).map((call) => String(call["name"])))
        if (named.length === 0) return
        named.forEach((name, n) => calls.push(`${i}:${n}:${name}`))
        const answers = records(contents[i + 1]?.["parts"]).flatMap((part) => records([part["functionResponse"]]).map((r) => String(r["name"])))
        answers.forEach((name, n) => results.push(`${i}:${n}:${name}`))
        if (answers.join("\n") !== named.join("\n")) adjacent = false
      })
      break
    }
  }
  return { calls, results, adjacent }
}

/** What would be sent back to the provider is acceptable to it: unique call ids, each answered once, in place. */
export const expectWellFormedExchange = (scheme: HostileScheme, body: string): Exchange => {
  const exchange = exchangeOf(scheme, body)
  expect(new Set(exchange.calls).size, `${scheme}: call ids sent back are unique`).toBe(exchange.calls.length)
  expect(new Set(exchange.results).size, `${scheme}: each call is answered once`).toBe(exchange.results.length)
  expect([...exchange.results].sort(), `${scheme}: results answer exactly the calls`).toEqual([...exchange.calls].sort())
  expect(exchange.adjacent, `${scheme}: results follow their calls`).toBe(true)
  return exchange
}

/** The text of a request the worker would send next (for a test that stops before sending it). */
export const nextRequestBody = (client: LlmClient, history: ReadonlyArray<Item>): string =>
  client.encodeRequest({ model: client.model, items: [...history], tools: [], config: {} })

/** Starts hostile providers for the calling file's tests and closes every one after each test. */
export const hostileServers = (): ((scheme: HostileScheme, script: ReadonlyArray<Reply>) => Promise<HostileProvider>) => {
  const servers: Array<HostileProvider> = []
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((server) => server.close()))
  })
  return async (scheme, script) => {
    const server = await startHostileProvider(scheme, script)
    servers.push(server)
    return server
  }
}
