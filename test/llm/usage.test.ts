import fc from "fast-check"
import { describe, expect, it } from "vitest"
import type { Usage } from "../../src/llm/event.ts"
import { boundedRawUsage, RAW_USAGE_BOUNDS } from "../../src/llm/raw-usage.ts"
import { neutralUsage, sumUsage, USAGE_FIELDS } from "../../src/llm/usage.ts"

describe("neutralUsage", () => {
  it("output includes reasoning (OpenAI): passes the counts through when they add up", () => {
    expect(neutralUsage({ input: 17, output: 1107, total: 1124, reasoning: 963 }, "output_includes_reasoning")).toEqual({
      inputTokens: 17,
      outputTokens: 1107,
      totalTokens: 1124,
      reasoningTokens: 963
    })
  })

  it("a server whose output leaves reasoning out (xAI) is recognised by its total", () => {
    expect(neutralUsage({ input: 12, output: 1, total: 303, reasoning: 290, cacheRead: 11 }, "output_includes_reasoning")).toEqual({
      inputTokens: 12,
      outputTokens: 291,
      totalTokens: 303,
      reasoningTokens: 290,
      cacheReadTokens: 11
    })
  })

  it("without a total, an output smaller than its own reasoning part cannot include it", () => {
    expect(neutralUsage({ input: 12, output: 1, reasoning: 290 }, "output_includes_reasoning")).toEqual({
      inputTokens: 12,
      outputTokens: 291,
      totalTokens: 303,
      reasoningTokens: 290
    })
  })

  it("output excludes reasoning (Gemini): adds thoughts in; a total that says otherwise wins", () => {
    expect(neutralUsage({ input: 9, output: 10, total: 275, reasoning: 256 }, "output_excludes_reasoning")).toEqual({
      inputTokens: 9,
      outputTokens: 266,
      totalTokens: 275,
      reasoningTokens: 256
    })
    expect(neutralUsage({ input: 9, output: 266, total: 275, reasoning: 256 }, "output_excludes_reasoning").outputTokens).toBe(266)
  })

  it("derives a missing count from the total (a blocked Gemini prompt has no candidates)", () => {
    expect(neutralUsage({ input: 7, total: 7 }, "output_excludes_reasoning")).toEqual({ inputTokens: 7, outputTokens: 0, totalTokens: 7 })
    expect(neutralUsage({ output: 5, total: 12 }, "output_includes_reasoning")).toEqual({ inputTokens: 7, outputTokens: 5, totalTokens: 12 })
  })

  it("takes a gap the total leaves as output the provider did not itemise", () => {
    expect(neutralUsage({ input: 10, output: 5, total: 99, reasoning: 2 }, "output_includes_reasoning")).toEqual({
      inputTokens: 10,
      outputTokens: 89,
      totalTokens: 99,
      reasoningTokens: 2
    })
  })

  it("does not pass on a total smaller than what it itemised (the raw usage keeps it)", () => {
    expect(neutralUsage({ input: 10, output: 5, total: 12 }, "output_includes_reasoning")).toEqual({
      inputTokens: 10,
      outputTokens: 5,
      totalTokens: 15
    })
    expect(neutralUsage({ input: 10, total: 3 }, "output_includes_reasoning")).toEqual({ inputTokens: 10 })
  })

  it("treats anything but a non-negative safe integer as absent", () => {
    const hostile = { input: "12", output: -1, total: 1.5, reasoning: Number.MAX_SAFE_INTEGER + 2, cacheRead: null, cacheWrite: {} }
    expect(neutralUsage(hostile, "output_includes_reasoning")).toEqual({})
    expect(neutralUsage({ input: Number.MAX_SAFE_INTEGER, output: 2 }, "output_includes_reasoning")).toEqual({
      inputTokens: Number.MAX_SAFE_INTEGER,
      outputTokens: 2
    })
  })

  it("drops a reasoning count larger than the output it is part of", () => {
    expect(neutralUsage({ input: 1, output: 5, total: 6, reasoning: 9 }, "output_includes_reasoning")).toEqual({
      inputTokens: 1,
      outputTokens: 5,
      totalTokens: 6
    })
  })
})

