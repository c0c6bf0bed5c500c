/**
 * JSON text of a value that came out of `JSON.parse` of provider data (Gemini's `args`, a content block's
 * `input`, an error object). V8's `JSON.parse` builds any depth, but its `JSON.stringify` recurses and overflows
 * the stack a few thousand levels down, so a hostile provider could crash decoding with one deep value. Shallow
 * values (all real ones) take the native path; deeper ones are written by an explicit stack that cannot
 * overflow, so the text still reaches the Worker, whose depth check answers the call with an error result.
 */

import { valueDepth } from "../schema/json-depth.ts"

/** Below this the native serialiser is safe whatever the frame sizes: far above any real argument. */
const NATIVE_DEPTH = 256

/** JSON text of a parsed JSON value (plain objects, arrays, strings, finite numbers, booleans, null). */
export const parsedJsonText = (value: unknown): string =>
  valueDepth(value, NATIVE_DEPTH) <= NATIVE_DEPTH ? (JSON.stringify(value) ?? "null") : iterativeJsonText(value)

interface Frame {
  readonly node: object
  readonly keys: ReadonlyArray<string> | undefined
  next: number
}

const scalarText = (value: unknown): string => {
  if (typeof value === "string" || typeof value === "number" || typeof value === "boolean") return JSON.stringify(value)
  return "null"
}

const iterativeJsonText = (value: unknown): string => {
  const parts: Array<string> = []
  const stack: Array<Frame> = []
  const enter = (node: unknown): void => {
    if (typeof node !== "object" || node === null) {
      parts.push(scalarText(node))
      return
    }
    const isArray = Array.isArray(node)
    parts.push(isArray ? "[" : "{")
    stack.push({ node, keys: isArray ? undefined : Object.keys(node), next: 0 })
  }
  enter(value)
  while (stack.length > 0) {
    const frame = stack[stack.length - 1] as Frame
    const length = frame.keys === undefined ? (frame.node as ReadonlyArray<unknown>).length : frame.keys.length
    if (frame.next >= length) {
      parts.push(frame.keys === undefined ? "]" : "}")
      stack.pop()
      continue
    }
    const i = frame.next++
    if (i > 0) parts.push(",")
    if (frame.keys === undefined) enter((frame.node as ReadonlyArray<unknown>)[i])
    else {
      const key = frame.keys[i] as string
      parts.push(JSON.stringify(key), ":")
      enter((frame.node as Record<string, unknown>)[key])
    }
  }
  return parts.join("")
}
