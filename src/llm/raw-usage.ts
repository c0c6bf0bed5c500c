import type { JsonObject } from "../schema/json-schema.ts"
import { boundedJsonCopy } from "./bounded-json.ts"

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
export const boundedRawUsage = (value: unknown): JsonObject | undefined => boundedJsonCopy(value, RAW_USAGE_BOUNDS)
