import { Schema } from "effect"
import { describe, expect, it } from "vitest"
import { z } from "zod"
import { z as z3 } from "zod/v3"
import { zodToJsonSchema } from "zod-to-json-schema"
import type { JsonSchema } from "../../src/schema/json-schema.ts"
import { normalizeJsonSchema, RecursiveSchemaError, UnsupportedSchemaError } from "../../src/schema/normalize.ts"

const EMPTY = { type: "object", properties: {}, additionalProperties: false }

describe("normalizeJsonSchema", () => {
  it("drops $schema and $id", () => {
    const out = normalizeJsonSchema({
      $schema: "https://json-schema.org/draft/2020-12/schema",
      $id: "urn:x",
      type: "object",
      properties: { a: { $id: "urn:a", type: "string" } },
      required: ["a"]
    })
    expect(out).toEqual({ type: "object", properties: { a: { type: "string" } }, required: ["a"], additionalProperties: false })
  })

  it("inlines $defs and definitions references, keeping sibling annotations", () => {
    const out = normalizeJsonSchema({
      type: "object",
      properties: {
        a: { $ref: "#/$defs/Id", description: "first" },
        b: { $ref: "#/definitions/Point" }
      },
      $defs: { Id: { type: "string" } },
      definitions: { Point: { type: "object", properties: { x: { type: "number" } }, required: ["x"] } }
    })
    expect(out).toEqual({
      type: "object",
      properties: {
        a: { type: "string", description: "first" },
        b: { type: "object", properties: { x: { type: "number" } }, required: ["x"], additionalProperties: false }
      },
      additionalProperties: false
    })
  })

  it("inlines the pointer references zod-to-json-schema emits for a reused zod 3 schema", () => {
    const point = z3.object({ x: z3.number() })
    const out = normalizeJsonSchema(zodToJsonSchema(z3.object({ from: point, to: point })) as JsonSchema)
    const props = out["properties"] as Record<string, unknown>
    expect(props["to"]).toEqual(props["from"])
    expect(JSON.stringify(out)).not.toContain("$ref")
  })

  it("inlines Effect identifier definitions", () => {
    const Id = Schema.String.annotate({ identifier: "Id" })
    const doc = Schema.toJsonSchemaDocument(Schema.Struct({ a: Id, b: Id }), { onExcessProperty: "error" })
    const out = normalizeJsonSchema({ ...(doc.schema as JsonSchema), $defs: doc.definitions as JsonSchema })
    expect(out).toEqual({
      type: "object",
      properties: { a: { type: "string" }, b: { type: "string" } },
      required: ["a", "b"],
      additionalProperties: false
    })
  })

  it("reports a recursive reference as a typed error", () => {
    const schema: JsonSchema = {
      type: "object",
      properties: { root: { $ref: "#/$defs/Node" } },
      $defs: { Node: { type: "object", properties: { children: { type: "array", items: { $ref: "#/$defs/Node" } } } } }
    }
    let caught: unknown
    try {
      normalizeJsonSchema(schema)
    } catch (e) {
      caught = e
    }
    expect(caught).toBeInstanceOf(RecursiveSchemaError)
    expect((caught as RecursiveSchemaError).ref).toBe("#/$defs/Node")
    expect((caught as RecursiveSchemaError)._tag).toBe("RecursiveSchemaError")
  })

  it("reports unresolvable and external references", () => {
    expect(() => normalizeJsonSchema({ type: "object", properties: { a: { $ref: "#/$defs/Nope" } } })).toThrow(
      UnsupportedSchemaError
    )
    expect(() => normalizeJsonSchema({ type: "object", properties: { a: { $ref: "https://x/y.json" } } })).toThrow(
      UnsupportedSchemaError
    )
  })

  it("refuses a root that is not an object", () => {
    // Effect's empty struct means "any non-nullish value"; the Effect source maps it to the no-argument schema.
    expect(() => normalizeJsonSchema({ not: { type: "null" } })).toThrow(UnsupportedSchemaError)
    expect(() => normalizeJsonSchema({ type: "string" })).toThrow(UnsupportedSchemaError)
    expect(() => normalizeJsonSchema({ type: "array", items: { type: "string" } })).toThrow(/type "array"/)
  })

  it("removes the Infinity/NaN string branch Effect advertises for Schema.Number", () => {
    const doc = Schema.toJsonSchemaDocument(Schema.Struct({ n: Schema.Number }), { onExcessProperty: "error" })
    expect(JSON.stringify(doc.schema)).toContain("Infinity")
    const out = normalizeJsonSchema(doc.schema as JsonSchema)
    expect(out["properties"]).toEqual({ n: { type: "number" } })
  })

  it("keeps a string enum that merely looks non-finite when no number branch sits beside it", () => {
    const out = normalizeJsonSchema({
      type: "object",
      properties: { s: { anyOf: [{ type: "string", enum: ["NaN"] }, { type: "boolean" }] } }
    })
    expect(out["properties"]).toEqual({ s: { anyOf: [{ type: "string", enum: ["NaN"] }, { type: "boolean" }] } })
  })

  it("closes every object that declares properties, at any depth", () => {
    const out = normalizeJsonSchema({
      type: "object",
      properties: {
        open: { type: "object", properties: { a: { type: "string" } }, additionalProperties: true },
        loose: { type: "object", properties: { a: { type: "string" } }, additionalProperties: {} },
        list: { type: "array", items: { type: "object", properties: { b: { type: "number" } } } }
      },
      additionalProperties: true
    })
    expect(out["additionalProperties"]).toBe(false)
    const p = out["properties"] as Record<string, Record<string, unknown>>
    expect(p["open"]?.["additionalProperties"]).toBe(false)
    expect(p["loose"]?.["additionalProperties"]).toBe(false)
    expect((p["list"]?.["items"] as Record<string, unknown>)["additionalProperties"]).toBe(false)
  })

  it("keeps a typed record's additionalProperties schema", () => {
    const out = normalizeJsonSchema(z.toJSONSchema(z.object({ scores: z.record(z.string(), z.number()) })) as JsonSchema)
    const scores = (out["properties"] as Record<string, Record<string, unknown>>)["scores"]
    expect(scores?.["additionalProperties"]).toEqual({ type: "number" })
  })

  it("keeps the author's property order", () => {
    const names = ["zeta", "alpha", "mid", "beta", "omega"]
    const shape = Object.fromEntries(names.map((n) => [n, z.string()]))
    const out = normalizeJsonSchema(z.toJSONSchema(z.object(shape)) as JsonSchema)
    expect(Object.keys(out["properties"] as object)).toEqual(names)
  })

  it("turns an empty or property-less root into the no-argument schema", () => {
    expect(normalizeJsonSchema({})).toEqual(EMPTY)
    expect(normalizeJsonSchema({ type: "object" })).toEqual(EMPTY)
    expect(normalizeJsonSchema(z.toJSONSchema(z.object({})) as JsonSchema)).toEqual(EMPTY)
  })

  it("collapses single alternatives and removes duplicates", () => {
    const out = normalizeJsonSchema({
      type: "object",
      properties: {
        a: { anyOf: [{ type: "string" }], description: "d" },
        b: { anyOf: [{ type: "string" }, { type: "null" }, { type: "null" }] }
      }
    })
    expect(out["properties"]).toEqual({
      a: { type: "string", description: "d" },
      b: { anyOf: [{ type: "string" }, { type: "null" }] }
    })
  })

  it("returns a deeply frozen schema and leaves its input untouched", () => {
    const input: JsonSchema = { type: "object", properties: { a: { type: "object", properties: {} } } }
    const before = JSON.stringify(input)
    const out = normalizeJsonSchema(input)
    expect(JSON.stringify(input)).toBe(before)
    expect(Object.isFrozen(out)).toBe(true)
    expect(Object.isFrozen((out["properties"] as Record<string, object>)["a"])).toBe(true)
  })
})
