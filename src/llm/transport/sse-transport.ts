import type { Event } from "../event.ts"
import {
  LlmCancelled,
  LlmHttpError,
  LlmNetworkError,
  LlmProtocolError,
  LlmProviderError,
  LlmTimeout,
  isLlmError
} from "../llm-error.ts"
import type { LlmError } from "../llm-error.ts"
import type { StreamDecoder } from "../scheme.ts"
import { createSseParser } from "../sse.ts"
import { readCapped } from "./read-capped.ts"
import { backoffDelayMs, isRetryableStatus, isTransientErrorCode, retryAfterMs } from "./retry-policy.ts"
import type { RetryPolicy } from "./retry-policy.ts"
import { PhaseTimer } from "./timeouts.ts"
import type { Timeouts } from "./timeouts.ts"

/** One provider call: where to POST what, and a fresh decoder per attempt (decoders are stateful). */
export interface SseCall {
  readonly url: string
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
  readonly decoder: () => StreamDecoder
}

export interface TransportOptions {
  readonly retry: RetryPolicy
  readonly timeouts: Timeouts
  readonly fetch: typeof globalThis.fetch
  /** Bytes of a non-success body kept in `LlmHttpError.body`. */
  readonly maxErrorBodyBytes: number
}

/** Why an attempt ended early, and whether trying again could help. */
class AttemptFailure {
  constructor(
    readonly error: LlmError,
    readonly retryable: boolean,
    readonly retryAfterMs?: number
  ) {}
}

const isContent = (event: Event): boolean =>
  event.type === "block_start" || event.type === "block_delta" || event.type === "block_stop" || event.type === "block_abort"

const isTerminal = (event: Event): boolean => event.type === "status" && event.status !== "started"

/** The call's headers with the body's content type and the SSE accept header fixed (set by name, any case). */
const requestHeaders = (headers: Readonly<Record<string, string>>): Headers => {
  const out = new Headers(headers)
  out.set("content-type", "application/json")
  out.set("accept", "text/event-stream")
  return out
}

/** What a rejected fetch or body read means, given who aborted. */
const classifyRejection = (cause: unknown, signal: AbortSignal | undefined, timer: PhaseTimer): LlmError => {
  if (signal?.aborted) return new LlmCancelled({ message: "The request was cancelled" })
  const expired = timer.expiredPhase
  if (expired !== undefined) {
    return new LlmTimeout({
      phase: expired.phase,
      afterMs: expired.afterMs,
      message: `No ${expired.phase === "headers" ? "response headers" : expired.phase === "first_event" ? "first event" : "event"} within ${expired.afterMs} ms`
    })
  }
  if (isLlmError(cause)) return cause
  const detail = cause instanceof Error ? (cause.cause instanceof Error ? `${cause.message}: ${cause.cause.message}` : cause.message) : String(cause)
  // Redirects are refused (`redirect: "error"`): an endpoint that redirects is misconfigured, and asking again
  // cannot help, so it is a protocol error (never retried), not a network failure.
  if (cause instanceof Error && cause.cause instanceof Error && /redirect/i.test(cause.cause.message)) {
    return new LlmProtocolError({ message: `The endpoint answered with a redirect, which is not followed (${detail})` })
  }
  return new LlmNetworkError({ message: detail })
}

