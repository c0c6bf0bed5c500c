import fc from "fast-check"
import { describe, expect, it } from "vitest"
import type { ToolSpec } from "../../src/llm/request.ts"
import { toGeminiSubsetSchema } from "../../src/schema/dialects/gemini.ts"
import { toStrictSchema } from "../../src/schema/dialects/openai-strict.ts"
import type { JsonSchema } from "../../src/schema/json-schema.ts"
import { restoreStrictArguments, ToolNameRejected, toolsFragment, type ToolDialect } from "../../src/schema/provider-tools.ts"
import { goldenTools } from "../fixtures/tool-definitions/tool-set.ts"

const dialects: ReadonlyArray<ToolDialect> = ["openai-chat", "openai-responses", "anthropic", "gemini"]
const closed = (properties: Record<string, JsonSchema>, required: ReadonlyArray<string> = []): JsonSchema => ({
  type: "object",
  properties,
  required,
  additionalProperties: false
})

/** A structurally equal copy whose objects get their keys in a seed-dependent order, `properties` maps excepted. */
const rebuild = (value: unknown, random: () => number, inProperties = false): unknown => {
  if (Array.isArray(value)) return value.map((v) => rebuild(v, random))
  if (typeof value !== "object" || value === null) return value
  const keys = Object.keys(value)
  if (!inProperties) keys.sort(() => random() - 0.5)
  // fromEntries, not assignment: `out["__proto__"] = …` would set the copy's prototype instead of a key.
  return Object.fromEntries(keys.map((key) => [key, rebuild((value as Record<string, unknown>)[key], random, key === "properties" && !inProperties)]))
}

/** A deep-frozen copy: what the registry hands out (frozen array, frozen specs, frozen schemas). */
const frozenCopy = <A>(value: A): A => {
  if (typeof value !== "object" || value === null) return value
  const copy = Array.isArray(value) ? value.map(frozenCopy) : Object.fromEntries(Object.entries(value).map(([k, v]) => [k, frozenCopy(v)]))
  return Object.freeze(copy) as A
}

describe("OpenAI strict rewrite", () => {
  it("lists every property in required and makes the optional ones nullable, at every depth", () => {
    const result = toStrictSchema(
      closed({ a: { type: "string" }, b: { type: "integer", enum: [1, 2] }, c: closed({ d: { anyOf: [{ type: "string" }, { type: "number" }] } }) }, ["a"])
    )
    expect(result).toEqual({
      ok: true,
      schema: closed(
        {
          a: { type: "string" },
          b: { type: ["integer", "null"], enum: [1, 2, null] },
          c: { ...closed({ d: { anyOf: [{ type: "string" }, { type: "number" }, { type: "null" }] } }, ["d"]), type: ["object", "null"] }
        },
        ["a", "b", "c"]
      )
    })
  })

  it("keeps a property that already allows null as it is, wraps const in anyOf, drops annotations", () => {
    const result = toStrictSchema(closed({ n: { type: ["string", "null"], default: null }, k: { const: "x", examples: ["x"] } }))
    expect(result.ok && result.schema["properties"]).toEqual({
      n: { type: ["string", "null"] },
      k: { anyOf: [{ const: "x" }, { type: "null" }] }
    })
  })

  it.each([
    ["a record", closed({ r: { type: "object", additionalProperties: { type: "string" } } }), "/properties/r"],
    ["an open object", closed({ o: { type: "object", properties: { x: { type: "string" } } } }), "/properties/o"],
    ["minLength", closed({ s: { type: "string", minLength: 1 } }), "/properties/s"],
    ["oneOf", closed({ u: { oneOf: [{ type: "string" }, { type: "number" }] } }), "/properties/u"],
    ["an unsupported format", closed({ s: { type: "string", format: "uri" } }), "/properties/s"],
    ["an empty schema", closed({ any: {} }), "/properties/any"],
    ["a non-object root", { type: "array", items: { type: "string" } }, ""]
  ])("refuses %s and names where", (_label, schema, path) => {
    const result = toStrictSchema(schema)
    expect(result.ok).toBe(false)
    if (!result.ok) expect(result.problems.map((p) => p.path)).toContain(path)
  })

  it("sends strict:false with the schema unchanged when it cannot be strict", () => {
    const schema = closed({ labels: { type: "object", additionalProperties: { type: "string" } } })
    const entry = JSON.parse(toolsFragment([{ name: "t", description: "d", inputSchema: schema }], "openai-responses")) as Array<Record<string, unknown>>
    expect(entry[0]).toEqual({ type: "function", name: "t", description: "d", parameters: schema, strict: false })
  })
})

