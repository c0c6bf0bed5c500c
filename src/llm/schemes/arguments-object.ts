import type { FunctionCallItem } from "../item.ts"
import { type JsonBodyValue, rawJson } from "../json-body.ts"

/**
 * History items are reused request after request, so each call's check is done once. The text checked is kept
 * with the answer: an item a caller built and later edited in place must not be sent with a stale verdict.
 */
const checked = new WeakMap<FunctionCallItem, { readonly text: string; readonly fragment: JsonBodyValue | null }>()

/**
 * A call's raw argument text when it is a JSON object, as a verbatim fragment (so the bytes the model produced are
 * the bytes sent back, and a prefix never drifts); undefined when it is not an object. For formats that carry
 * arguments as a JSON value rather than as text (Anthropic `input`, Gemini `args`).
 */
export const argumentsObject = (call: FunctionCallItem): JsonBodyValue | undefined => {
  const text = call.arguments
  let entry = checked.get(call)
  if (entry === undefined || entry.text !== text) {
    entry = { text, fragment: isJsonObjectText(text) ? rawJson(text) : null }
    checked.set(call, entry)
  }
  return entry.fragment ?? undefined
}

const isJsonObjectText = (text: string): boolean => {
  try {
    const parsed: unknown = JSON.parse(text)
    return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)
  } catch {
    return false
  }
}