/**
 * Streams one provider call as neutral events, with retries and per-phase timeouts.
 *
 * Retry rule: an attempt may be retried only while the consumer has seen no content (block) event. Meta events
 * that arrive before the first content event (ping, `status: started`, early usage) are therefore held back and
 * released together with it, so a retried attempt never shows the consumer a second "started". Retried: statuses
 * 408/409/425/429/5xx, network failures, timeouts, a stream that ends before its terminal event, and transient
 * provider error events (overloaded, rate limited). Never retried: other 4xx, protocol errors, cancellation.
 * The last allowed attempt is not cut short: its held events and error event reach the consumer as they are.
 *
 * End of stream: the decoder's `end()` closes any block still open. If the scheme reported a terminal status while
 * streaming (`completed` / `failed` / `cancelled`), or `end()` itself completes the response (the scheme judged it
 * whole), the call is over as the provider said; otherwise the response was cut short and the generator throws
 * `LlmNetworkError` after the closing events (retried instead when no content had been yielded). A provider error event
 * makes the generator throw `LlmProviderError` once the stream is over; the event itself is yielded first so
 * subscribers can show it. Any failure after content closes the open blocks (via `end()`) before throwing, except
 * cancellation, which throws at once.
 *
 * Stopping iteration early (`break`) aborts the HTTP request. Requests go through the given `fetch` (the global
 * one by default), which on Node 20 ignores proxy environment variables.
 */
export async function* streamSse(
  call: SseCall,
  options: TransportOptions,
  signal?: AbortSignal
): AsyncGenerator<Event, void, undefined> {
  const { retry } = options
  for (let attempt = 0; ; attempt++) {
    if (signal?.aborted) throw new LlmCancelled({ message: "The request was cancelled" })
    const progress = { contentYielded: false }
    try {
      yield* runAttempt(call, options, signal, progress, attempt < retry.maxRetries)
      return
    } catch (thrown) {
      if (!(thrown instanceof AttemptFailure)) throw thrown
      if (!thrown.retryable || progress.contentYielded || attempt >= retry.maxRetries) throw thrown.error
      const delay = thrown.retryAfterMs ?? backoffDelayMs(retry, attempt)
      try {
        await retry.sleep(delay, signal)
      } catch {
        throw new LlmCancelled({ message: "The request was cancelled while waiting to retry" })
      }
    }
  }
}

