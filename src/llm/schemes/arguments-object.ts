import { DEFAULT_MAX_JSON_DEPTH, jsonTextDepth } from "../../schema/json-depth.ts"
import type { FunctionCallItem } from "../item.ts"
import { memoOf } from "../item-memo.ts"
import { type JsonBodyValue, rawJson } from "../json-body.ts"

/**
 * History items are reused request after request, so each call's check is done once: in the memo of an item the
 * Worker owns (it never changes), else here. The text checked is kept with the answer: an item a caller built
 * and later edited in place must not be sent with a stale verdict.
 */
const checked = new WeakMap<FunctionCallItem, { readonly text: string; readonly result: ArgumentsObject }>()

/** A call's arguments as a JSON object to send back, or why they cannot be. */
export type ArgumentsObject =
  | { readonly ok: true; readonly value: JsonBodyValue }
  | { readonly ok: false; readonly reason: "not_object" | "too_deep" }

/**
 * A call's raw argument text when it is a JSON object, as a verbatim fragment (so the bytes the model produced are
 * the bytes sent back, and a prefix never drifts). For formats that carry arguments as a JSON value rather than
 * as text (Anthropic `input`, Gemini `args`); the caller sends `{}` (with a warning) for anything else.
 *
 * Nested deeper than `DEFAULT_MAX_JSON_DEPTH`, the text is not sent back: the Worker refused such a call (its
 * result in the history is the `arguments nested deeper than N levels` error), a provider may refuse the body,
 * and nothing downstream should have to walk it. The depth is counted on the text without parsing, so a
 * hostile text cannot cost more than one linear scan.
 */
export const argumentsObject = (call: FunctionCallItem): ArgumentsObject => {
  const memo = memoOf(call)
  if (memo !== undefined) return (memo.argumentsChecked ??= checkArguments(call.arguments)) as ArgumentsObject
  const text = call.arguments
  let entry = checked.get(call)
  if (entry === undefined || entry.text !== text) {
    entry = { text, result: checkArguments(text) }
    checked.set(call, entry)
  }
  return entry.result
}

const checkArguments = (text: string): ArgumentsObject =>
  jsonTextDepth(text, DEFAULT_MAX_JSON_DEPTH) > DEFAULT_MAX_JSON_DEPTH
    ? { ok: false, reason: "too_deep" }
    : isJsonObjectText(text)
      ? { ok: true, value: rawJson(text) }
      : { ok: false, reason: "not_object" }

/** The warning text for arguments that go back as `{}`; the call id is quoted by the caller. */
export const argumentsFallbackReason = (reason: "not_object" | "too_deep"): string =>
  reason === "too_deep" ? `are nested deeper than ${DEFAULT_MAX_JSON_DEPTH} levels` : "are not a JSON object"

const isJsonObjectText = (text: string): boolean => {
  try {
    const parsed: unknown = JSON.parse(text)
    return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)
  } catch {
    return false
  }
}
