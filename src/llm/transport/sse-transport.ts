import type { Event } from "../event.ts"
import { defaultResponseLimits, ResponseMeter } from "../limits.ts"
import type { ResponseLimits } from "../limits.ts"
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
import { providerErrorOf } from "../raw-error.ts"
import type { DecoderOptions, SseMessage, StreamDecoder } from "../scheme.ts"
import { createSseParser } from "../sse.ts"
import { AttemptAbort } from "./attempt-abort.ts"
import { callCredentials, withoutCredentials } from "./call-credentials.ts"
import { connectionRefusedMessage, isConnectionRefused } from "./connection-refused.ts"
import { eventsOf } from "./event-batches.ts"
import { createUtf8Reads } from "./utf8-reads.ts"
import type { EventBatch } from "./event-batches.ts"
import { printable, shownUrl } from "./printable.ts"
import { readCapped } from "./read-capped.ts"
import { backoffDelayMs, isRetryableStatus, isTransientErrorCode, retryAfterMs } from "./retry-policy.ts"
import type { RetryPolicy } from "./retry-policy.ts"
import { PhaseTimer } from "./timeouts.ts"
import type { ExpiredPhase, Timeouts } from "./timeouts.ts"

/** One provider call: where to POST what, and a fresh decoder per attempt (decoders are stateful). */
export interface SseCall {
  readonly url: string
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
  readonly decoder: (options?: DecoderOptions) => StreamDecoder
}

export interface TransportOptions {
  readonly retry: RetryPolicy
  readonly timeouts: Timeouts
  readonly fetch: typeof globalThis.fetch
  /** Bytes of a non-success body kept in `LlmHttpError.body`. */
  readonly maxErrorBodyBytes: number
  /** Size bounds of one response; `defaultResponseLimits` when absent. */
  readonly limits?: ResponseLimits
  /** The provider's name: a refused connection to this machine names the local server to start. */
  readonly provider?: string
}

/** Why an attempt ended early, and whether trying again could help. */
class AttemptFailure {
  constructor(
    readonly error: LlmError,
    readonly retryable: boolean,
    readonly retryAfterMs?: number
  ) {}
}

/**
 * Meta events held before the first content event. Real streams hold two or three ("started", early usage);
 * a stream that sends more without ever starting content is not a response.
 */
const MAX_HELD_EVENTS = 64

/**
 * The reason every finished attempt aborts its request with, to end the connection. Nothing reads it (the body
 * is done with), and `abort()` without a reason builds a new `DOMException`, whose stack trace was about a sixth of
 * a short call's time (decision 0083).
 */
const ATTEMPT_OVER = new DOMException("The attempt is over", "AbortError")

/** Characters of a non-stream success body quoted in the protocol error. */
const QUOTED_BODY_CHARS = 200

const isContent = (event: Event): boolean =>
  event.type === "block_start" || event.type === "block_delta" || event.type === "block_stop" || event.type === "block_abort"

const isTerminal = (event: Event): boolean => event.type === "status" && event.status !== "started"

/**
 * An SSE message with no data (`data:` alone, or blank) carries nothing: a keep-alive, never decoded. Data that
 * starts with a printable ASCII character (every JSON event does) is not blank, and is told so without `trim()`
 * running on every event.
 */
const isEmptyMessage = (message: SseMessage): boolean => {
  const first = message.data.charCodeAt(0)
  if (first > 0x20 && first < 0x7f) return false
  return message.data.trim() === ""
}

/** A decoded batch that is only keep-alive (`ping`, or nothing: a chunk with no content in it). */
const isKeepAlive = (events: ReadonlyArray<Event>): boolean => {
  for (let i = 0; i < events.length; i++) if ((events[i] as Event).type !== "ping") return false
  return true
}

/** The call's headers with the body's content type and the SSE accept header fixed (set by name, any case). */
const requestHeaders = (headers: Readonly<Record<string, string>>): Headers => {
  const out = new Headers(headers)
  out.set("content-type", "application/json")
  out.set("accept", "text/event-stream")
  return out
}

