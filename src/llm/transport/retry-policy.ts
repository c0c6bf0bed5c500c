import { abortableSleep } from "./abortable-sleep.ts"

/**
 * When and how long to wait before trying a failed request again. Only failures that happen before the consumer
 * has seen any content are retried (see `sse-transport.ts`); this module decides the rest.
 */
export interface RetryPolicy {
  /** Retries after the first attempt; 0 disables retrying. */
  readonly maxRetries: number
  /** The back-off ceiling doubles from this value with each retry. */
  readonly baseDelayMs: number
  /** Upper bound of the exponential ceiling. */
  readonly maxDelayMs: number
  /** A server's `Retry-After` longer than this is shortened to it: a provider must not park a call for an hour. */
  readonly maxRetryAfterMs: number
  /** In [0, 1); injectable so tests get exact delays. */
  readonly random: () => number
  /** Must reject (with anything) when `signal` fires; the transport turns that into `LlmCancelled`. */
  readonly sleep: (ms: number, signal: AbortSignal | undefined) => Promise<void>
  /** Epoch milliseconds, for `Retry-After` given as an HTTP-date. */
  readonly now: () => number
}

/**
 * Two retries with jittered exponential back-off from 500 ms up to 8 s, honouring `Retry-After` up to 60 s
 * (decision 0011). Override fields through `LlmClientOptions.retry`.
 */
export const defaultRetryPolicy: RetryPolicy = {
  maxRetries: 2,
  baseDelayMs: 500,
  maxDelayMs: 8_000,
  maxRetryAfterMs: 60_000,
  random: Math.random,
  sleep: abortableSleep,
  now: Date.now
}

/** 408 timeout, 409 conflict, 425 too early, 429 rate limited and every 5xx are transient; other 4xx never are. */
export const isRetryableStatus = (status: number): boolean =>
  status === 408 || status === 409 || status === 425 || status === 429 || (status >= 500 && status <= 599)

/**
 * Error codes that providers put in a stream event when they are overloaded or rate limited rather than when the
 * request itself is wrong: Anthropic `overloaded_error` / `rate_limit_error` / `api_error`, OpenAI `server_error`
 * / `rate_limit_exceeded`, Google's `UNAVAILABLE` / `RESOURCE_EXHAUSTED` / `INTERNAL` statuses.
 */
const TRANSIENT_ERROR_CODES: ReadonlySet<string> = new Set([
  "overloaded_error",
  "rate_limit_error",
  "api_error",
  "server_error",
  "rate_limit_exceeded",
  "UNAVAILABLE",
  "RESOURCE_EXHAUSTED",
  "INTERNAL",
  "429",
  "500",
  "502",
  "503",
  "504",
  "529"
])

export const isTransientErrorCode = (code: string): boolean => TRANSIENT_ERROR_CODES.has(code)

/** Full-jitter exponential back-off: uniform in [0, min(maxDelay, base · 2^retry)). `retry` counts from 0. */
export const backoffDelayMs = (policy: RetryPolicy, retry: number): number =>
  Math.floor(policy.random() * Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** retry))

const SECONDS = /^\s*\d+(?:\.\d+)?\s*$/

/**
 * The wait a server asked for, in milliseconds, capped by the policy; `undefined` when it asked for none or sent
 * something unreadable. Reads OpenAI's `retry-after-ms` first (finer grained), then `Retry-After` as delay-seconds
 * or as an HTTP-date.
 */
export const retryAfterMs = (policy: RetryPolicy, headers: Headers): number | undefined => {
  const millis = headers.get("retry-after-ms")
  if (millis !== null && SECONDS.test(millis)) return Math.min(policy.maxRetryAfterMs, Number(millis))
  const value = headers.get("retry-after")
  if (value === null) return undefined
  if (SECONDS.test(value)) return Math.min(policy.maxRetryAfterMs, Math.round(Number(value) * 1000))
  const date = Date.parse(value)
  if (Number.isNaN(date)) return undefined
  return Math.min(policy.maxRetryAfterMs, Math.max(0, date - policy.now()))
}
