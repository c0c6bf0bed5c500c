import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { utf8Length } from "../../src/tool/output-limit.ts"
import { randomUuid } from "../../src/llm/random-uuid.ts"
import { commonPrefixLength } from "../../src/worker/cache-lock.ts"

/** The portable replacements for `Buffer.byteLength`, `Buffer.compare` and `node:crypto`'s `randomUUID` agree with Node's. */
describe("portable byte helpers of the main entry", () => {
  it("utf8Length equals Buffer.byteLength for any string, lone surrogates included", () => {
    fc.assert(fc.property(fc.string({ unit: "binary" }), (text) => utf8Length(text) === Buffer.byteLength(text, "utf8")), { numRuns: 2000 })
    fc.assert(fc.property(fc.string({ unit: fc.integer({ min: 0xd7f0, max: 0xe010 }).map((c) => String.fromCharCode(c)) }), (text) => utf8Length(text) === Buffer.byteLength(text, "utf8")))
  })

  it("commonPrefixLength finds the first differing byte, at any alignment", () => {
    const naive = (a: Uint8Array, b: Uint8Array): number => {
      let i = 0
      while (i < a.length && i < b.length && a[i] === b[i]) i++
      return i
    }
    const arrays = fc.tuple(fc.uint8Array({ maxLength: 64 }), fc.uint8Array({ maxLength: 24 }), fc.uint8Array({ maxLength: 24 }), fc.nat(3), fc.nat(3))
    fc.assert(
      fc.property(arrays, ([shared, tailA, tailB, offsetA, offsetB]) => {
        const place = (offset: number, tail: Uint8Array) => {
          const backing = new Uint8Array(offset + shared.length + tail.length)
          backing.set(shared, offset)
          backing.set(tail, offset + shared.length)
          return backing.subarray(offset)
        }
        const a = place(offsetA, tailA)
        const b = place(offsetB, tailB)
        return commonPrefixLength(a, b) === naive(a, b)
      }),
      { numRuns: 2000 }
    )
  })

  it("randomUuid is a version 4 UUID, also where only getRandomValues exists", () => {
    const v4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/
    expect(randomUuid()).toMatch(v4)
    const own = Object.getOwnPropertyDescriptor(globalThis.crypto, "randomUUID")
    try {
      Object.defineProperty(globalThis.crypto, "randomUUID", { value: undefined, configurable: true })
      const ids = new Set(Array.from({ length: 100 }, () => randomUuid()))
      expect(ids.size).toBe(100)
      for (const id of ids) expect(id).toMatch(v4)
    } finally {
      if (own === undefined) Reflect.deleteProperty(globalThis.crypto, "randomUUID")
      else Object.defineProperty(globalThis.crypto, "randomUUID", own)
    }
  })
})
