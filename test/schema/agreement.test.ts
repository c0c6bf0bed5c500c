import { Effect, Schema } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { z } from "zod"
import { z as z3 } from "zod/v3"
import type { DecodeResult } from "../../src/schema/argument-codec.ts"
import { type ArgumentSchema, makeArgumentCodec } from "../../src/schema/codec.ts"
import { arbitraryOf, corruptionsOf, oracle, type S } from "./agreement-generators.ts"

/*
 * The promise under test: the schema a model is shown and the decoder agree. Values generated from the
 * advertised (normalised) JSON Schema must decode; single-point corruptions of such values that the schema
 * forbids must be refused.
 */

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

/**
 * The two properties, for one schema: values the advertised schema allows decode (to themselves when
 * `unchanged`), and single-point corruptions it forbids are refused with at least one issue.
 */
const agreement = (source: ArgumentSchema, runs: number, unchanged = true): void => {
  const codec = makeArgumentCodec(source)
  const advertised = codec.jsonSchema as S
  const valid = oracle(advertised)
  const values = arbitraryOf(advertised).filter(valid)
  fc.assert(
    fc.property(values, (value) => {
      const r = sync(codec.decode(value))
      if (!r.ok) throw new Error(`refused ${JSON.stringify(value)}: ${JSON.stringify(r.issues)}`)
      if (unchanged) expect(r.value).toEqual(value)
      const bad = corruptionsOf(advertised, value).filter((b) => !valid(b))
      expect(bad.length).toBeGreaterThan(0)
      for (const b of bad) {
        const refused = sync(codec.decode(b))
        if (refused.ok) throw new Error(`accepted ${JSON.stringify(b)} (from ${JSON.stringify(value)})`)
        expect(refused.issues.length).toBeGreaterThan(0)
      }
    }),
    { numRuns: runs, seed: 20260 }
  )
}

describe.each(cases)("schema and decoder agree for %s", (_name, small, nested) => {
  it("small: allowed values decode unchanged, forbidden corruptions are refused", () => agreement(small, 80))
  it("nested: allowed values decode unchanged, forbidden corruptions are refused", () => agreement(nested, 25))
})

describe("the generator itself", () => {
  it("covers the nested shape: arrays, enums, nullable and optional fields all occur", () => {
    const codec = makeArgumentCodec(cases[4]![2])
    const samples = fc.sample(arbitraryOf(codec.jsonSchema as S), { numRuns: 200, seed: 7 })
    const stops = samples.flatMap((s) => ((s as { stops: ReadonlyArray<{ note: unknown; nights?: number }> }).stops))
    expect(stops.some((s) => s.note === null)).toBe(true)
    expect(stops.some((s) => typeof s.note === "string")).toBe(true)
    expect(stops.some((s) => s.nights === undefined)).toBe(true)
    expect(samples.some((s) => (s as { days?: number }).days !== undefined)).toBe(true)
  })
})

/*
 * Every check the libraries offer, one field each: the rule is the same, the advertised schema is the contract.
 * Fields with defaults decode to a different value, so they are checked for acceptance and refusal only.
 */
