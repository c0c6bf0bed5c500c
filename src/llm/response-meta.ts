import type { Event } from "./event.ts"

/**
 * The longest model name or response id passed on, in UTF-16 code units; longer values are cut. Both are
 * provider-chosen strings copied into events, results and span attributes, so a hostile server must not be able
 * to make them large. Real ones are well under 100 characters.
 */
export const MAX_RESPONSE_META_CHARS = 256

/** A provider's string as it may be passed on: a non-string or empty value is dropped, a long one cut. */
export const responseMetaString = (value: unknown): string | undefined => {
  if (typeof value !== "string" || value === "") return undefined
  if (value.length <= MAX_RESPONSE_META_CHARS) return value
  const cut = value.slice(0, MAX_RESPONSE_META_CHARS)
  // Never end on half a surrogate pair: the attribute exporters would send a lone surrogate.
  const last = cut.charCodeAt(cut.length - 1)
  return last >= 0xd800 && last <= 0xdbff ? cut.slice(0, -1) : cut
}

/**
 * The `started` status of a response, with the model and response id the provider states at its start when it
 * states them (read once per response, never per event).
 */
export const startedEvent = (model: unknown, responseId: unknown): Event => {
  const m = responseMetaString(model)
  const id = responseMetaString(responseId)
  // Literals, not spreads: a literal's shape outlives the response at a full collection (decision 0085).
  if (m === undefined) return id === undefined ? { type: "status", status: "started" } : { type: "status", status: "started", responseId: id }
  return id === undefined ? { type: "status", status: "started", model: m } : { type: "status", status: "started", model: m, responseId: id }
}
