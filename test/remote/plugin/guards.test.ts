import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { makeBackoff } from "../../../src/remote/plugin/backoff.ts"
import { ReplayGuard } from "../../../src/remote/plugin/replay-guard.ts"
import { ToolSecrets } from "../../../src/remote/plugin/tool-secrets.ts"
import { signDelivery } from "../../../src/remote/signing.ts"

describe("back-off", () => {
  it("grows exponentially to its cap, with bounded jitter", () => {
    const none = makeBackoff({ initialDelayMs: 100, maxDelayMs: 1000, jitter: 0 })
    expect([1, 2, 3, 4, 5, 6].map((a) => none.delayMs(a))).toEqual([100, 200, 400, 800, 1000, 1000])
    fc.assert(fc.property(fc.integer({ min: 1, max: 60 }), fc.double({ min: 0, max: 1, noNaN: true }), (attempt, r) => {
      const d = makeBackoff({ initialDelayMs: 100, maxDelayMs: 1000, jitter: 0.5 }, () => r).delayMs(attempt)
      const base = Math.min(1000, 100 * 2 ** (attempt - 1))
      return d >= Math.floor(base / 2) && d <= base
    }))
    expect(() => makeBackoff({ jitter: 2 })).toThrow(RangeError)
    expect(() => makeBackoff({ maxAttempts: 0 })).toThrow(RangeError)
  })
})

describe("the replay guard", () => {
  it("refuses a signature seen inside the window and forgets it after", () => {
    const guard = new ReplayGuard(300, 1000)
    expect(guard.admit(1000, "a", 1000)).toBeUndefined()
    expect(guard.admit(1000, "a", 1001)).toBe("replayed")
    expect(guard.admit(1000, "b", 1001)).toBeUndefined()
    expect(guard.admit(1400, "c", 1400)).toBeUndefined()
    expect(guard.size).toBe(1)
  })

  it("stays within its bound under a flood and never lets a replay through (the window narrows)", () => {
    fc.assert(fc.property(fc.array(fc.tuple(fc.integer({ min: 0, max: 20 }), fc.integer({ min: 0, max: 50 })), { maxLength: 400 }), (calls) => {
      const guard = new ReplayGuard(300, 16)
      const accepted = new Set<string>()
      for (const [second, n] of calls) {
        const sig = `${second}:${n}`
        const verdict = guard.admit(second, sig, 20)
        if (verdict === undefined) {
          if (accepted.has(sig)) return false
          accepted.add(sig)
        }
        if (guard.size > 16) return false
      }
      return true
    }))
  })
})

describe("tool secrets", () => {
  it("accepts the previous secret only for the tolerance window after a rotation", () => {
    const secrets = new ToolSecrets()
    const body = Buffer.from("{}")
    const id = "delivery-0123456789abcdef"
    const signed = (secret: string, t: string) => ({ timestamp: t, deliveryId: id, signature: signDelivery(secret, t, id, body) })
    expect(secrets.verify(signed("s1", "100"), body, 100, 300)).toEqual({ ok: false, reason: "mismatch" })
    secrets.rotate("s1", 100, 300)
    secrets.rotate("s2", 100, 300)
    expect(secrets.verify(signed("s2", "100"), body, 100, 300).ok).toBe(true)
    expect(secrets.verify(signed("s1", "100"), body, 399, 300).ok).toBe(true)
    expect(secrets.verify(signed("s1", "399"), body, 401, 300)).toEqual({ ok: false, reason: "mismatch" })
  })
})
