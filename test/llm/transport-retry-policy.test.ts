import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { abortableSleep } from "../../src/llm/transport/abortable-sleep.ts"
import { backoffDelayMs, defaultRetryPolicy, isRetryableStatus, retryAfterMs } from "../../src/llm/transport/retry-policy.ts"

const policy = { ...defaultRetryPolicy, baseDelayMs: 200, maxDelayMs: 5000, maxRetryAfterMs: 30_000, now: () => Date.parse("2026-03-01T12:00:00Z") }

describe("retry policy", () => {
  it("full jitter stays within [0, min(max, base·2^n))", () => {
    fc.assert(
      fc.property(fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }), fc.integer({ min: 0, max: 40 }), (random, retry) => {
        const delay = backoffDelayMs({ ...policy, random: () => random }, retry)
        const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** retry)
        expect(delay).toBeGreaterThanOrEqual(0)
        expect(delay).toBeLessThan(Math.max(ceiling, 1))
      })
    )
  })

  it("retries exactly 408, 409, 425, 429 and 5xx", () => {
    const retryable = Array.from({ length: 500 }, (_, i) => i + 100).filter(isRetryableStatus)
    expect(retryable).toEqual([408, 409, 425, 429, ...Array.from({ length: 100 }, (_, i) => 500 + i)])
  })

  it("reads Retry-After seconds, HTTP-dates and retry-after-ms, capped, never negative", () => {
    const headers = (entries: Record<string, string>) => new Headers(entries)
    expect(retryAfterMs(policy, headers({ "retry-after": "12" }))).toBe(12_000)
    expect(retryAfterMs(policy, headers({ "retry-after": "1.5" }))).toBe(1500)
    expect(retryAfterMs(policy, headers({ "retry-after": "86400" }))).toBe(30_000)
    expect(retryAfterMs(policy, headers({ "retry-after": "Sun, 01 Mar 2026 12:00:20 GMT" }))).toBe(20_000)
    expect(retryAfterMs(policy, headers({ "retry-after": "Sun, 01 Mar 2026 11:00:00 GMT" }))).toBe(0)
    expect(retryAfterMs(policy, headers({ "retry-after": "Mon, 02 Mar 2026 12:00:00 GMT" }))).toBe(30_000)
    expect(retryAfterMs(policy, headers({ "retry-after-ms": "250", "retry-after": "9" }))).toBe(250)
    expect(retryAfterMs(policy, headers({ "retry-after": "soon" }))).toBeUndefined()
    expect(retryAfterMs(policy, headers({}))).toBeUndefined()
  })

  it("agrees with any delay-seconds value up to the cap", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 100_000 }), (seconds) => {
        expect(retryAfterMs(policy, new Headers({ "retry-after": String(seconds) }))).toBe(Math.min(seconds * 1000, policy.maxRetryAfterMs))
      })
    )
  })

  it("abortableSleep rejects at once when the signal fires", async () => {
    const controller = new AbortController()
    const started = Date.now()
    const sleeping = abortableSleep(10_000, controller.signal)
    setTimeout(() => controller.abort(), 20)
    await expect(sleeping).rejects.toBeDefined()
    expect(Date.now() - started).toBeLessThan(1000)
    await expect(abortableSleep(5, AbortSignal.abort())).rejects.toBeDefined()
    await expect(abortableSleep(5, undefined)).resolves.toBeUndefined()
  })
})