const effectEvery = Schema.Struct({
  minLen: Schema.String.check(Schema.isMinLength(2)),
  maxLen: Schema.String.check(Schema.isMaxLength(4)),
  between: Schema.String.check(Schema.isBetweenLength(2, 4)),
  exact: Schema.String.check(Schema.isBetweenLength(3, 3)),
  nonEmpty: Schema.NonEmptyString,
  codePoints: Schema.String.check(Schema.isBetweenCodePoints(1, 3)),
  pattern: Schema.String.check(Schema.isPattern(/^[a-c]+-\d$/)),
  patternU: Schema.String.check(Schema.isPattern(/^x\p{Lu}?$/u)),
  starts: Schema.String.check(Schema.isStartingWith("w.w")),
  ends: Schema.String.check(Schema.isEndingWith("-z")),
  includes: Schema.String.check(Schema.isIncluding("(a)")),
  trimmed: Schema.Trimmed,
  gt: Schema.Finite.check(Schema.isGreaterThan(-2.5)),
  gte: Schema.Finite.check(Schema.isGreaterThanOrEqualTo(0)),
  lt: Schema.Finite.check(Schema.isLessThan(10)),
  lte: Schema.Finite.check(Schema.isLessThanOrEqualTo(10)),
  range: Schema.Finite.check(Schema.isBetween({ minimum: 1, maximum: 3, exclusiveMinimum: true })),
  multiple: Schema.Int.check(Schema.isMultipleOf(3)),
  decimal: Schema.Finite.check(Schema.isMultipleOf(0.25), Schema.isBetween({ minimum: -10, maximum: 10 })),
  tenth: Schema.Finite.check(Schema.isMultipleOf(0.1), Schema.isBetween({ minimum: 0, maximum: 5 })),
  int: Schema.Int,
  int32: Schema.Int.check(Schema.isInt32()),
  literal: Schema.Literal(3),
  literals: Schema.Literals(["a", 1, true]),
  enum: Schema.Enum({ A: "a", B: 2 } as const),
  tuple: Schema.Tuple([Schema.String, Schema.Finite]),
  tupleOpt: Schema.Tuple([Schema.String, Schema.optionalKey(Schema.Boolean)]),
  tupleRest: Schema.TupleWithRest(Schema.Tuple([Schema.String]), [Schema.Int]),
  record: Schema.Record(Schema.String, Schema.Finite),
  keyed: Schema.Record(Schema.Literals(["x", "y"]), Schema.Boolean),
  items: Schema.Array(Schema.String).check(Schema.isBetweenLength(1, 3)),
  minItems: Schema.Array(Schema.Int).check(Schema.isMinLength(2)),
  nonEmptyArray: Schema.NonEmptyArray(Schema.Boolean),
  unique: Schema.Array(Schema.Int).check(Schema.isUnique()),
  optional: Schema.optional(Schema.String),
  optionalKey: Schema.optionalKey(Schema.Finite),
  optionalNull: Schema.optional(Schema.NullOr(Schema.String)),
  nullable: Schema.NullOr(Schema.Int),
  union: Schema.Union([Schema.String.check(Schema.isMinLength(2)), Schema.Finite, Schema.Boolean]),
  tagged: Schema.Union([
    Schema.Struct({ kind: Schema.Literal("a"), x: Schema.String }),
    Schema.Struct({ kind: Schema.Literal("b"), y: Schema.optional(Schema.Int) })
  ]),
  nested: Schema.Struct({ deep: Schema.Struct({ n: Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 9 })) }) }),
  uuid: Schema.String.check(Schema.isUUID(4))
})
const effectDefaults = Schema.Struct({
  name: Schema.String.pipe(Schema.optional, Schema.withDecodingDefault(Effect.succeed("x"))),
  n: Schema.optional(Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 5 })))
})

const zod4Every = z.object({
  minLen: z.string().min(2),
  maxLen: z.string().max(4),
  exact: z.string().length(3),
  regex: z.string().regex(/^[a-c]+-\d$/),
  starts: z.string().startsWith("w.w"),
  ends: z.string().endsWith("-z"),
  includes: z.string().includes("(a)"),
  lower: z.string().lowercase(),
  gt: z.number().gt(-2.5),
  gte: z.number().gte(0),
  lt: z.number().lt(10),
  lte: z.number().lte(10),
  positive: z.number().positive(),
  multiple: z.int().multipleOf(3),
  decimal: z.number().multipleOf(0.25).min(-10).max(10),
  tenth: z.number().multipleOf(0.1).min(0).max(5),
  int: z.int(),
  literal: z.literal([1, "x", true]),
  enum: z.enum(["a", "b"]),
  native: z.enum({ A: 1, B: "b" }),
  tuple: z.tuple([z.string(), z.number()]),
  tupleRest: z.tuple([z.string()], z.int()),
  record: z.record(z.string(), z.number()),
  keyed: z.record(z.enum(["x", "y"]), z.boolean()),
  partialKeyed: z.partialRecord(z.enum(["x", "y"]), z.boolean()),
  items: z.array(z.string()).min(1).max(3),
  itemsExact: z.array(z.int()).length(2),
  optional: z.string().optional(),
  nullable: z.int().nullable(),
  nullish: z.string().nullish(),
  union: z.union([z.string().min(2), z.number(), z.boolean()]),
  tagged: z.discriminatedUnion("kind", [
    z.object({ kind: z.literal("a"), x: z.string() }),
    z.object({ kind: z.literal("b"), y: z.int().optional() })
  ]),
  nested: z.object({ deep: z.object({ n: z.int().min(0).max(9) }) }),
  email: z.email(),
  uuid: z.uuid(),
  date: z.iso.date(),
  ipv4: z.ipv4()
})
const zod4Defaults = z.object({ name: z.string().default("x"), n: z.int().min(0).max(5).optional(), t: z.string().trim() })

