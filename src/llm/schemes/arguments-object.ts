import { type JsonBodyValue, rawJson } from "../json-body.ts"

/**
 * A call's raw argument text when it is a JSON object, as a verbatim fragment (so the bytes the model produced are
 * the bytes sent back, and a prefix never drifts); undefined when it is not an object. For formats that carry
 * arguments as a JSON value rather than as text (Anthropic `input`, Gemini `args`).
 */
export const argumentsObject = (text: string): JsonBodyValue | undefined => {
  try {
    const parsed: unknown = JSON.parse(text)
    return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed) ? rawJson(text) : undefined
  } catch {
    return undefined
  }
}
