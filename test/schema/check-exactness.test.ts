import { Schema } from "effect"
import { describe, expect, it } from "vitest"
import { z } from "zod"
import { z as z3 } from "zod/v3"
import { makeArgumentCodec } from "../../src/schema/codec.ts"
import { UnsupportedSchemaError } from "../../src/schema/normalize.ts"

/* The regressions behind the agreement properties, one readable case each. */

const field = (codec: ReturnType<typeof makeArgumentCodec>): unknown => (codec.jsonSchema["properties"] as { a: unknown }).a

describe("Effect Schema checks are shown with the author's bound", () => {
  it("isMinLength(2) is minLength 2 (Effect 4.1 says 1) and one character is refused", () => {
    const codec = makeArgumentCodec(Schema.Struct({ a: Schema.String.check(Schema.isMinLength(2)) }))
    expect(field(codec)).toEqual({ type: "string", minLength: 2 })
    expect(codec.decode({ a: "x" })).toMatchObject({ ok: false, issues: [{ path: ["a"] }] })
    expect(codec.decode({ a: "xy" })).toMatchObject({ ok: true })
  })

  it("isBetweenLength(2, 4) is minLength 2, maxLength 4", () => {
    const codec = makeArgumentCodec(Schema.Struct({ a: Schema.String.check(Schema.isBetweenLength(2, 4)) }))
    expect(field(codec)).toEqual({ type: "string", minLength: 2, maxLength: 4 })
  })

  it("isPattern without the u flag is shown (Effect drops it)", () => {
    const codec = makeArgumentCodec(Schema.Struct({ a: Schema.String.check(Schema.isPattern(/^[a-c]+$/)) }))
    expect(field(codec)).toEqual({ type: "string", pattern: "^[a-c]+$" })
  })

  it("refuses what JSON Schema cannot state exactly, naming the check", () => {
    expect(() => makeArgumentCodec(Schema.Struct({ a: Schema.String.check(Schema.isPattern(/^ab$/i)) }))).toThrow(
      /isPattern\(\/\^ab\$\/i\).*"i" flag/
    )
    expect(() => makeArgumentCodec(Schema.Struct({ a: Schema.String.check(Schema.isLowercased()) }))).toThrow(UnsupportedSchemaError)
  })
})

describe("zod checks", () => {
  it("zod 4 refuses a regex flag its generator drops", () => {
    expect(() => makeArgumentCodec(z.object({ a: z.string().regex(/^ab$/i) }))).toThrow(UnsupportedSchemaError)
  })

  it("zod 3: gt/positive and tuples are accepted at definition and enforced", () => {
    const codec = makeArgumentCodec(z3.object({ n: z3.number().positive(), t: z3.tuple([z3.string()]).rest(z3.number()) }))
    expect(codec.decode({ n: 1, t: ["a", 2] })).toMatchObject({ ok: true })
    expect(codec.decode({ n: 0, t: ["a"] })).toMatchObject({ ok: false, issues: [{ path: ["n"] }] })
    expect(codec.decode({ n: 1, t: ["a", "b"] })).toMatchObject({ ok: false, issues: [{ path: ["t", 1] }] })
  })

  it("zod 3: literal checks are escaped exactly (not \\w for w, nothing invalid in a Unicode pattern)", () => {
    const codec = makeArgumentCodec(z3.object({ a: z3.string().startsWith("www"), b: z3.string().includes("a-b!") }))
    expect(codec.decode({ a: "www.x", b: "xa-b!" })).toMatchObject({ ok: true })
    expect(codec.decode({ a: "abc", b: "a-b!" })).toMatchObject({ ok: false, issues: [{ path: ["a"] }] })
  })

  it("zod 3: the i flag is spelled out, m and s are refused", () => {
    const codec = makeArgumentCodec(z3.object({ a: z3.string().regex(/^ab$/i) }))
    expect(codec.decode({ a: "aB" })).toMatchObject({ ok: true })
    expect(() => makeArgumentCodec(z3.object({ a: z3.string().regex(/^a.b$/s) }))).toThrow(UnsupportedSchemaError)
  })

  it("a record key __proto__, which zod would drop, is refused with a located issue", () => {
    for (const schema of [z.object({ r: z.record(z.string(), z.number()) }), z3.object({ r: z3.record(z3.string(), z3.number()) })]) {
      const codec = makeArgumentCodec(schema)
      const refused = codec.decode(JSON.parse('{"r":{"__proto__":1}}'))
      expect(refused).toMatchObject({ ok: false })
      expect(refused).toHaveProperty(["issues", 0, "path"], ["r"])
      expect(JSON.stringify(codec.jsonSchema)).toContain('"not":{"const":"__proto__"}')
      expect(codec.decode({ r: { a: 1 } })).toMatchObject({ ok: true })
    }
  })
})

describe("numbers and the stated residuals", () => {
  it("multipleOf 0.1 accepts 0.3 as written, in every library", () => {
    for (const schema of [
      Schema.Struct({ a: Schema.Finite.check(Schema.isMultipleOf(0.1)) }),
      z.object({ a: z.number().multipleOf(0.1) }),
      z3.object({ a: z3.number().multipleOf(0.1) })
    ]) {
      expect(makeArgumentCodec(schema).decode({ a: 0.3 })).toMatchObject({ ok: true })
      expect(makeArgumentCodec(schema).decode({ a: 0.35 })).toMatchObject({ ok: false })
    }
  })

  it("string lengths beyond U+FFFF: a minimum is exact; zod 4 counts code points as JSON Schema does", () => {
    const codec = makeArgumentCodec(z.object({ min: z.string().min(2), max: z.string().max(3) }))
    expect(codec.decode({ min: "😀", max: "" })).toMatchObject({ ok: false, issues: [{ path: ["min"] }] })
    expect(codec.decode({ min: "ab", max: "😀😀" })).toMatchObject({ ok: true })
  })

  it("the stated residual: Effect and zod 3 maximums count UTF-16 units, so the refusal is explicit and located", () => {
    for (const schema of [
      Schema.Struct({ max: Schema.String.check(Schema.isMaxLength(3)) }),
      z3.object({ max: z3.string().max(3) })
    ]) {
      const codec = makeArgumentCodec(schema)
      expect(codec.jsonSchema["properties"]).toEqual({ max: { type: "string", maxLength: 3 } })
      expect(codec.decode({ max: "😀😀" })).toMatchObject({ ok: false, issues: [{ path: ["max"] }] })
    }
    // The exact Effect spelling for code points exists and agrees with JSON Schema.
    const exact = makeArgumentCodec(Schema.Struct({ max: Schema.String.check(Schema.isMaxCodePoints(3)) }))
    expect(exact.decode({ max: "😀😀" })).toMatchObject({ ok: true })
  })
})
