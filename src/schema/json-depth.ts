import { TaggedError } from "../error/tagged-error.ts"

/**
 * Nesting bounds for JSON that a model, a provider or a plugin controls. Every walker in the package that
 * recurses over such data checks one of these first, so hostile nesting becomes a precise error instead of a
 * stack overflow. Every check here is iterative: it cannot overflow itself.
 */

/** Default nesting bound for tool arguments and other untrusted JSON: far beyond any real tool schema. */
export const DEFAULT_MAX_JSON_DEPTH = 64

/**
 * Default nesting bound for whole JSON documents a program builds or receives: JSON Schemas (a schema spends two
 * levels, a `properties` map and the member's schema, per level of the value it describes, plus `anyOf` and
 * `items` wrappers) and request bodies embedding them. Far beyond anything real, far below the stack.
 */
export const DEFAULT_MAX_DOCUMENT_DEPTH = 256

/** A value nested deeper than a walker's bound (or cyclic, which is infinitely deep). */
export class JsonTooDeepError extends TaggedError("JsonTooDeepError")<{
  /** The bound that was exceeded. */
  readonly limit: number
  readonly message: string
}> {}

/**
 * The deepest nesting of arrays and objects in a JSON text, counted without parsing (string contents skipped),
 * stopping as soon as `limit` is exceeded. Returns `limit + 1` when it is exceeded, else the depth reached.
 * Works on any text: for invalid JSON the count is still a safe upper bound of what a parser would build.
 */
export const jsonTextDepth = (text: string, limit: number): number => {
  let depth = 0
  let deepest = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 0x5c /* \ */) i++
      else if (c === 0x22 /* " */) inString = false
      continue
    }
    if (c === 0x22) inString = true
    else if (c === 0x5b /* [ */ || c === 0x7b /* { */) {
      depth++
      if (depth > deepest) {
        deepest = depth
        if (deepest > limit) return limit + 1
      }
    } else if (c === 0x5d /* ] */ || c === 0x7d /* } */) depth--
  }
  return deepest
}

/** A cyclic or absurdly shared graph is not JSON; every walk is also bounded by this many values. */
const VISIT_BUDGET = 10_000_000

/** Depth and size of an in-memory JSON-like value, as `measureValue` reports them. */
export interface ValueShape {
  /** Deepest nesting of arrays and objects (0 for a primitive); `limit + 1` when the limit was exceeded. */
  readonly depth: number
  /** Number of values, every primitive, array and object counted once (the root included). */
  readonly size: number
}

/**
 * Depth and size of an in-memory value, stopping once the depth exceeds `limit` (the depth is `limit + 1` then, and
 * the size the count so far). Cycles count as too deep. Only own enumerable string keys are read, as
 * `JSON.stringify` would (a getter runs, as it would there). Two parallel stacks, so the walk allocates no object
 * per node: this runs on every decoded argument value.
 */
export const measureValue = (value: unknown, limit: number): ValueShape => {
  if (typeof value !== "object" || value === null) return { depth: 0, size: 1 }
  const nodes: Array<object> = [value]
  const depths: Array<number> = [1]
  let deepest = 0
  let size = 1
  while (nodes.length > 0) {
    const node = nodes.pop() as object
    const depth = depths.pop() as number
    if (depth > deepest) {
      deepest = depth
      if (deepest > limit) return { depth: limit + 1, size }
    }
    const children: ReadonlyArray<unknown> = Array.isArray(node) ? node : Object.values(node)
    size += children.length
    if (size > VISIT_BUDGET) return { depth: limit + 1, size }
    for (let i = 0; i < children.length; i++) {
      const child = children[i]
      if (typeof child === "object" && child !== null) {
        nodes.push(child)
        depths.push(depth + 1)
      }
    }
  }
  return { depth: deepest, size }
}

/**
 * The deepest nesting of arrays and plain objects in an in-memory value, stopping once `limit` is exceeded
 * (returns `limit + 1` then). Cycles count as too deep. Reads values like `measureValue`.
 */
export const valueDepth = (value: unknown, limit: number): number => measureValue(value, limit).depth

/** The error text used everywhere a nesting bound is hit, so users and models see one wording. */
export const tooDeepMessage = (what: string, limit: number): string => `${what} nested deeper than ${limit} levels`

/** Throws `JsonTooDeepError` (naming `what`) when `value` nests deeper than `limit`. */
export const assertDepth = (value: unknown, limit: number, what: string): void => {
  if (valueDepth(value, limit) > limit) throw new JsonTooDeepError({ limit, message: tooDeepMessage(what, limit) })
}
