import { Schema } from "effect"
import { describe, expect, expectTypeOf, it } from "vitest"
import { z } from "zod"
import { z as z3 } from "zod/v3"
import type { DecodeResult } from "../../src/schema/argument-codec.ts"
import { formatIssues, type InferArguments, jsonSchema, makeArgumentCodec } from "../../src/schema/codec.ts"
import { RecursiveSchemaError, UnsupportedSchemaError } from "../../src/schema/normalize.ts"

const WEATHER = {
  type: "object",
  properties: { city: { type: "string" }, days: { type: "integer", minimum: 1, maximum: 14 } },
  required: ["city"],
  additionalProperties: false
}

const effectWeather = Schema.Struct({
  city: Schema.String,
  days: Schema.optional(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 14 })))
})
const zod4Weather = z.object({ city: z.string(), days: z.number().int().min(1).max(14).optional() })
const zod3Weather = z3.object({ city: z3.string(), days: z3.number().int().min(1).max(14).optional() })
/** A Standard Schema that is not zod's own object, so detection must go through `~standard`. */
const standardWeather = { "~standard": zod4Weather["~standard"] }
const rawWeather = jsonSchema<{ city: string; days?: number }>(WEATHER)

const sync = <A>(r: DecodeResult<A> | Promise<DecodeResult<A>>): DecodeResult<A> => {
  if (r instanceof Promise) throw new Error("expected a synchronous decode")
  return r
}

const sources = [
  ["Effect Schema", effectWeather],
  ["zod 4", zod4Weather],
  ["zod 3", zod3Weather],
  ["Standard JSON Schema", standardWeather],
  ["raw JSON Schema", rawWeather]
] as const

describe.each(sources)("makeArgumentCodec from %s", (_name, source) => {
  const codec = makeArgumentCodec(source)

  it("shows the same normalised schema as every other source", () => {
    expect(codec.jsonSchema).toEqual(WEATHER)
    expect(Object.keys(codec.jsonSchema["properties"] as object)).toEqual(["city", "days"])
  })

  it("decodes a valid value synchronously", () => {
    expect(sync(codec.decode({ city: "Oslo", days: 3 }))).toEqual({ ok: true, value: { city: "Oslo", days: 3 } })
    expect(sync(codec.decode({ city: "Oslo" }))).toEqual({ ok: true, value: { city: "Oslo" } })
  })

  it("reports each problem with its path and reason", () => {
    const r = sync(codec.decode({ days: 20 }))
    expect(r.ok).toBe(false)
    if (r.ok) return
    expect(r.issues).toContainEqual({ path: ["city"], message: "required" })
    expect(r.issues).toContainEqual({ path: ["days"], message: "expected integer <= 14, got 20" })
    expect(formatIssues(r.issues).split("; ").sort()).toEqual(["city: required", "days: expected integer <= 14, got 20"])
  })

  it("refuses extra properties, null for an optional field, non-integers and non-finite numbers", () => {
    expect(sync(codec.decode({ city: "Oslo", extra: 1 }))).toEqual({
      ok: false,
      issues: [{ path: ["extra"], message: "not allowed" }]
    })
    expect(sync(codec.decode({ city: "Oslo", days: null }))).toEqual({
      ok: false,
      issues: [{ path: ["days"], message: "expected integer, got null" }]
    })
    expect(sync(codec.decode({ city: "Oslo", days: 2.5 })).ok).toBe(false)
    expect(sync(codec.decode({ city: "Oslo", days: Number.POSITIVE_INFINITY })).ok).toBe(false)
    expect(sync(codec.decode({ city: "Oslo", days: Number.NaN })).ok).toBe(false)
  })

  it("refuses values that are not objects", () => {
    for (const bad of [null, [], "Oslo", 3, true]) expect(sync(codec.decode(bad)).ok).toBe(false)
    const r = sync(codec.decode([]))
    expect(r.ok ? "decoded" : formatIssues(r.issues)).toBe("expected object, got array")
  })
})

