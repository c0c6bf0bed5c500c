import { Schema } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { z } from "zod"
import { z as z3 } from "zod/v3"
import type { DecodeResult } from "../../src/schema/argument-codec.ts"
import { type ArgumentSchema, makeArgumentCodec } from "../../src/schema/codec.ts"
import type { JsonValue } from "../../src/schema/json-schema.ts"

/*
 * The promise under test: the schema a model is shown and the decoder agree. Values generated from the
 * advertised (normalised) JSON Schema must decode; single-point corruptions of such values that the schema
 * forbids must be refused.
 */

type S = { readonly [k: string]: JsonValue }
const isRecord = (v: JsonValue | undefined): v is S => typeof v === "object" && v !== null && !Array.isArray(v)
const asSchema = (v: JsonValue | undefined): S => (isRecord(v) ? v : {})
const typesOf = (s: S): ReadonlyArray<string> =>
  Array.isArray(s["type"]) ? (s["type"] as ReadonlyArray<string>) : typeof s["type"] === "string" ? [s["type"]] : []
const num = (v: JsonValue | undefined): number | undefined => (typeof v === "number" ? v : undefined)

/** An arbitrary of values valid for the subset of JSON Schema the codec emits. */
const arbitraryOf = (s: S): fc.Arbitrary<JsonValue> => {
  if (Array.isArray(s["enum"])) return fc.constantFrom(...(s["enum"] as ReadonlyArray<JsonValue>))
  if (Array.isArray(s["anyOf"])) return fc.oneof(...(s["anyOf"] as ReadonlyArray<JsonValue>).map((b) => arbitraryOf(asSchema(b))))
  const types = typesOf(s)
  if (types.length > 1) return fc.oneof(...types.map((t) => arbitraryOf({ ...s, type: t })))
  switch (types[0]) {
    case "null":
      return fc.constant(null)
    case "boolean":
      return fc.boolean()
    case "string":
      return fc.string({ maxLength: 12 })
    case "integer":
      return fc.integer({ min: num(s["minimum"]) ?? -1_000_000, max: num(s["maximum"]) ?? 1_000_000 })
    case "number":
      return fc.double({
        min: num(s["minimum"]) ?? -1e9,
        max: num(s["maximum"]) ?? 1e9,
        noNaN: true,
        noDefaultInfinity: true
      })
    case "array":
      return fc.array(arbitraryOf(asSchema(s["items"])), {
        minLength: num(s["minItems"]) ?? 0,
        maxLength: num(s["maxItems"]) ?? 4
      })
    case "object": {
      const props = asSchema(s["properties"])
      const required = (s["required"] ?? []) as ReadonlyArray<string>
      const shape = Object.fromEntries(Object.entries(props).map(([k, v]) => [k, arbitraryOf(asSchema(v))]))
      return fc.record(shape, { requiredKeys: [...required] }) as fc.Arbitrary<JsonValue>
    }
    default:
      throw new Error(`generator does not cover ${JSON.stringify(s)}`)
  }
}

const allowsNull = (s: S): boolean =>
  typesOf(s).includes("null") ||
  (Array.isArray(s["enum"]) && s["enum"].includes(null)) ||
  (Array.isArray(s["anyOf"]) && s["anyOf"].some((b) => allowsNull(asSchema(b))))

const allowedTypes = (s: S): ReadonlyArray<string> =>
  Array.isArray(s["anyOf"]) ? s["anyOf"].flatMap((b) => allowedTypes(asSchema(b))) : typesOf(s)

/** A value whose JSON type the schema does not allow at all. */
const wrongType = (s: S): JsonValue | undefined => {
  const allowed = allowedTypes(s)
  const candidates: ReadonlyArray<readonly [string, JsonValue]> = [
    ["boolean", true],
    ["string", "17"],
    ["number", 17.5],
    ["array", []],
    ["object", {}],
    ["null", null]
  ]
  const hit = candidates.find(([t]) => !allowed.includes(t))
  return allowed.length === 0 ? undefined : hit?.[1]
}

/** Every single-point corruption of a valid value `v` that the schema `s` forbids. */
const corruptions = (s: S, v: JsonValue): ReadonlyArray<JsonValue> => {
  const out: Array<JsonValue> = []
  const wrong = wrongType(s)
  if (wrong !== undefined) out.push(wrong)
  if (Array.isArray(s["enum"])) out.push("__not_in_enum__")
  if (Array.isArray(s["anyOf"])) {
    const branch = (s["anyOf"] as ReadonlyArray<JsonValue>).map(asSchema).find((b) => !typesOf(b).includes("null") && v !== null)
    if (branch !== undefined) out.push(...corruptions(branch, v).filter((c) => c !== null || !allowsNull(s)))
    return out
  }
  const t = typeof v === "number" ? (Number.isInteger(v) ? typesOf(s).find((x) => x === "integer" || x === "number") : "number") : undefined
  if (typeof v === "number" && t !== undefined) {
    out.push(Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, Number.NaN)
    if (t === "integer") out.push(v + 0.5)
    const min = num(s["minimum"])
    const max = num(s["maximum"])
    if (min !== undefined) out.push(min - 1)
    if (max !== undefined) out.push(max + 1)
  }
  if (Array.isArray(v)) {
    const max = num(s["maxItems"])
    if (max !== undefined && v.length > 0) out.push([...v, ...Array.from({ length: max }, () => v[0] as JsonValue)])
    v.forEach((item, i) => {
      for (const bad of corruptions(asSchema(s["items"]), item)) out.push(v.map((x, j) => (j === i ? bad : x)))
    })
  } else if (isRecord(v)) {
    const props = asSchema(s["properties"])
    const required = (s["required"] ?? []) as ReadonlyArray<string>
    out.push({ ...v, __extra__: 1 })
    for (const key of required) {
      const { [key]: _dropped, ...rest } = v
      out.push(rest)
    }
    for (const [key, sub] of Object.entries(props)) {
      const subSchema = asSchema(sub)
      if (!(key in v)) {
        if (!allowsNull(subSchema)) out.push({ ...v, [key]: null })
        continue
      }
      for (const bad of corruptions(subSchema, v[key] as JsonValue)) out.push({ ...v, [key]: bad })
    }
  }
  return out
}

