import type { JsonObject, JsonValue } from "../schema/json-schema.ts"

/**
 * Bounds on the provider's usage object kept as `raw`. The provider controls it, and it stays alive as long as
 * the response it came with (and in every subscriber that keeps the event), so it is copied within bounds instead
 * of kept by reference: real usage objects are two or three levels deep with a few dozen fields (Anthropic's
 * `iterations`, Gemini's per-modality details); anything past these bounds is left out of the copy.
 */
export const RAW_USAGE_BOUNDS = {
  /** Levels of objects/arrays below the usage object itself. */
  maxDepth: 4,
  /** Fields of one object, elements of one array. */
  maxEntries: 64,
  /** Characters of one string value (longer ones are cut). */
  maxStringChars: 256,
  /** Values in the whole copy. */
  maxValues: 1024
} as const

/**
 * A bounded, frozen copy of a provider usage object; `undefined` when `value` is not a JSON object. Recursion is
 * bounded by `maxDepth`, so a deeply nested object from the wire cannot exhaust the stack.
 */
export const boundedRawUsage = (value: unknown): JsonObject | undefined => {
  if (!isObject(value)) return undefined
  let budget: number = RAW_USAGE_BOUNDS.maxValues
  const copy = (from: unknown, depth: number): JsonValue | undefined => {
    if (budget <= 0) return undefined
    if (from === null || typeof from === "boolean") return budget--, from
    if (typeof from === "number") return Number.isFinite(from) ? (budget--, from) : undefined
    if (typeof from === "string") return budget--, from.slice(0, RAW_USAGE_BOUNDS.maxStringChars)
    if (depth > RAW_USAGE_BOUNDS.maxDepth) return undefined
    if (Array.isArray(from)) {
      budget--
      const out: Array<JsonValue> = []
      for (const element of from.slice(0, RAW_USAGE_BOUNDS.maxEntries)) {
        const kept = copy(element, depth + 1)
        if (kept !== undefined) out.push(kept)
      }
      return Object.freeze(out)
    }
    if (isObject(from)) {
      budget--
      const entries: Array<[string, JsonValue]> = []
      for (const key of Object.keys(from).slice(0, RAW_USAGE_BOUNDS.maxEntries)) {
        const kept = copy(from[key], depth + 1)
        if (kept !== undefined) entries.push([key.slice(0, RAW_USAGE_BOUNDS.maxStringChars), kept])
      }
      // fromEntries, not assignment: the keys are the provider's, "__proto__" included.
      return Object.freeze(Object.fromEntries(entries))
    }
    return undefined
  }
  return copy(value, 0) as JsonObject
}

const isObject = (value: unknown): value is { readonly [key: string]: unknown } =>
  typeof value === "object" && value !== null && !Array.isArray(value)