describe("Effect Schema pitfalls", () => {
  it("advertises Schema.Number as a plain number and refuses non-finite values", () => {
    const codec = makeArgumentCodec(Schema.Struct({ n: Schema.Number }))
    expect(codec.jsonSchema["properties"]).toEqual({ n: { type: "number" } })
    expect(sync(codec.decode({ n: 1.5 }))).toEqual({ ok: true, value: { n: 1.5 } })
    for (const n of [Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, Number.NaN, "Infinity", "NaN"]) {
      expect(sync(codec.decode({ n })).ok).toBe(false)
    }
  })

  it("refuses a checked Schema.Number, whose checks Effect drops from JSON Schema, and accepts Schema.Finite", () => {
    const lossy = Schema.Struct({ p: Schema.Number.check(Schema.isGreaterThanOrEqualTo(0)) })
    expect(() => makeArgumentCodec(lossy)).toThrow(/Schema\.Finite/)
    const nested = Schema.Struct({ xs: Schema.Array(Schema.Struct({ p: Schema.optional(lossy) })) })
    expect(() => makeArgumentCodec(nested)).toThrow(UnsupportedSchemaError)
    const codec = makeArgumentCodec(Schema.Struct({ p: Schema.Finite.check(Schema.isGreaterThanOrEqualTo(0)) }))
    expect(codec.jsonSchema["properties"]).toEqual({ p: { type: "number", minimum: 0 } })
    expect(sync(codec.decode({ p: -1 }))).toEqual({ ok: false, issues: [{ path: ["p"], message: "expected number >= 0, got -1" }] })
  })

  it("shows optional as absent, keeps an explicit NullOr, and decodes accordingly", () => {
    const codec = makeArgumentCodec(
      Schema.Struct({ a: Schema.optional(Schema.String), b: Schema.optional(Schema.NullOr(Schema.String)) })
    )
    expect(codec.jsonSchema["properties"]).toEqual({
      a: { type: "string" },
      b: { anyOf: [{ type: "string" }, { type: "null" }] }
    })
    expect(sync(codec.decode({ a: null })).ok).toBe(false)
    expect(sync(codec.decode({ b: null }))).toEqual({ ok: true, value: { b: null } })
    expect(sync(codec.decode({}))).toEqual({ ok: true, value: {} })
  })

  it("closes structs at every depth", () => {
    const codec = makeArgumentCodec(Schema.Struct({ inner: Schema.Struct({ x: Schema.String }) }))
    expect(codec.jsonSchema).toEqual({
      type: "object",
      properties: {
        inner: { type: "object", properties: { x: { type: "string" } }, required: ["x"], additionalProperties: false }
      },
      required: ["inner"],
      additionalProperties: false
    })
    expect(sync(codec.decode({ inner: { x: "a", y: 1 } }))).toEqual({
      ok: false,
      issues: [{ path: ["inner", "y"], message: "not allowed" }]
    })
  })

  it("decodes through the JSON codec, so transforms and JSON-encoded types come out typed", () => {
    const codec = makeArgumentCodec(Schema.Struct({ when: Schema.Date, n: Schema.NumberFromString }))
    const r = sync(codec.decode({ when: "2024-05-01T00:00:00.000Z", n: "42" }))
    expect(r.ok).toBe(true)
    if (!r.ok) return
    expect(r.value.when).toBeInstanceOf(Date)
    expect(r.value.when.toISOString()).toBe("2024-05-01T00:00:00.000Z")
    expect(r.value.n).toBe(42)
  })

  it("passes on the schema's own check failures when JSON Schema cannot express them", () => {
    const Even = Schema.Finite.check(Schema.makeFilter((n: number) => n % 2 === 0 || "expected an even number"))
    const codec = makeArgumentCodec(Schema.Struct({ n: Even }))
    expect(sync(codec.decode({ n: 4 }))).toEqual({ ok: true, value: { n: 4 } })
    const r = sync(codec.decode({ n: 3 }))
    expect(r).toEqual({ ok: false, issues: [{ path: ["n"], message: "expected an even number" }] })
  })

  it("maps an empty struct to the no-argument schema that accepts exactly {}", () => {
    const codec = makeArgumentCodec(Schema.Struct({}))
    expect(codec.jsonSchema).toEqual({ type: "object", properties: {}, additionalProperties: false })
    expect(sync(codec.decode({}))).toEqual({ ok: true, value: {} })
    expect(sync(codec.decode({ a: 1 })).ok).toBe(false)
    expect(sync(codec.decode("x")).ok).toBe(false)
  })

  it("refuses a recursive schema with a typed error", () => {
    interface Node {
      readonly name: string
      readonly children: ReadonlyArray<Node>
    }
    const Node: Schema.Codec<Node> = Schema.Struct({
      name: Schema.String,
      children: Schema.Array(Schema.suspend((): Schema.Codec<Node> => Node))
    }).annotate({ identifier: "Node" })
    expect(() => makeArgumentCodec(Schema.Struct({ root: Node }))).toThrow(RecursiveSchemaError)
  })
})

