import type { JsonObject, JsonValue } from "../schema/json-schema.ts"

/** How far a copy of a provider's object may reach; past any bound, the rest is left out of the copy. */
export interface JsonCopyBounds {
  /** Levels of objects/arrays below the copied object itself. */
  readonly maxDepth: number
  /** Fields of one object, elements of one array. */
  readonly maxEntries: number
  /** Characters of one string value (longer ones are cut). */
  readonly maxStringChars: number
  /** Values in the whole copy. */
  readonly maxValues: number
  /** Characters of all string values and keys together; strings past it are cut, then left out. */
  readonly maxTotalChars?: number
}

/**
 * A bounded, frozen copy of a provider's JSON object; `undefined` when `value` is not one. Recursion is bounded by
 * `maxDepth`, so a deeply nested object from the wire cannot exhaust the stack, and the copy's size by the other
 * bounds, so an object the provider controls stays small however long it lives (in events, errors, subscribers).
 */
export const boundedJsonCopy = (value: unknown, bounds: JsonCopyBounds): JsonObject | undefined => {
  if (!isObject(value)) return undefined
  let budget = bounds.maxValues
  let chars = bounds.maxTotalChars ?? Number.POSITIVE_INFINITY
  const text = (from: string): string | undefined => {
    if (chars <= 0) return undefined
    const kept = cutString(from, Math.min(bounds.maxStringChars, chars))
    chars -= kept.length
    return kept
  }
  const copy = (from: unknown, depth: number): JsonValue | undefined => {
    if (budget <= 0) return undefined
    if (from === null || typeof from === "boolean") return budget--, from
    if (typeof from === "number") return Number.isFinite(from) ? (budget--, from) : undefined
    if (typeof from === "string") {
      const kept = text(from)
      return kept === undefined ? undefined : (budget--, kept)
    }
    if (depth > bounds.maxDepth) return undefined
    if (Array.isArray(from)) {
      budget--
      const out: Array<JsonValue> = []
      for (const element of from.slice(0, bounds.maxEntries)) {
        const kept = copy(element, depth + 1)
        if (kept !== undefined) out.push(kept)
      }
      return Object.freeze(out)
    }
    if (isObject(from)) {
      budget--
      const entries: Array<[string, JsonValue]> = []
      for (const key of Object.keys(from).slice(0, bounds.maxEntries)) {
        const name = text(key)
        if (name === undefined) break
        const kept = copy(from[key], depth + 1)
        if (kept !== undefined) entries.push([name, kept])
      }
      // fromEntries, not assignment: the keys are the provider's, "__proto__" included.
      return Object.freeze(Object.fromEntries(entries))
    }
    return undefined
  }
  return copy(value, 0) as JsonObject
}

/** `value` cut to `max` UTF-16 code units, never ending on half a surrogate pair. */
const cutString = (value: string, max: number): string => {
  if (value.length <= max) return value
  const cut = value.slice(0, max)
  const last = cut.charCodeAt(cut.length - 1)
  return last >= 0xd800 && last <= 0xdbff ? cut.slice(0, -1) : cut
}

const isObject = (value: unknown): value is { readonly [key: string]: unknown } =>
  typeof value === "object" && value !== null && !Array.isArray(value)
