import type { JsonObject } from "../schema/json-schema.ts"
import { boundedJsonCopy } from "./bounded-json.ts"
import type { Event } from "./event.ts"
import { LlmProviderError } from "./llm-error.ts"

/**
 * Bounds on the provider's error object kept as `raw` on an `error` event and on `LlmProviderError`. It carries
 * what `code` and `message` cannot: Groq's `failed_generation` (the tool call it refused, as the model wrote it),
 * `type`, `status_code`, OpenRouter's `metadata`. The provider controls it, so it is copied within these bounds:
 * a refused tool call can be long, so one string may be 16,384 characters, but all text together stays under
 * 65,536 characters; anything past a bound is left out of the copy (the error itself is never refused for it).
 */
export const RAW_ERROR_BOUNDS = {
  /** Levels of objects/arrays below the error object itself. */
  maxDepth: 4,
  /** Fields of one object, elements of one array. */
  maxEntries: 64,
  /** Characters of one string value (longer ones are cut). */
  maxStringChars: 16_384,
  /** Values in the whole copy. */
  maxValues: 1024,
  /** Characters of all strings and keys together. */
  maxTotalChars: 65_536
} as const

/** A bounded, frozen copy of a provider's error object; `undefined` when `value` is not a JSON object. */
export const boundedRawError = (value: unknown): JsonObject | undefined => boundedJsonCopy(value, RAW_ERROR_BOUNDS)

/** The `error` event of a provider's error, with its object kept as `raw` when it is one. */
export const errorEvent = (code: string, message: string, error?: unknown): Extract<Event, { readonly type: "error" }> => {
  const raw = boundedRawError(error)
  return raw === undefined ? { type: "error", code, message } : { type: "error", code, message, raw }
}

/** The `LlmProviderError` a stream's `error` event ends the call with: its code, message and `raw` object. */
export const providerErrorOf = (event: Extract<Event, { readonly type: "error" }>): LlmProviderError =>
  new LlmProviderError(event.raw === undefined ? { code: event.code, message: event.message } : { code: event.code, message: event.message, raw: event.raw })
