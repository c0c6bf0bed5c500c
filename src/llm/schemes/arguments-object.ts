import type { FunctionCallItem } from "../item.ts"
import { type JsonBodyValue, rawJson } from "../json-body.ts"

/** History items are immutable and reused request after request, so each call's check is done once. */
const checked = new WeakMap<FunctionCallItem, JsonBodyValue | null>()

/**
 * A call's raw argument text when it is a JSON object, as a verbatim fragment (so the bytes the model produced are
 * the bytes sent back, and a prefix never drifts); undefined when it is not an object. For formats that carry
 * arguments as a JSON value rather than as text (Anthropic `input`, Gemini `args`).
 */
export const argumentsObject = (call: FunctionCallItem): JsonBodyValue | undefined => {
  let fragment = checked.get(call)
  if (fragment === undefined) {
    fragment = isJsonObjectText(call.arguments) ? rawJson(call.arguments) : null
    checked.set(call, fragment)
  }
  return fragment ?? undefined
}

const isJsonObjectText = (text: string): boolean => {
  try {
    const parsed: unknown = JSON.parse(text)
    return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)
  } catch {
    return false
  }
}