const timeoutMessage = (expired: ExpiredPhase): string => {
  switch (expired.phase) {
    case "headers":
      return `No response headers within ${expired.afterMs} ms`
    case "first_event":
      return `No content within ${expired.afterMs} ms`
    case "idle":
      return `No event within ${expired.afterMs} ms`
    case "total":
      return `No complete response within ${expired.afterMs} ms (the total deadline)`
  }
}

/** The request's cancellation, keeping the signal's reason (the run's own `Cancelled`, or the caller's value). */
const cancelledBy = (signal: AbortSignal | undefined, message: string): LlmCancelled =>
  signal?.aborted ? new LlmCancelled({ message, reason: signal.reason, cause: signal.reason }) : new LlmCancelled({ message })

/** What a rejected fetch or body read means, given who aborted. */
const classifyRejection = (cause: unknown, signal: AbortSignal | undefined, timer: PhaseTimer): LlmError => {
  if (signal?.aborted) return cancelledBy(signal, "The request was cancelled")
  const expired = timer.expiredPhase
  if (expired !== undefined) return new LlmTimeout({ phase: expired.phase, afterMs: expired.afterMs, message: timeoutMessage(expired) })
  if (isLlmError(cause)) return cause
  const detail = cause instanceof Error ? (cause.cause instanceof Error ? `${cause.message}: ${cause.cause.message}` : cause.message) : String(cause)
  // Redirects are refused (`redirect: "error"`): an endpoint that redirects is misconfigured, and asking again
  // cannot help, so it is a protocol error (never retried), not a network failure.
  if (cause instanceof Error && cause.cause instanceof Error && /redirect/i.test(cause.cause.message)) {
    return new LlmProtocolError({ message: `The endpoint answered with a redirect, which is not followed (${detail})` })
  }
  return new LlmNetworkError({ message: detail, cause })
}

/** The media type of a Content-Type header, lower case and without parameters; undefined when absent. */
const mediaType = (contentType: string | null): string | undefined =>
  contentType === null ? undefined : (contentType.split(";")[0] ?? "").trim().toLowerCase()

/**
 * Streams one provider call as neutral events, with retries, deadlines and size bounds.
 *
 * Retry rule: an attempt may be retried only while the consumer has seen no content (block) event. Meta events
 * that arrive before the first content event (`status: started`, early usage) are therefore held back and
 * released together with it, so a retried attempt never shows the consumer a second "started". Retried: statuses
 * 408/409/425/429/5xx, network failures, timeouts (but never past the total deadline), a stream that ends before
 * its terminal event, and transient provider error events (overloaded, rate limited). Never retried: other 4xx,
 * protocol errors (a redirect, a success that is not an event stream), `LlmLimitExceeded`, cancellation.
 * The last allowed attempt is not cut short: its held events and error event reach the consumer as they are.
 *
 * Keep-alives (SSE comments, events without data, Anthropic `ping`, chunks that decode to nothing) are neither
 * held nor counted as progress: before content they are dropped, after it pings pass through; they satisfy no
 * deadline and re-arm none (see `Timeouts`).
 *
 * End of stream: a terminal status from the scheme (`completed` / `failed` / `cancelled`: `[DONE]`,
 * `message_stop`, `response.completed`…) ends the response there; the rest of the body is not read, so a
 * server that leaves the connection open after it cannot turn a complete answer into a timeout. When the body
 * ends without one, the decoder's `end()` closes any block still open; if `end()` completes the response (the
 * scheme judged it whole) the call is over, otherwise it was cut short and the generator throws
 * `LlmNetworkError` after the closing events (retried instead when no content had been yielded). A stream that
 * goes quiet after the scheme judged it whole (`isComplete`: Chat after `finish_reason`, Gemini after
 * `finishReason`) is ended the same way when the phase deadline passes, not failed. A provider error event makes
 * the generator throw `LlmProviderError` once the stream is over; the event itself is yielded first so
 * subscribers can show it. Any failure after content closes the open blocks (via `end()`) before throwing,
 * except cancellation, which throws at once.
 *
 * Stopping iteration early (`break`) aborts the HTTP request. Requests go through the given `fetch` (the global
 * one by default), which on Node 20 ignores proxy environment variables.
 *
 * Internally the attempts yield one batch of events per read, handed over one by one (see `eventsOf`); the
 * signal is checked before each event read off the wire, so a consumer that cancels while handling one sees
 * nothing more of its batch.
 */