describe("restoreStrictArguments", () => {
  const schema = closed(
    {
      q: { type: "string" },
      limit: { type: "integer" },
      note: { type: ["string", "null"] },
      filter: closed({ site: { type: "string" } }),
      rows: { type: "array", items: closed({ id: { type: "string" }, tag: { type: "string" } }, ["id"]) },
      pick: { anyOf: [closed({ kind: { const: "a" }, extra: { type: "number" } }, ["kind"]), { type: "string" }] }
    },
    ["q", "filter"]
  )

  it("turns null back into absent for originally-optional properties, recursively", () => {
    expect(
      restoreStrictArguments(schema, {
        q: "x",
        limit: null,
        note: null,
        filter: { site: null },
        rows: [{ id: "1", tag: null }, { id: "2", tag: "t" }],
        pick: { kind: "a", extra: null }
      })
    ).toEqual({ q: "x", note: null, filter: {}, rows: [{ id: "1" }, { id: "2", tag: "t" }], pick: { kind: "a" } })
  })

  it("leaves a null for a required property for the decoder to refuse", () => {
    expect(restoreStrictArguments(schema, { q: null, filter: {} })).toEqual({ q: null, filter: {} })
  })

  it("inverts the strict rewrite: any value valid for the original survives a null-filled round trip (property)", () => {
    const original = fc.record(
      { q: fc.string(), limit: fc.integer(), filter: fc.record({ site: fc.string() }, { requiredKeys: [] }) },
      { requiredKeys: ["q", "filter"] }
    )
    fc.assert(
      fc.property(original, (value) => {
        // What a strict model sends: every optional property present, null when it means "absent".
        const strictValue = { limit: null, ...value, filter: { site: null, ...value.filter } }
        expect(restoreStrictArguments(schema, strictValue)).toEqual(value)
      })
    )
  })
})

describe("toolsFragment", () => {
  it("gives byte-identical fragments for the same tool set built in any key and array order (property)", () => {
    const expected = dialects.map((d) => toolsFragment(goldenTools, d))
    fc.assert(
      fc.property(fc.integer(), (seed) => {
        let state = seed >>> 0
        const random = () => ((state = (state * 1664525 + 1013904223) >>> 0) / 2 ** 32)
        const tools = (rebuild(goldenTools, random) as Array<ToolSpec>).sort(() => random() - 0.5)
        expect(dialects.map((d) => toolsFragment(tools, d))).toEqual(expected)
      })
    )
  })

  it("reads an immutable (deep-frozen) array once: a repeat call for the same instance does not touch it", () => {
    let reads = 0
    const tools = new Proxy(frozenCopy(goldenTools), {
      get(target, key, receiver) {
        reads++
        return Reflect.get(target, key, receiver)
      }
    })
    const first = toolsFragment(tools, "anthropic")
    const afterFirst = reads
    expect(afterFirst).toBeGreaterThan(0)
    expect(toolsFragment(tools, "anthropic")).toBe(first)
    expect(reads).toBe(afterFirst)
  })

  it("throws ToolNameRejected instead of building a body the provider would refuse", () => {
    const tools = [{ name: "2fa.check", description: "d", inputSchema: closed({}) }]
    expect(() => toolsFragment(tools, "gemini")).toThrow(ToolNameRejected)
    expect(JSON.parse(toolsFragment(tools, "anthropic"))[0].name).toBe("2fa_check")
  })

  it("gives [] for an empty tool set", () => {
    for (const dialect of dialects) expect(toolsFragment([], dialect)).toBe("[]")
  })
})

describe("Gemini OpenAPI subset", () => {
  it("translates nullable unions, string enums and int64 limits, keeps the author's order", () => {
    const { schema, losses } = toGeminiSubsetSchema(
      closed({
        z: { type: ["string", "null"], enum: ["a", "b", null], maxLength: 10 },
        a: { type: "array", items: { type: "integer" }, minItems: 1 },
        m: { anyOf: [{ type: "number" }, { type: "null" }] }
      }, ["z"])
    )
    expect(losses).toEqual([])
    expect(schema).toEqual({
      type: "OBJECT",
      properties: {
        z: { type: "STRING", nullable: true, enum: ["a", "b"], maxLength: "10" },
        a: { type: "ARRAY", items: { type: "INTEGER" }, minItems: "1" },
        m: { type: "NUMBER", nullable: true }
      },
      propertyOrdering: ["z", "a", "m"],
      required: ["z"]
    })
  })

  it("reports what the subset lacks, as an error when a required member is lost", () => {
    const { schema, losses } = toGeminiSubsetSchema(
      closed({
        s: { type: "string", patternProperties: { x: {} } },
        o: { oneOf: [{ type: "string" }, { type: "integer" }] },
        n: { enum: [1, 2] },
        r: { type: "object", additionalProperties: { type: "string" } }
      }, ["r"])
    )
    expect(losses.map((l) => [l.path, l.severity])).toEqual([
      ["/properties/s", "warning"],
      ["/properties/o", "warning"],
      ["/properties/n", "warning"],
      ["/properties/r", "warning"],
      ["/properties/r", "error"]
    ])
    expect(Object.keys(schema["properties"] as object)).toEqual(["s", "o", "n"])
    expect(schema["required"]).toBeUndefined()
  })
})