const zod3Every = z3.object({
  minLen: z3.string().min(2),
  maxLen: z3.string().max(4),
  exact: z3.string().length(3),
  regex: z3.string().regex(/^[a-c]+-\d$/),
  regexI: z3.string().regex(/^ab?$/i),
  starts: z3.string().startsWith("www"),
  ends: z3.string().endsWith("-z!"),
  includes: z3.string().includes("(a)"),
  gt: z3.number().gt(-2.5),
  gte: z3.number().gte(0),
  lt: z3.number().lt(10),
  positive: z3.number().positive(),
  negativeInt: z3.number().int().negative(),
  multiple: z3.number().int().multipleOf(3),
  decimal: z3.number().multipleOf(0.25).min(-10).max(10),
  tenth: z3.number().multipleOf(0.1).min(0).max(5),
  int: z3.number().int(),
  literal: z3.literal(3),
  enum: z3.enum(["a", "b"]),
  native: z3.nativeEnum({ A: 1, B: "b" } as const),
  tuple: z3.tuple([z3.string(), z3.number()]),
  tupleRest: z3.tuple([z3.string()]).rest(z3.number().int()),
  record: z3.record(z3.string(), z3.number()),
  items: z3.array(z3.string()).min(1).max(3),
  itemsExact: z3.array(z3.number().int()).length(2),
  nonEmpty: z3.array(z3.boolean()).nonempty(),
  optional: z3.string().optional(),
  nullable: z3.number().int().nullable(),
  nullish: z3.string().nullish(),
  union: z3.union([z3.string().min(2), z3.number(), z3.boolean()]),
  tagged: z3.discriminatedUnion("kind", [
    z3.object({ kind: z3.literal("a"), x: z3.string() }),
    z3.object({ kind: z3.literal("b"), y: z3.number().int().optional() })
  ]),
  nested: z3.object({ deep: z3.object({ n: z3.number().int().min(0).max(9) }) }),
  cuid: z3.string().cuid()
})
const zod3Defaults = z3.object({ name: z3.string().default("x"), n: z3.number().int().min(0).max(5).optional() })

const perField: ReadonlyArray<readonly [string, ReadonlyArray<readonly [string, ArgumentSchema]>]> = [
  ["Effect Schema", Object.entries(effectEvery.fields).map(([k, f]) => [k, Schema.Struct({ [k]: f })] as const)],
  ["zod 4", Object.entries(zod4Every.shape).map(([k, f]) => [k, z.object({ [k]: f })] as const)],
  ["zod 3", Object.entries(zod3Every.shape).map(([k, f]) => [k, z3.object({ [k]: f })] as const)]
]

describe.each(perField)("every check %s offers: the advertised schema is what the decoder accepts", (_name, fields) => {
  it.each(fields)("%s", (_field, schema) => agreement(schema, 15))
})

describe("all checks together", () => {
  it("Effect Schema", () => agreement(effectEvery, 3))
  it("Effect Schema with defaults", () => agreement(effectDefaults, 30, false))
  it("zod 4", () => agreement(zod4Every, 3))
  it("zod 4 with defaults and transforms", () => agreement(zod4Defaults, 30, false))
  it("zod 3", () => agreement(zod3Every, 3))
  it("zod 3 with defaults", () => agreement(zod3Defaults, 30, false))
})