export const streamSse = (call: SseCall, options: TransportOptions, signal?: AbortSignal): AsyncGenerator<Event, void, undefined> => {
  const { retry } = options
  const totalMs = options.timeouts.totalMs
  const total = { at: Number.isFinite(totalMs) ? performance.now() + totalMs : Number.POSITIVE_INFINITY, afterMs: totalMs }
  const totalTimeout = (last?: LlmError): LlmTimeout =>
    new LlmTimeout({
      phase: "total",
      afterMs: totalMs,
      message: `${timeoutMessage({ phase: "total", afterMs: totalMs })}${last === undefined ? "" : `; last attempt: ${last.message}`}`
    })
  let attempt = 0
  let progress = { contentYielded: false }
  /** The previous attempt's failure: a total deadline that cuts a later attempt short still says what went wrong. */
  let previous: LlmError | undefined
  const start = (): AsyncGenerator<EventBatch<Event>, void, undefined> => {
    if (signal?.aborted) throw cancelledBy(signal, "The request was cancelled")
    progress = { contentYielded: false }
    return runAttempt(call, options, signal, progress, attempt < retry.maxRetries, total)
  }
  // An attempt that failed: the next one (after its back-off), or the error the caller gets.
  const retryAfter = async (thrown: unknown): Promise<AsyncGenerator<EventBatch<Event>, void, undefined>> => {
    if (!(thrown instanceof AttemptFailure)) throw thrown
    const cut = thrown.error._tag === "LlmTimeout" && thrown.error.phase === "total"
    if (cut && previous !== undefined) throw totalTimeout(previous)
    previous = thrown.error
    if (!thrown.retryable || progress.contentYielded || attempt >= retry.maxRetries) throw thrown.error
    const delay = thrown.retryAfterMs ?? backoffDelayMs(retry, attempt)
    // A retry that could not even start before the total deadline is not made.
    if (performance.now() + delay >= total.at) throw totalTimeout(thrown.error)
    try {
      await retry.sleep(delay, signal)
    } catch {
      throw cancelledBy(signal, "The request was cancelled while waiting to retry")
    }
    attempt++
    return start()
  }
  return eventsOf(start, retryAfter, () => (signal?.aborted ? cancelledBy(signal, "The request was cancelled") : undefined))
}

