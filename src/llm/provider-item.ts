import { DEFAULT_MAX_JSON_DEPTH, jsonTextDepth, tooDeepMessage, valueDepth } from "../schema/json-depth.ts"
import type { ProviderItem, ProviderItemScheme } from "./item.ts"
import { LlmProtocolError } from "./llm-error.ts"

/**
 * Provider-controlled JSON that this library keeps without modelling it (provider items, citations). It is
 * hostile input like everything else a provider sends: its size counts against `maxProviderBytes` (limits.ts),
 * and its nesting is bounded here before anything serialises or parses it, so no walker — ours or the caller's
 * `JSON.parse` + recursive code — meets more than this many levels. Real hosted-tool objects nest five or six.
 */
export const MAX_PROVIDER_JSON_DEPTH = DEFAULT_MAX_JSON_DEPTH

/**
 * JSON text of a value a decoder received from the provider (the result of `JSON.parse`). The depth is checked
 * by an iterative walk first, so the native serialiser that follows never recurses deeper than the bound.
 * Throws `LlmProtocolError` for deeper values: the response is not one this library can keep faithfully.
 */
export const providerJsonText = (value: unknown, what: string): string => {
  if (valueDepth(value, MAX_PROVIDER_JSON_DEPTH) > MAX_PROVIDER_JSON_DEPTH) {
    throw new LlmProtocolError({ message: `${what}: ${tooDeepMessage("provider output", MAX_PROVIDER_JSON_DEPTH)}` })
  }
  return JSON.stringify(value) ?? "null"
}

/** A provider item from a decoded provider object; `kind` is the object's own type name. */
export const providerItem = (scheme: ProviderItemScheme, kind: string, value: unknown, what: string): ProviderItem => ({
  type: "provider_item",
  scheme,
  kind,
  json: providerJsonText(value, what)
})

/**
 * Why `json` cannot be a provider item's text (undefined when it can): it must be one JSON object nested no
 * deeper than the bound. Items that reach a request from elsewhere (a caller's history, a hook) are checked once
 * with this, because encoders splice the text into the body unchanged.
 */
export const providerItemJsonProblem = (json: string): string | undefined => {
  if (jsonTextDepth(json, MAX_PROVIDER_JSON_DEPTH) > MAX_PROVIDER_JSON_DEPTH) return tooDeepMessage("json is", MAX_PROVIDER_JSON_DEPTH)
  let value: unknown
  try {
    value = JSON.parse(json)
  } catch {
    return "json is not valid JSON"
  }
  return typeof value === "object" && value !== null && !Array.isArray(value) ? undefined : "json must be a JSON object"
}
