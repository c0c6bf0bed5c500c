import { tooDeepMessage } from "../schema/json-depth.ts"

/**
 * Deterministic JSON body text for provider requests.
 *
 * Schemes build a request as a plain object literal whose keys are written in the provider's documented order;
 * `jsonBody` prints it in exactly that order. Three things differ from `JSON.stringify`, each to keep request
 * bodies byte-stable and honest:
 * - a field whose value is `undefined` is omitted, so optional settings can be written inline (`top_p: cfg.topP`);
 * - a non-finite number throws instead of silently becoming `null`;
 * - a `RawJson` fragment (text serialised once and cached, such as a tools array) is spliced in verbatim;
 * - nesting deeper than `MAX_BODY_DEPTH` throws a RangeError naming the path instead of overflowing the stack.
 *   Bodies are a handful of levels deep; model-controlled JSON (call arguments) only ever arrives as a
 *   `RawJson` fragment whose depth its producer bounded (`arguments-object.ts`), so the bound is a backstop.
 *
 * Keys that look like array indices ("0", "12") are reordered by JavaScript itself; provider bodies never use
 * them at fixed positions, and the reordering is itself deterministic.
 */

/** Levels of arrays and objects a body may nest: far above any provider body, far below the stack's limit. */
export const MAX_BODY_DEPTH = 256

/** JSON text that is already serialised and is inserted unchanged. The caller vouches that it is valid JSON. */
export interface RawJson {
  readonly _tag: "RawJson"
  readonly text: string
}

export const rawJson = (text: string): RawJson => ({ _tag: "RawJson", text })

export type JsonBodyValue =
  | null
  | boolean
  | number
  | string
  | RawJson
  | ReadonlyArray<JsonBodyValue>
  | { readonly [key: string]: JsonBodyValue | undefined }

const isRawJson = (value: object): value is RawJson =>
  (value as { _tag?: unknown })._tag === "RawJson" && typeof (value as { text?: unknown }).text === "string"

/** Thrown while writing; each enclosing level adds its key, so the path is built only when something is wrong. */
class BadValue extends Error {
  constructor(
    readonly problem: string,
    readonly path: string
  ) {
    super(problem)
  }
  under(segment: string): BadValue {
    return new BadValue(this.problem, `${segment}${this.path}`)
  }
}

const rethrow = (error: unknown, segment: string): unknown => (error instanceof BadValue ? error.under(segment) : error)

/**
 * Writes one value. String concatenation (V8 ropes) and no per-node allocations besides the output: this runs
 * over the whole history on every request. Paths for error messages are assembled only while unwinding.
 */
const write = (value: JsonBodyValue, depth: number): string => {
  if (value === null) return "null"
  switch (typeof value) {
    case "boolean":
      return value ? "true" : "false"
    case "number":
      if (!Number.isFinite(value)) throw new BadValue(`is ${value}, which JSON cannot carry`, "")
      return JSON.stringify(value)
    case "string":
      return JSON.stringify(value)
  }
  if (depth >= MAX_BODY_DEPTH && (Array.isArray(value) || !isRawJson(value))) throw new BadValue(tooDeepMessage("is", MAX_BODY_DEPTH), "")
  if (Array.isArray(value)) {
    const items = value as ReadonlyArray<JsonBodyValue>
    let out = "["
    for (let i = 0; i < items.length; i++) {
      const item = items[i]
      // An array slot cannot be omitted without shifting the others; JSON.stringify writes null, we refuse.
      if (item === undefined) throw new BadValue("is undefined", `[${i}]`)
      let text: string
      try {
        text = isPlain(item) ? JSON.stringify(item) : write(item, depth + 1)
      } catch (error) {
        throw rethrow(error, `[${i}]`)
      }
      out += i > 0 ? `,${text}` : text
    }
    return `${out}]`
  }
  if (isRawJson(value)) return value.text
  const record = value as { readonly [key: string]: JsonBodyValue | undefined }
  let out = "{"
  let first = true
  for (const key in record) {
    const field = record[key]
    if (field === undefined) continue
    let text: string
    try {
      text = isPlain(field) ? JSON.stringify(field) : write(field, depth + 1)
    } catch (error) {
      throw rethrow(error, `.${key}`)
    }
    out += `${first ? "" : ","}${quotedKey(key)}:${text}`
    first = false
  }
  return `${out}}`
}

/**
 * Keys as JSON strings, remembered: a body is mostly the same few dozen field names (a provider's keys, a tool
 * schema's), printed request after request. Bounded, so keys from open-ended data (a schema's property names)
 * cannot grow it without end; past the bound a key is simply quoted each time.
 */
const quotedKeys = new Map<string, string>()
const MAX_QUOTED_KEYS = 1024
const MAX_QUOTED_KEY_LENGTH = 64

const quotedKey = (key: string): string => {
  const known = quotedKeys.get(key)
  if (known !== undefined) return known
  const quoted = JSON.stringify(key)
  if (quotedKeys.size < MAX_QUOTED_KEYS && key.length <= MAX_QUOTED_KEY_LENGTH) quotedKeys.set(key, quoted)
  return quoted
}

/** Strings, booleans and null need no checks: the native serialiser writes them exactly as `write` would. */
const isPlain = (value: JsonBodyValue): boolean => value === null || typeof value === "string" || typeof value === "boolean"

/** Prints `value` as compact JSON with keys in insertion order, omitting `undefined` fields. */
export const jsonBody = (value: JsonBodyValue): string => {
  try {
    return write(value, 0)
  } catch (error) {
    if (!(error instanceof BadValue)) throw error
    const message = `jsonBody: $${error.path} ${error.problem}`
    throw error.problem.startsWith("is undefined") ? new TypeError(message) : new RangeError(message)
  }
}
