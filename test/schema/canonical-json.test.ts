import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { canonicalJson, canonicalSchemaJson } from "../../src/schema/canonical-json.ts"

/** The same object with its own keys inserted in a different order (deeply), `keep` naming keys left alone. */
const reorder = (value: unknown, seed: number, keepOrderUnder?: string, parentKey?: string): unknown => {
  if (Array.isArray(value)) return value.map((v) => reorder(v, seed + 1, keepOrderUnder))
  if (typeof value !== "object" || value === null) return value
  const keys = Object.keys(value)
  const shuffled =
    parentKey !== undefined && parentKey === keepOrderUnder
      ? keys
      : keys.map((k, i) => [k, (i * 7919 + seed * 104729) % 1009] as const).sort((a, b) => a[1] - b[1]).map(([k]) => k)
  // fromEntries, not assignment: `out["__proto__"] = …` sets the copy's prototype and loses the key (this made the
  // property below fail about one run in twelve, when fast-check generated a "__proto__" key).
  return Object.fromEntries(shuffled.map((key) => [key, reorder((value as Record<string, unknown>)[key], seed + 3, keepOrderUnder, key)]))
}

describe("canonicalJson", () => {
  it("sorts object keys by UTF-16 code unit at every depth", () => {
    expect(canonicalJson({ b: 1, a: { d: [{ z: 1, y: 2 }], c: null }, B: true, é: "x", Z: "z" })).toBe(
      '{"B":true,"Z":"z","a":{"c":null,"d":[{"y":2,"z":1}]},"b":1,"é":"x"}'
    )
    // Code-unit order puts U+FFFF after an astral character's high surrogate (U+D83D), unlike code-point order.
    expect(canonicalJson({ "\uffff": 1, "😀": 2 })).toBe('{"😀":2,"\uffff":1}')
  })

  it("drops undefined members, writes non-finite numbers as null, honours toJSON", () => {
    const date = new Date(Date.UTC(2026, 0, 2))
    expect(canonicalJson({ a: undefined, b: Number.NaN, c: [undefined, Infinity], d: date, e: { toJSON: () => ({ z: 1, y: 2 }) } })).toBe(
      '{"b":null,"c":[null,null],"d":"2026-01-02T00:00:00.000Z","e":{"y":2,"z":1}}'
    )
  })

  it("sorts the keys of a data object named properties (only schemas keep that order)", () => {
    expect(canonicalJson({ properties: { b: 1, a: 2 } })).toBe('{"properties":{"a":2,"b":1}}')
  })

  it("parses back to an equal value and is order-independent (property)", () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.integer({ min: 0, max: 1000 }), (value, seed) => {
        const text = canonicalJson(value)
        expect(JSON.parse(text)).toEqual(JSON.parse(JSON.stringify(value)))
        expect(canonicalJson(reorder(value, seed))).toBe(text)
      })
    )
  })
})

describe("canonicalSchemaJson", () => {
  const schema = {
    type: "object",
    $schema: "https://json-schema.org/draft/2020-12/schema",
    properties: {
      zeta: { type: "string", description: "first on purpose" },
      alpha: {
        type: "object",
        properties: { y: { type: "integer" }, properties: { type: "string", description: "a property named properties" } },
        additionalProperties: false
      }
    },
    required: ["zeta"],
    additionalProperties: false,
    $defs: { b: { type: "null" }, a: { enum: [{ q: 1, p: 2 }] } }
  }

  it("keeps the author's order of properties, sorts everything else, drops $schema", () => {
    expect(canonicalSchemaJson(schema)).toBe(
      '{"$defs":{"a":{"enum":[{"p":2,"q":1}]},"b":{"type":"null"}},"additionalProperties":false,' +
        '"properties":{"zeta":{"description":"first on purpose","type":"string"},' +
        '"alpha":{"additionalProperties":false,"properties":{"y":{"type":"integer"},' +
        '"properties":{"description":"a property named properties","type":"string"}},"type":"object"}},' +
        '"required":["zeta"],"type":"object"}'
    )
  })

  it("gives the same bytes however the schema objects were built, except property order (property)", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 100_000 }), (seed) => {
        expect(canonicalSchemaJson(reorder(schema, seed, "properties"))).toBe(canonicalSchemaJson(schema))
      })
    )
  })

  it("changes bytes when the property order changes", () => {
    const swapped = { ...schema, properties: { alpha: schema.properties.alpha, zeta: schema.properties.zeta } }
    expect(canonicalSchemaJson(swapped)).not.toBe(canonicalSchemaJson(schema))
  })
})