async function* runAttempt(
  call: SseCall,
  options: TransportOptions,
  signal: AbortSignal | undefined,
  progress: { contentYielded: boolean },
  mayRetry: boolean
): AsyncGenerator<Event, void, undefined> {
  const controller = new AbortController()
  const forwardAbort = () => controller.abort()
  signal?.addEventListener("abort", forwardAbort, { once: true })
  const timer = new PhaseTimer(controller)
  const fail = (cause: unknown): AttemptFailure => {
    const error = classifyRejection(cause, signal, timer)
    const retryable = error._tag === "LlmNetworkError" || error._tag === "LlmTimeout"
    return new AttemptFailure(error, retryable)
  }
  try {
    timer.start("headers", options.timeouts.headersMs)
    let response: Response
    try {
      response = await options.fetch(call.url, {
        method: "POST",
        headers: requestHeaders(call.headers),
        body: call.body,
        signal: controller.signal,
        redirect: "error"
      })
    } catch (cause) {
      throw fail(cause)
    }

    /** A body that is not a stream, read with a size cap (and the idle deadline) to be quoted in the error. */
    const readWholeBody = async (): Promise<string> => {
      timer.start("idle", options.timeouts.idleMs)
      try {
        return await readCapped(response.body, options.maxErrorBodyBytes)
      } catch (cause) {
        throw fail(cause)
      }
    }

    if (!response.ok) {
      const body = await readWholeBody()
      throw new AttemptFailure(
        new LlmHttpError({ status: response.status, body, message: `HTTP ${response.status} from ${call.url}` }),
        isRetryableStatus(response.status),
        retryAfterMs(options.retry, response.headers)
      )
    }
    if (response.body === null) throw new AttemptFailure(new LlmProtocolError({ message: "Response has no body" }), false)
    // A success that is not a stream (a proxy or a server ignoring `stream: true`) is reported with its body,
    // not read as SSE and mistaken for a truncated stream.
    if ((response.headers.get("content-type") ?? "").toLowerCase().startsWith("application/json")) {
      const body = await readWholeBody()
      throw new AttemptFailure(
        new LlmProtocolError({ message: `Expected an event stream from ${call.url}, got application/json: ${body}` }),
        false
      )
    }

    timer.start("first_event", options.timeouts.firstEventMs)
    const reader = response.body.getReader()
    const text = new TextDecoder()
    const sse = createSseParser()
    const decoder = call.decoder()
    let held: Array<Event> = []
    let terminal = false
    let providerError: { readonly code: string; readonly message: string } | undefined

    // Decides where each decoded event goes; returns the events to yield now.
    const route = (event: Event, fromEnd: boolean): ReadonlyArray<Event> => {
      // An error from `end()` describes the truncation itself, which is reported as a network error below.
      if (event.type === "error" && !fromEnd) {
        if (mayRetry && !progress.contentYielded && isTransientErrorCode(event.code)) {
          throw new AttemptFailure(new LlmProviderError({ code: event.code, message: event.message }), true)
        }
        providerError ??= { code: event.code, message: event.message }
      }
      if (!fromEnd && isTerminal(event)) terminal = true
      if (progress.contentYielded) return [event]
      if (!isContent(event)) {
        held.push(event)
        return []
      }
      progress.contentYielded = true
      const out = [...held, event]
      held = []
      return out
    }

    // The events that close open blocks before a failure the consumer will see.
    const closingBefore = (failure: AttemptFailure): ReadonlyArray<Event> =>
      progress.contentYielded && failure.error._tag !== "LlmCancelled" ? decoder.end() : []

    // The idle deadline measures the server, not the consumer: it is stopped while an event is being handled
    // (a slow hook must not kill a healthy stream) and re-armed before the next read once an event has arrived.
    let rearmIdle = false
    for (;;) {
      if (rearmIdle) {
        timer.start("idle", options.timeouts.idleMs)
        rearmIdle = false
      }
      let chunk: Awaited<ReturnType<typeof reader.read>>
      try {
        chunk = await reader.read()
      } catch (cause) {
        const failure = fail(cause)
        yield* closingBefore(failure)
        throw failure
      }
      if (chunk.done) break
      let messages
      try {
        messages = sse.feed(text.decode(chunk.value, { stream: true }))
      } catch (cause) {
        const failure = new AttemptFailure(classifyRejection(cause, signal, timer), false)
        yield* closingBefore(failure)
        throw failure
      }
      for (const message of messages) {
        rearmIdle = true
        let events: ReadonlyArray<Event>
        try {
          events = decoder.push(message)
        } catch (cause) {
          const error = isLlmError(cause) ? cause : new LlmProtocolError({ message: cause instanceof Error ? cause.message : String(cause) })
          const failure = new AttemptFailure(error, false)
          yield* closingBefore(failure)
          throw failure
        }
        for (const event of events) {
          for (const out of route(event, false)) {
            // The consumer may cancel while handling an event; nothing more of this batch reaches it.
            if (signal?.aborted) throw new AttemptFailure(new LlmCancelled({ message: "The request was cancelled" }), false)
            timer.stop()
            yield out
          }
        }
      }
    }
    timer.stop()

    // A decoder may judge a stream without its final marker complete (a Chat server that stops after
    // finish_reason without [DONE]); it says so by completing from `end()`.
    const closing = decoder.end()
    const finished = terminal || closing.some((event) => event.type === "status" && event.status === "completed")
    if (mayRetry && !finished && !progress.contentYielded && providerError === undefined) {
      throw new AttemptFailure(new LlmNetworkError({ message: "The stream ended before the provider's terminal event" }), true)
    }
    for (const event of closing) {
      for (const out of route(event, true)) yield out
    }
    yield* held
    if (providerError !== undefined) throw new AttemptFailure(new LlmProviderError(providerError), false)
    if (!finished) throw new AttemptFailure(new LlmNetworkError({ message: "The stream ended before the provider's terminal event" }), false)
  } finally {
    timer.stop()
    signal?.removeEventListener("abort", forwardAbort)
    // Ends the connection when the consumer stops early or an error left the body unread.
    controller.abort()
  }
}
