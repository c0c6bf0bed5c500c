import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { z } from "zod"
import { type BoundedCodec, jsonSchema, makeArgumentCodec } from "../../src/schema/codec.ts"
import { measureValue } from "../../src/schema/json-depth.ts"
import { prepareArguments } from "../../src/worker/prepared-arguments.ts"
import type { WorkerCore } from "../../src/worker/worker-core.ts"

/**
 * `decodeWithin` skips measuring a value whose parser vouched for bounds of its depth and size. Held here to
 * `decode` for every generated value and every pair of bounds that hold (the Worker's own bounds among them),
 * across the depth limit and the full-check size, so a wrong shortcut would show as a different result.
 */

const raw = jsonSchema({
  type: "object",
  properties: { city: { type: "string" }, tags: { type: "array", items: { type: "string" } }, n: { type: "integer" } },
  required: ["city"],
  additionalProperties: false
})
const sources = { raw, zod: z.object({ city: z.string().trim(), tags: z.array(z.string()).optional(), n: z.int().optional() }) }

const nested = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 3 },
    fc.string(),
    fc.integer(),
    fc.constant(null),
    fc.array(tie("value"), { maxLength: 4 }),
    fc.dictionary(fc.constantFrom("city", "tags", "n", "x"), tie("value"), { maxKeys: 4 })
  )
})).value

describe("BoundedCodec.decodeWithin", () => {
  it("decodes as decode whenever the bounds hold", () => {
    for (const [name, schema] of Object.entries(sources)) {
      const codec = makeArgumentCodec(schema, { maxArgumentDepth: 4, fullCheckSize: 6 }) as BoundedCodec<unknown>
      fc.assert(
        fc.property(nested, fc.nat(3), fc.nat(8), (value, extraDepth, extraSize) => {
          const shape = measureValue(value, 100)
          expect(codec.decodeWithin(value, shape.depth + extraDepth, shape.size + extraSize), name).toEqual(codec.decode(value))
        }),
        { numRuns: 300 }
      )
    }
  })

  it("takes a text's length as both bounds of the value it parses to, as typed tools do for argument text", () => {
    const codec = makeArgumentCodec(raw, { maxArgumentDepth: 4, fullCheckSize: 6 }) as BoundedCodec<unknown>
    fc.assert(
      fc.property(fc.oneof(nested.map((value) => JSON.stringify(value)), fc.json({ maxDepth: 6 })), (text) => {
        const value: unknown = JSON.parse(text)
        expect(codec.decodeWithin(value, text.length, text.length)).toEqual(codec.decode(value))
      }),
      { numRuns: 300 }
    )
  })

  it("takes the Worker's bounds of parsed argument text, which hold for every text", () => {
    const core = { settings: { maxArgumentDepth: 5 }, client: { scheme: "anthropic" } } as unknown as WorkerCore
    const codec = makeArgumentCodec(raw, { maxArgumentDepth: 5, fullCheckSize: 12 }) as BoundedCodec<unknown>
    fc.assert(
      fc.property(nested, (value) => {
        const prepared = prepareArguments(core, codec.jsonSchema, JSON.stringify(value))
        if (!prepared.ok) return
        const { depthBound, sizeBound } = prepared.args
        const shape = measureValue(prepared.args.value, 100)
        expect(depthBound).toBeGreaterThanOrEqual(shape.depth)
        expect(sizeBound).toBeGreaterThanOrEqual(shape.size)
        expect(codec.decodeWithin(prepared.args.value, depthBound as number, sizeBound as number)).toEqual(codec.decode(prepared.args.value))
      }),
      { numRuns: 300 }
    )
  })
})

describe("the checker's shared call context", () => {
  it("leaves schemas with $dynamicRef ajv's fresh context, and answers each call alike", () => {
    const tree = {
      $id: "https://example.test/tree",
      $dynamicAnchor: "node",
      type: "object",
      properties: { kids: { type: "array", items: { $dynamicRef: "#node" } }, v: { type: "integer" } },
      additionalProperties: false
    }
    const codec = makeArgumentCodec(tree as never)
    for (let round = 0; round < 3; round++) {
      expect(codec.decode({ v: 1, kids: [{ v: 2 }, { v: "x" }] })).toEqual({
        ok: false,
        issues: [{ path: ["kids", 1, "v"], message: 'expected integer, got "x"' }]
      })
      expect(codec.decode({ v: 1, kids: [{ v: 2, kids: [] }] })).toEqual({ ok: true, value: { v: 1, kids: [{ v: 2, kids: [] }] } })
    }
  })
})