describe("zod pitfalls", () => {
  it("keeps zod 4 .int() safe-integer bounds, matching what zod accepts", () => {
    const codec = makeArgumentCodec(z.object({ i: z.number().int() }))
    // The bound stays: zod refuses unsafe integers, and JSON.parse cannot carry them exactly anyway.
    expect(codec.jsonSchema["properties"]).toEqual({
      i: { type: "integer", minimum: Number.MIN_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER }
    })
    expect(sync(codec.decode({ i: Number.MAX_SAFE_INTEGER })).ok).toBe(true)
    expect(sync(codec.decode({ i: 2 ** 60 })).ok).toBe(false)
  })

  it("never routes zod 4 through zod-to-json-schema (which would show no properties)", () => {
    const codec = makeArgumentCodec(z.object({ a: z.string(), b: z.boolean() }))
    expect(Object.keys(codec.jsonSchema["properties"] as object)).toEqual(["a", "b"])
    expect(codec.jsonSchema["required"]).toEqual(["a", "b"])
  })

  it("describes zod 4's input side: a defaulted field is optional and the default is applied", () => {
    const codec = makeArgumentCodec(z.object({ unit: z.enum(["c", "f"]).default("c") }))
    expect(codec.jsonSchema["required"]).toBeUndefined()
    expect(sync(codec.decode({}))).toEqual({ ok: true, value: { unit: "c" } })
    expect(sync(codec.decode({ unit: "k" }))).toEqual({
      ok: false,
      issues: [{ path: ["unit"], message: 'expected one of "c", "f", got "k"' }]
    })
  })

  it("refuses keys a loose zod object would pass through", () => {
    const codec = makeArgumentCodec(z.looseObject({ a: z.string() }))
    expect(codec.jsonSchema["additionalProperties"]).toBe(false)
    expect(sync(codec.decode({ a: "x", b: 1 })).ok).toBe(false)
  })

  it("inlines references zod-to-json-schema makes for a reused zod 3 schema", () => {
    const point = z3.object({ x: z3.number(), y: z3.number() })
    const codec = makeArgumentCodec(z3.object({ from: point, to: point }))
    expect(JSON.stringify(codec.jsonSchema)).not.toContain("$ref")
    expect(sync(codec.decode({ from: { x: 0, y: 0 }, to: { x: 1, y: 2 } })).ok).toBe(true)
    expect(sync(codec.decode({ from: { x: 0, y: 0 }, to: { x: 1 } })).ok).toBe(false)
  })

  it("reports zod's own refinement message when JSON Schema passes", () => {
    const codec = makeArgumentCodec(z.object({ s: z.string().refine((v) => v !== "no", "must not be no") }))
    expect(sync(codec.decode({ s: "no" }))).toEqual({ ok: false, issues: [{ path: ["s"], message: "must not be no" }] })
  })
})

describe("raw JSON Schema and Standard Schema", () => {
  it("accepts exactly {} for a tool with no arguments", () => {
    const codec = makeArgumentCodec({})
    expect(codec.jsonSchema).toEqual({ type: "object", properties: {}, additionalProperties: false })
    expect(sync(codec.decode({}))).toEqual({ ok: true, value: {} })
    expect(sync(codec.decode({ a: 1 }))).toEqual({ ok: false, issues: [{ path: ["a"], message: "not allowed" }] })
  })

  it("returns a promise when a Standard Schema validates asynchronously", async () => {
    const asyncStandard = {
      "~standard": {
        version: 1 as const,
        vendor: "test",
        validate: async (v: unknown) =>
          (v as { n: number }).n > 0 ? { value: v as { n: number } } : { issues: [{ message: "positive", path: ["n"] }] },
        jsonSchema: {
          input: () => ({ type: "object", properties: { n: { type: "number" } }, required: ["n"] }),
          output: () => ({ type: "object", properties: { n: { type: "number" } }, required: ["n"] })
        }
      }
    }
    const codec = makeArgumentCodec(asyncStandard)
    expect(await codec.decode({ n: 2 })).toEqual({ ok: true, value: { n: 2 } })
    expect(await codec.decode({ n: -1 })).toEqual({ ok: false, issues: [{ path: ["n"], message: "positive" }] })
    // The JSON Schema check runs first and synchronously.
    expect(codec.decode({ n: "x" })).toEqual({ ok: false, issues: [{ path: ["n"], message: 'expected number, got "x"' }] })
  })

  it("refuses things that are not schemas", () => {
    const notSchemas: ReadonlyArray<unknown> = [null, 3, "schema", [], new Date()]
    for (const bad of notSchemas) {
      expect(() => makeArgumentCodec(bad as never)).toThrow(UnsupportedSchemaError)
    }
  })

  it("describes anyOf failures once, without the per-branch noise", () => {
    const codec = makeArgumentCodec({
      type: "object",
      properties: { v: { anyOf: [{ type: "string" }, { type: "integer", minimum: 0 }] } },
      required: ["v"]
    })
    expect(sync(codec.decode({ v: true }))).toEqual({
      ok: false,
      issues: [{ path: ["v"], message: "expected string or integer, got true" }]
    })
  })

  it("renders nested and array paths", () => {
    const codec = makeArgumentCodec({
      type: "object",
      properties: {
        stops: { type: "array", maxItems: 2, items: { type: "object", properties: { name: { type: "string" } }, required: ["name"] } }
      },
      required: ["stops"]
    })
    const r = sync(codec.decode({ stops: [{ name: "a" }, { name: 1 }, {}] }))
    expect(r.ok).toBe(false)
    if (r.ok) return
    expect(formatIssues(r.issues).split("; ").sort()).toEqual([
      "stops: expected at most 2 items, got 3",
      "stops[1].name: expected string, got 1",
      "stops[2].name: required"
    ])
  })
})

