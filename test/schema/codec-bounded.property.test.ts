import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { z } from "zod"
import type { DecodeResult } from "../../src/schema/argument-codec.ts"
import { type BoundedCodec, jsonSchema, makeArgumentCodec } from "../../src/schema/codec.ts"
import { measureValue } from "../../src/schema/json-depth.ts"
import { prepareArguments } from "../../src/worker/prepared-arguments.ts"
import type { WorkerCore } from "../../src/worker/worker-core.ts"

/**
 * `checkWithin` skips measuring a value whose parser vouched for bounds of its depth and size, and answers the
 * value itself for a passing check with no library decode. Held here to `decode` for every generated value and
 * every pair of bounds that hold (the Worker's own bounds among them), across the depth limit and the full-check
 * size, so a wrong shortcut would show as a different result: the input itself exactly when `decode` accepts it
 * unchanged with no library decode, else a result equal to `decode`'s (never the input).
 */

/** What `checkWithin` answered, as the result `decode` gives: the input itself stands for `{ ok: true, value: input }`. */
const asDecodeResult = (input: unknown, answer: unknown): DecodeResult<unknown> | Promise<DecodeResult<unknown>> =>
  answer === input ? { ok: true, value: input } : (answer as DecodeResult<unknown> | Promise<DecodeResult<unknown>>)

/** `checkWithin`'s answer held to `decode`'s: identity only for an unchanged acceptance by a codec with no library decode. */
const expectAsDecode = (
  codec: BoundedCodec<unknown>,
  limits: { readonly depth: number; readonly size: number },
  value: unknown,
  depthBound: number,
  sizeBound: number,
  libraryDecode: boolean,
  name?: string
): void => {
  const answer = codec.checkWithin(value, depthBound, sizeBound)
  const decoded = codec.decode(value) as { ok: boolean; value?: unknown }
  // Bounds past the codec's limits take `decode` itself (a fresh record): identity is the shortcut's answer only.
  const shortcut = depthBound <= limits.depth && sizeBound <= limits.size
  expect(answer === value, name).toBe(shortcut && !libraryDecode && decoded.ok)
  expect(asDecodeResult(value, answer), name).toEqual(decoded)
}

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

describe("BoundedCodec.checkWithin", () => {
  it("decodes as decode whenever the bounds hold", () => {
    for (const [name, schema] of Object.entries(sources)) {
      const codec = makeArgumentCodec(schema, { maxArgumentDepth: 4, fullCheckSize: 6 }) as BoundedCodec<unknown>
      fc.assert(
        fc.property(nested, fc.nat(3), fc.nat(8), (value, extraDepth, extraSize) => {
          const shape = measureValue(value, 100)
          expectAsDecode(codec, { depth: 4, size: 6 }, value, shape.depth + extraDepth, shape.size + extraSize, name === "zod", name)
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
        expectAsDecode(codec, { depth: 4, size: 6 }, value, text.length, text.length, false)
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
        expectAsDecode(codec, { depth: 5, size: 12 }, prepared.args.value, depthBound as number, sizeBound as number, false)
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
