import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { deliveryHeaders, signCallback, signDelivery, signedCallbackHeaders, verifyCallback, verifyDelivery } from "../../src/remote/index.ts"

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

  it("v2: identical bodies in one second get different signatures, each verifying only with its own delivery id", () => {
    const one = deliveryHeaders(signedCallbackHeaders("secret", body, { timestamp: "1000" }))
    const two = deliveryHeaders(signedCallbackHeaders("secret", body, { timestamp: "1000" }))
    expect(one.deliveryId).not.toBe(two.deliveryId)
    expect(one.signature).not.toBe(two.signature)
    expect(verifyDelivery("secret", one, body, { nowSeconds: 1000 })).toEqual({ ok: true })
    expect(verifyDelivery("secret", two, body, { nowSeconds: 1000 })).toEqual({ ok: true })
    expect(verifyDelivery("secret", { ...one, deliveryId: two.deliveryId }, body, { nowSeconds: 1000 })).toEqual({ ok: false, reason: "mismatch" })
    expect(verifyDelivery("secret", one, body, { nowSeconds: 1301 })).toEqual({ ok: false, reason: "stale" })
    expect(verifyDelivery("secret", { ...one, deliveryId: "short" }, body, { nowSeconds: 1000 })).toEqual({ ok: false, reason: "malformed" })
    expect(verifyDelivery("secret", { ...one, signature: signCallback("secret", "1000", body) }, body, { nowSeconds: 1000 })).toEqual({ ok: false, reason: "malformed" })
    expect(verifyDelivery("secret", { ...one, deliveryId: undefined }, body)).toEqual({ ok: false, reason: "missing" })
    // The headers are read from Node's header record or from fetch's Headers alike.
    expect(deliveryHeaders(new Headers(signedCallbackHeaders("k", body, { timestamp: "7", deliveryId: "d".repeat(22) })))).toEqual({ timestamp: "7", deliveryId: "d".repeat(22), signature: signDelivery("k", "7", "d".repeat(22), body) })
  })

  it("v2: never accepts another body, timestamp or delivery id, nor a v1 signature as v2", () => {
    const id = fc.stringMatching(/^[A-Za-z0-9_-]{16,40}$/)
    fc.assert(fc.property(fc.string(), fc.string(), id, id, (signed, other, d1, d2) => {
      const signature = signDelivery("k", "5", d1, signed)
      const v1 = signCallback("k", "5", signed).replace(/^v1=/, "v2=")
      return (
        verifyDelivery("k", { timestamp: "5", deliveryId: d1, signature }, signed, { nowSeconds: 5 }).ok &&
        (signed === other || !verifyDelivery("k", { timestamp: "5", deliveryId: d1, signature }, other, { nowSeconds: 5 }).ok) &&
        (d1 === d2 || !verifyDelivery("k", { timestamp: "5", deliveryId: d2, signature }, signed, { nowSeconds: 5 }).ok) &&
        !verifyDelivery("k", { timestamp: "6", deliveryId: d1, signature }, signed, { nowSeconds: 5 }).ok &&
        !verifyDelivery("k", { timestamp: "5", deliveryId: d1, signature: v1 }, signed, { nowSeconds: 5 }).ok
      )
    }))
  })
})
