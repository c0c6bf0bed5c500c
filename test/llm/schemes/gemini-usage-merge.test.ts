import fc from "fast-check"
import { describe, expect, it } from "vitest"
import type { Event } from "../../../src/llm/event.ts"
import { boundedRawUsage } from "../../../src/llm/raw-usage.ts"
import { createGeminiDecoder } from "../../../src/llm/schemes/gemini-decoder.ts"

/** The fold the decoder's merge must equal: later non-null fields win, keys in order of first non-null appearance. */
const referenceFold = (usages: ReadonlyArray<Record<string, unknown>>): Record<string, unknown> => {
  const fields = new Map<string, unknown>()
  for (const usage of usages) {
    for (const key of Object.keys(usage)) {
      const value = usage[key]
      if (value !== null && value !== undefined) fields.set(key, value)
    }
  }
  return Object.fromEntries(fields)
}

const usageOf = (usages: ReadonlyArray<Record<string, unknown>>): Event | undefined => {
  const decoder = createGeminiDecoder()
  const events: Array<Event> = []
  for (const [i, usage] of usages.entries()) {
    const last = i === usages.length - 1
    const chunk = { candidates: [{ content: { parts: [{ text: "x" }] }, ...(last ? { finishReason: "STOP" } : {}) }], usageMetadata: usage }
    events.push(...decoder.push({ event: "message", data: JSON.stringify(chunk) }))
  }
  events.push(...decoder.end())
  return events.find((event) => event.type === "usage")
}

const KEYS = ["promptTokenCount", "candidatesTokenCount", "totalTokenCount", "thoughtsTokenCount", "trafficType", "__proto__", "0", "toString"]
const anyUsage = fc.dictionary(
  fc.constantFrom(...KEYS),
  fc.oneof(fc.nat({ max: 1000 }), fc.constant(null), fc.constantFrom("ON_DEMAND", "PROVISIONED"), fc.constant([{ modality: "TEXT", tokenCount: 3 }])),
  { maxKeys: 6 }
)

describe("Gemini usage merge", () => {
  it("keeps the last non-null value of every field, in order of first appearance, like a fold over Object.keys (property)", () => {
    fc.assert(
      fc.property(fc.array(anyUsage, { minLength: 1, maxLength: 8 }), (usages) => {
        // Through JSON, as the wire delivers them ("__proto__" becomes an own key).
        const wire = usages.map((usage) => JSON.parse(JSON.stringify(usage)) as Record<string, unknown>)
        const usage = usageOf(wire)
        const expected = boundedRawUsage(referenceFold(wire))
        if (expected === undefined || Object.keys(expected).length === 0) return
        expect(usage !== undefined && "raw" in usage ? usage.raw : undefined).toEqual(expected)
        if (usage !== undefined && "raw" in usage && usage.raw !== undefined) expect(Object.keys(usage.raw)).toEqual(Object.keys(expected))
      }),
      { numRuns: 300 }
    )
  })

  it("ignores what a polluted Object.prototype adds to every object", () => {
    const proto = Object.prototype as Record<string, unknown>
    proto["pollutedCount"] = 7
    Object.defineProperty(proto, "pollutedCount", { enumerable: true })
    try {
      const usage = usageOf([{ promptTokenCount: 5 }, { candidatesTokenCount: 3, totalTokenCount: 8 }])
      expect(usage !== undefined && "raw" in usage ? Object.keys(usage.raw ?? {}) : []).toEqual(["promptTokenCount", "candidatesTokenCount", "totalTokenCount"])
    } finally {
      delete proto["pollutedCount"]
    }
  })
})
