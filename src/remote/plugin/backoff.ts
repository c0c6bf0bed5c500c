/** How registration retries back off while the host is down or starting. */
export interface RetryOptions {
  /** First delay, in ms. Default 100. */
  readonly initialDelayMs?: number
  /** Longest delay, in ms. Default 5,000. */
  readonly maxDelayMs?: number
  /** Growth per attempt. Default 2. */
  readonly factor?: number
  /** Fraction of each delay drawn at random (0: none, 1: anywhere in [0, delay]). Default 0.5. */
  readonly jitter?: number
  /** Attempts per registration before it is reported as failed; the watcher keeps trying after. Default Infinity. */
  readonly maxAttempts?: number
}

export interface Backoff {
  readonly maxAttempts: number
  /** The delay before attempt `attempt + 1` (attempt counts from 1). */
  delayMs(attempt: number): number
}

const positive = (value: number | undefined, fallback: number, what: string, min = 0): number => {
  const v = value ?? fallback
  if (typeof v !== "number" || Number.isNaN(v) || v < min) throw new RangeError(`retry.${what} must be a number >= ${min}, got ${String(v)}`)
  return v
}

/** Exponential back-off with jitter, so plugins started together do not retry in lock step. */
export const makeBackoff = (options: RetryOptions = {}, random: () => number = Math.random): Backoff => {
  const initial = positive(options.initialDelayMs, 100, "initialDelayMs")
  const max = positive(options.maxDelayMs, 5000, "maxDelayMs")
  const factor = positive(options.factor, 2, "factor", 1)
  const jitter = positive(options.jitter, 0.5, "jitter")
  if (jitter > 1) throw new RangeError(`retry.jitter must be in [0, 1], got ${jitter}`)
  const maxAttempts = positive(options.maxAttempts, Number.POSITIVE_INFINITY, "maxAttempts", 1)
  return {
    maxAttempts,
    delayMs: (attempt) => {
      const base = Math.min(max, initial * factor ** Math.max(0, attempt - 1))
      return Math.round(base * (1 - jitter * random()))
    }
  }
}