describe("sumUsage", () => {
  it("sums each field and recomputes the total from input and output", () => {
    expect(
      sumUsage([
        { inputTokens: 10, outputTokens: 2, totalTokens: 12, reasoningTokens: 1, cacheReadTokens: 8 },
        { inputTokens: 5 },
        { outputTokens: 4, cacheWriteTokens: 3 }
      ])
    ).toEqual({ inputTokens: 15, outputTokens: 6, totalTokens: 21, reasoningTokens: 1, cacheReadTokens: 8, cacheWriteTokens: 3 })
    expect(sumUsage([])).toEqual({})
  })

  it("is the field-by-field sum, with the same fields in the same order (property)", () => {
    // The rule written the plain way: every field summed over the usages that have it, the total recomputed.
    const reference = (usages: ReadonlyArray<Usage>): Record<string, number> => {
      const sums: Record<string, number> = {}
      for (const usage of usages) for (const field of USAGE_FIELDS) if (usage[field] !== undefined) sums[field] = (sums[field] ?? 0) + (usage[field] as number)
      const out: Record<string, number> = {}
      for (const field of USAGE_FIELDS) {
        const value = field === "totalTokens" ? (sums["inputTokens"] === undefined || sums["outputTokens"] === undefined ? undefined : sums["inputTokens"] + sums["outputTokens"]) : sums[field]
        if (value !== undefined) out[field] = value
      }
      return out
    }
    const count = fc.nat({ max: 1_000_000 })
    const usage = fc.record(
      { inputTokens: count, outputTokens: count, totalTokens: count, reasoningTokens: count, cacheReadTokens: count, cacheWriteTokens: count },
      { requiredKeys: [] }
    )
    fc.assert(
      fc.property(fc.array(usage, { maxLength: 6 }), (usages) => {
        const sum = sumUsage(usages)
        expect(sum).toEqual(reference(usages))
        expect(Object.keys(sum)).toEqual(Object.keys(reference(usages)))
      })
    )
  })
})

describe("boundedRawUsage", () => {
  it("copies a usage object and freezes the copy", () => {
    const wire = { input_tokens: 3, cache_creation: { ephemeral_5m_input_tokens: 0 }, service_tier: "standard", iterations: [{ a: 1 }] }
    const raw = boundedRawUsage(wire)
    expect(raw).toEqual(wire)
    expect(raw).not.toBe(wire)
    expect(Object.isFrozen(raw)).toBe(true)
    expect(Object.isFrozen(raw?.["cache_creation"])).toBe(true)
  })

  it("is undefined for anything but an object", () => {
    for (const value of [null, 3, "x", [1], undefined]) expect(boundedRawUsage(value)).toBeUndefined()
  })

  it("bounds depth, entries, string length and the whole copy", () => {
    let deep: Record<string, unknown> = { leaf: 1 }
    for (let i = 0; i < 10_000; i++) deep = { next: deep }
    const raw = boundedRawUsage(deep)
    let depth = 0
    for (let at: unknown = raw; typeof at === "object" && at !== null; at = (at as Record<string, unknown>)["next"]) depth++
    expect(depth).toBe(RAW_USAGE_BOUNDS.maxDepth + 1)

    const wide = Object.fromEntries(Array.from({ length: 1000 }, (_, i) => [`k${i}`, i]))
    expect(Object.keys(boundedRawUsage(wide) ?? {})).toHaveLength(RAW_USAGE_BOUNDS.maxEntries)
    const long = boundedRawUsage({ s: "x".repeat(10_000) })
    expect((long?.["s"] as string).length).toBe(RAW_USAGE_BOUNDS.maxStringChars)
    const many = boundedRawUsage(Object.fromEntries(Array.from({ length: 64 }, (_, i) => [`k${i}`, Array.from({ length: 64 }, () => 1)])))
    const values = JSON.stringify(many).split("1").length - 1
    expect(values).toBeLessThanOrEqual(RAW_USAGE_BOUNDS.maxValues)
  })

  it("keeps a provider key named __proto__ as plain data", () => {
    const raw = boundedRawUsage(JSON.parse('{"__proto__":{"polluted":1},"n":1}'))
    expect(Object.getPrototypeOf(raw)).toBe(Object.prototype)
    expect(({} as Record<string, unknown>)["polluted"]).toBeUndefined()
    expect(Object.keys(raw ?? {})).toEqual(["__proto__", "n"])
  })
})
