import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { signCallback, verifyCallback } from "../../src/remote/signing.ts"

describe("callback signatures", () => {
  const body = JSON.stringify({ name: "echo", arguments: { a: 1 }, call_id: "c1", raw_arguments: "{\"a\":1}" })

  it("accepts the signature it made, within the tolerance", () => {
    const signature = signCallback("secret", "1000", body)
    expect(verifyCallback("secret", "1000", signature, body, { nowSeconds: 1200 })).toEqual({ ok: true })
  })

  it("refuses stale, forged, malformed and missing signatures", () => {
    const signature = signCallback("secret", "1000", body)
    expect(verifyCallback("secret", "1000", signature, body, { nowSeconds: 1301 })).toEqual({ ok: false, reason: "stale" })
    expect(verifyCallback("other", "1000", signature, body, { nowSeconds: 1000 })).toEqual({ ok: false, reason: "mismatch" })
    expect(verifyCallback("secret", "1000", signature, `${body} `, { nowSeconds: 1000 })).toEqual({ ok: false, reason: "mismatch" })
    expect(verifyCallback("secret", "1001", signature, body, { nowSeconds: 1000 })).toEqual({ ok: false, reason: "mismatch" })
    expect(verifyCallback("secret", "1e3", signature, body, { nowSeconds: 1000 })).toEqual({ ok: false, reason: "malformed" })
    expect(verifyCallback("secret", "1000", signature.slice(3), body, { nowSeconds: 1000 })).toEqual({ ok: false, reason: "malformed" })
    expect(verifyCallback("secret", undefined, signature, body)).toEqual({ ok: false, reason: "missing" })
  })

  it("never accepts a body other than the signed one", () => {
    fc.assert(fc.property(fc.string(), fc.string(), (signed, other) => {
      fc.pre(signed !== other)
      const signature = signCallback("k", "5", signed)
      return verifyCallback("k", "5", signature, other, { nowSeconds: 5 }).ok === false
    }))
  })
})