async function* runAttempt(
  call: SseCall,
  options: TransportOptions,
  signal: AbortSignal | undefined,
  progress: { contentYielded: boolean },
  mayRetry: boolean,
  total: { readonly at: number; readonly afterMs: number }
): AsyncGenerator<EventBatch<Event>, void, undefined> {
  const limits = options.limits ?? defaultResponseLimits
  const where = shownUrl(call.url)
  const attempt = new AttemptAbort()
  const forwardAbort = () => attempt.abort()
  signal?.addEventListener("abort", forwardAbort, { once: true })
  const timer = new PhaseTimer(attempt, total)
  // What the provider answers may quote the call's own key; it is taken out of every error reported from it.
  let credentials: ReturnType<typeof callCredentials> | undefined
  const secrets = () => (credentials ??= callCredentials(call.url, call.headers))
  const fail = (cause: unknown): AttemptFailure => {
    const classified = classifyRejection(cause, signal, timer)
    const refused = classified._tag === "LlmNetworkError" && isConnectionRefused(cause) ? connectionRefusedMessage(call.url, options.provider) : undefined
    const error = refused === undefined ? classified : new LlmNetworkError({ message: refused, cause })
    // Past the total deadline nothing is retried.
    const retryable = (error._tag === "LlmNetworkError" || error._tag === "LlmTimeout") && !(error._tag === "LlmTimeout" && error.phase === "total")
    return new AttemptFailure(error, retryable)
  }
  try {
    timer.start("headers", options.timeouts.headersMs)
    let response: Response
    try {
      response = await attempt.fetch(options.fetch, call.url, {
        method: "POST",
        headers: requestHeaders(call.headers),
        body: call.body,
        redirect: "error"
      })
    } catch (cause) {
      throw fail(cause)
    }

    /** A body that is not a stream, read with a size cap (and the idle deadline) to be quoted in the error. */
    const readWholeBody = async (maxBytes: number): Promise<string> => {
      timer.start("idle", options.timeouts.idleMs)
      try {
        return await readCapped(response.body, maxBytes, attempt.signal)
      } catch (cause) {
        throw fail(cause)
      }
    }

    if (!response.ok) {
      const body = secrets().redactSecrets(await readWholeBody(options.maxErrorBodyBytes))
      throw new AttemptFailure(
        new LlmHttpError({ status: response.status, body, message: `HTTP ${response.status} from ${where}` }),
        isRetryableStatus(response.status),
        retryAfterMs(options.retry, response.headers)
      )
    }
    if (response.body === null) throw new AttemptFailure(new LlmProtocolError({ message: "Response has no body" }), false)
    // A success that is not a stream (a proxy's HTML page, a server ignoring `stream: true`) is reported with
    // the start of its body, not read as SSE and mistaken for a truncated stream; asking again gets the same.
    // A missing Content-Type is given the benefit of the doubt (some small servers omit it).
    const contentType = response.headers.get("content-type")
    const media = mediaType(contentType)
    if (media === "application/json") {
      const body = secrets().redactSecrets(await readWholeBody(options.maxErrorBodyBytes))
      throw new AttemptFailure(
        new LlmProtocolError({ message: `Expected an event stream from ${where}, got application/json: ${body}` }),
        false
      )
    }
    if (media !== undefined && media !== "text/event-stream") {
      const head = secrets().redactSecrets(await readWholeBody(QUOTED_BODY_CHARS * 4))
      throw new AttemptFailure(
        new LlmProtocolError({
          message: `Expected an event stream from ${where}, got Content-Type "${printable(contentType ?? "", 100)}"; the body starts "${printable(head, QUOTED_BODY_CHARS)}"`
        }),
        false
      )
    }

    timer.start("first_event", options.timeouts.firstEventMs)
    const reader = response.body.getReader()
    attempt.watch(reader)
    const text = createUtf8Reads()
    const sse = createSseParser(limits.maxEventChars)
    const meter = new ResponseMeter(limits)
    const decoder = call.decoder({ limits, argumentTally: meter })
    let held: Array<Event> = []
    let terminal = false
    let providerError: LlmProviderError | undefined

    // Decides where each decoded event goes; appends the events to hand over now to `out`.
    const route = (decoded: Event, fromEnd: boolean, out: Array<Event>): void => {
      const event = withoutCredentials(decoded, secrets)
      // An error from `end()` describes the truncation itself, which is reported as a network error below.
      if (event.type === "error" && !fromEnd) {
        if (mayRetry && !progress.contentYielded && isTransientErrorCode(event.code)) {
          throw new AttemptFailure(providerErrorOf(event), true)
        }
        providerError ??= providerErrorOf(event)
      }
      if (!fromEnd && isTerminal(event)) terminal = true
      if (progress.contentYielded) {
        out.push(event)
        return
      }
      if (!isContent(event)) {
        // Keep-alives before content carry nothing the consumer needs: they are not held.
        if (event.type === "ping") return
        if (held.length >= MAX_HELD_EVENTS) {
          throw new AttemptFailure(
            new LlmProtocolError({ message: `More than ${MAX_HELD_EVENTS} events before any content from ${where}` }),
            false
          )
        }
        held.push(event)
        return
      }
      progress.contentYielded = true
      for (const each of held) out.push(each)
      out.push(event)
      held = []
    }

    // The events that close open blocks before a failure the consumer will see.
    const closingBefore = (failure: AttemptFailure): EventBatch<Event> => ({
      events: progress.contentYielded && failure.error._tag !== "LlmCancelled" ? decoder.end() : [],
      cancellable: false
    })

    // Deadlines measure the server, not the consumer: the clock is paused while an event is being handled (a
    // slow hook must not kill a healthy stream) and resumed before the next read. An event with content re-arms
    // the idle deadline in full; a keep-alive does not, so a stream of pings cannot hold the call open.
    let rearmIdle = false
    reading: for (;;) {
      if (rearmIdle) {
        timer.start("idle", options.timeouts.idleMs)
        rearmIdle = false
      } else timer.resume()
      let chunk: Awaited<ReturnType<typeof reader.read>>
      try {
        chunk = await reader.read()
        // Done after an abort is the abort cancelling the reader (the body may never have heard of it).
        if (chunk.done && attempt.signal.aborted) throw attempt.signal.reason
      } catch (cause) {
        const failure = fail(cause)
        // Gone quiet after everything a whole response needs: it is over, not failed.
        const expired = timer.expiredPhase?.phase
        if ((expired === "idle" || expired === "first_event") && !signal?.aborted && decoder.isComplete?.() === true) break
        yield closingBefore(failure)
        throw failure
      }
      if (chunk.done) break
      // A read served from queued data never lets the phase's Node timer run (see `expireIfOverdue`).
      timer.expireIfOverdue()
      let messages
      try {
        messages = sse.feed(text.decode(chunk.value))
      } catch (cause) {
        const failure = new AttemptFailure(classifyRejection(cause, signal, timer), false)
        yield closingBefore(failure)
        throw failure
      }
      // Everything this read completed is handed over as one batch (the consumer may cancel while handling an
      // event; `eventsOf` then delivers nothing more of it). A failure part-way delivers what came before it first.
      const ready: Array<Event> = []
      let failure: AttemptFailure | undefined
      let closes = false
      try {
        // Indexed loops: this is the per-event path, and `for…of` inside this async generator costs an iterator
        // per message and per event batch.
        for (let m = 0; m < messages.length; m++) {
          const message = messages[m] as SseMessage
          if (isEmptyMessage(message)) continue
          let events: ReadonlyArray<Event>
          try {
            events = decoder.push(message)
            for (let i = 0; i < events.length; i++) meter.check(events[i] as Event)
          } catch (cause) {
            const error = isLlmError(cause) ? cause : new LlmProtocolError({ message: cause instanceof Error ? cause.message : String(cause) })
            // A decoder's protocol error quotes the event it could not read, and with it whatever the provider echoed.
            failure = new AttemptFailure(error._tag === "LlmProtocolError" ? new LlmProtocolError({ message: secrets().redactSecrets(error.message) }) : error, false)
            closes = true
            break
          }
          const keepAlive = isKeepAlive(events)
          for (let i = 0; i < events.length; i++) route(events[i] as Event, false, ready)
          // Before content the first-content deadline keeps running whatever bookkeeping arrives.
          if (!keepAlive && progress.contentYielded) rearmIdle = true
          // The terminal event completes the response: whatever follows it is not read.
          if (terminal) break
        }
      } catch (thrown) {
        if (!(thrown instanceof AttemptFailure)) throw thrown
        failure = thrown
      }
      if (ready.length > 0) {
        timer.pause()
        yield { events: ready, cancellable: true }
      }
      if (failure !== undefined) {
        if (closes) yield closingBefore(failure)
        throw failure
      }
      if (terminal) break reading
    }
    timer.stop()

    // A decoder may judge a stream without its final marker complete (a Chat server that stops after
    // finish_reason without [DONE]); it says so by completing from `end()`.
    const closing = decoder.end()
    const finished = terminal || closing.some((event) => event.type === "status" && event.status === "completed")
    if (mayRetry && !finished && !progress.contentYielded && providerError === undefined) {
      throw new AttemptFailure(new LlmNetworkError({ message: "The stream ended before the provider's terminal event" }), true)
    }
    const last: Array<Event> = []
    try {
      for (const event of closing) route(event, true, last)
    } finally {
      if (last.length > 0) yield { events: last, cancellable: false }
    }
    if (held.length > 0) yield { events: held, cancellable: false }
    if (providerError !== undefined) throw new AttemptFailure(providerError, false)
    if (!finished) throw new AttemptFailure(new LlmNetworkError({ message: "The stream ended before the provider's terminal event" }), false)
  } finally {
    timer.dispose()
    signal?.removeEventListener("abort", forwardAbort)
    // Ends the connection and cancels the reader (a terminal event may leave the body open): also when the
    // consumer stops early or an error left the body unread. An attempt aborted before has done both already.
    attempt.abort(ATTEMPT_OVER)
  }
}