describe("dispatch fast path", () => {
  it("lets the JSON Schema check alone decide when a schema adds nothing JSON Schema cannot say", () => {
    const input = { city: "Oslo", days: 2 }
    for (const source of [effectWeather, zod4Weather, rawWeather]) {
      const r = sync(makeArgumentCodec(source).decode(input))
      expect(r.ok && r.value).toBe(input)
    }
  })

  it("still runs the library when it checks more: Effect counts string length in UTF-16 units, JSON Schema in code points", () => {
    const emoji = "\u{1F600}"
    const effectCodec = makeArgumentCodec(Schema.Struct({ s: Schema.String.check(Schema.isMaxLength(1)) }))
    expect(sync(effectCodec.decode({ s: emoji })).ok).toBe(false)
    expect(sync(effectCodec.decode({ s: "a" }))).toEqual({ ok: true, value: { s: "a" } })
  })

  it("still runs zod for string formats, which the JSON Schema check does not enforce", () => {
    const codec = makeArgumentCodec(z.object({ to: z.email() }))
    expect(codec.jsonSchema["properties"]).toMatchObject({ to: { type: "string", format: "email" } })
    expect(sync(codec.decode({ to: "a@b.co" })).ok).toBe(true)
    const r = sync(codec.decode({ to: "nope" }))
    expect(r.ok).toBe(false)
    if (!r.ok) expect(r.issues[0]?.path).toEqual(["to"])
  })
})

describe("formatIssues", () => {
  it("joins issues in order, one short line", () => {
    expect(
      formatIssues([
        { path: ["days"], message: "expected integer <= 14, got 20" },
        { path: ["city"], message: "required" },
        { path: [], message: "expected object, got null" },
        { path: ["a", 0, "b"], message: "x" }
      ])
    ).toBe("days: expected integer <= 14, got 20; city: required; expected object, got null; a[0].b: x")
  })
})

describe("InferArguments", () => {
  it("infers the decoded type from every source", () => {
    type Weather = { readonly city: string; readonly days?: number }
    expectTypeOf<InferArguments<typeof effectWeather>>().toEqualTypeOf<Weather>()
    expectTypeOf<InferArguments<typeof zod4Weather>>().toEqualTypeOf<{ city: string; days?: number | undefined }>()
    expectTypeOf<InferArguments<typeof zod3Weather>>().toEqualTypeOf<{ city: string; days?: number | undefined }>()
    expectTypeOf<InferArguments<typeof standardWeather>>().toEqualTypeOf<{ city: string; days?: number | undefined }>()
    expectTypeOf<InferArguments<typeof rawWeather>>().toEqualTypeOf<{ city: string; days?: number }>()
    expectTypeOf<InferArguments<typeof WEATHER>>().toEqualTypeOf<unknown>()
    const codec = makeArgumentCodec(zod4Weather)
    expectTypeOf(codec.decode).returns.toEqualTypeOf<
      DecodeResult<{ city: string; days?: number | undefined }> | Promise<DecodeResult<{ city: string; days?: number | undefined }>>
    >()
  })
})