const sync = <A>(r: DecodeResult<A> | Promise<DecodeResult<A>>): DecodeResult<A> => {
  if (r instanceof Promise) throw new Error("expected a synchronous decode")
  return r
}

const effectStop = Schema.Struct({
  name: Schema.String,
  kind: Schema.Literals(["hotel", "camp"]),
  note: Schema.NullOr(Schema.String),
  nights: Schema.optional(Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 30 }))),
  price: Schema.Finite.check(Schema.isGreaterThanOrEqualTo(0)),
  booked: Schema.Boolean
})
const zod4Stop = z.object({
  name: z.string(),
  kind: z.enum(["hotel", "camp"]),
  note: z.string().nullable(),
  nights: z.number().int().min(0).max(30).optional(),
  price: z.number().min(0),
  booked: z.boolean()
})
const zod3Stop = z3.object({
  name: z3.string(),
  kind: z3.enum(["hotel", "camp"]),
  note: z3.string().nullable(),
  nights: z3.number().int().min(0).max(30).optional(),
  price: z3.number().min(0),
  booked: z3.boolean()
})
const rawStop = {
  type: "object",
  properties: {
    name: { type: "string" },
    kind: { type: "string", enum: ["hotel", "camp"] },
    note: { type: ["string", "null"] },
    nights: { type: "integer", minimum: 0, maximum: 30 },
    price: { type: "number", minimum: 0 },
    booked: { type: "boolean" }
  },
  required: ["name", "kind", "note", "price", "booked"]
}

const cases: ReadonlyArray<readonly [string, ArgumentSchema, ArgumentSchema]> = [
  [
    "Effect Schema",
    Schema.Struct({ city: Schema.String, days: Schema.optional(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 14 }))) }),
    Schema.Struct({
      city: Schema.String,
      days: Schema.optional(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 14 }))),
      stops: Schema.Array(effectStop).check(Schema.isMaxLength(3))
    })
  ],
  [
    "zod 4",
    z.object({ city: z.string(), days: z.number().int().min(1).max(14).optional() }),
    z.object({ city: z.string(), days: z.number().int().min(1).max(14).optional(), stops: z.array(zod4Stop).max(3) })
  ],
  [
    "zod 3",
    z3.object({ city: z3.string(), days: z3.number().int().min(1).max(14).optional() }),
    z3.object({ city: z3.string(), days: z3.number().int().min(1).max(14).optional(), stops: z3.array(zod3Stop).max(3) })
  ],
  [
    "Standard JSON Schema",
    { "~standard": z.object({ city: z.string(), days: z.number().int().min(1).max(14).optional() })["~standard"] },
    {
      "~standard": z.object({ city: z.string(), days: z.number().int().min(1).max(14).optional(), stops: z.array(zod4Stop).max(3) })[
        "~standard"
      ]
    }
  ],
  [
    "raw JSON Schema",
    { type: "object", properties: { city: { type: "string" }, days: { type: "integer", minimum: 1, maximum: 14 } }, required: ["city"] },
    {
      type: "object",
      properties: {
        city: { type: "string" },
        days: { type: "integer", minimum: 1, maximum: 14 },
        stops: { type: "array", items: rawStop, maxItems: 3 }
      },
      required: ["city", "stops"]
    }
  ]
]

describe.each(cases)("schema and decoder agree for %s", (_name, small, nested) => {
  for (const [label, source] of [["small", small], ["nested", nested]] as const) {
    const codec = makeArgumentCodec(source)

    it(`${label}: every value the schema allows decodes, unchanged`, () => {
      fc.assert(
        fc.property(arbitraryOf(codec.jsonSchema), (value) => {
          const r = sync(codec.decode(value))
          expect(r).toEqual({ ok: true, value })
        }),
        { numRuns: 300 }
      )
    })

    it(`${label}: every corruption the schema forbids is refused with a located issue`, () => {
      fc.assert(
        fc.property(arbitraryOf(codec.jsonSchema), (value) => {
          const bad = corruptions(codec.jsonSchema, value)
          expect(bad.length).toBeGreaterThan(0)
          for (const b of bad) {
            const r = sync(codec.decode(b))
            if (r.ok) throw new Error(`accepted ${JSON.stringify(b)} (from ${JSON.stringify(value)})`)
            expect(r.issues.length).toBeGreaterThan(0)
          }
        }),
        { numRuns: 200 }
      )
    })
  }
})

describe("the generator itself", () => {
  it("covers the nested shape: arrays, enums, nullable and optional fields all occur", () => {
    const codec = makeArgumentCodec(cases[4]![2])
    const samples = fc.sample(arbitraryOf(codec.jsonSchema), { numRuns: 200, seed: 7 })
    const stops = samples.flatMap((s) => ((s as { stops: ReadonlyArray<{ note: unknown; nights?: number }> }).stops))
    expect(stops.some((s) => s.note === null)).toBe(true)
    expect(stops.some((s) => typeof s.note === "string")).toBe(true)
    expect(stops.some((s) => s.nights === undefined)).toBe(true)
    expect(samples.some((s) => (s as { days?: number }).days !== undefined)).toBe(true)
  })
})
