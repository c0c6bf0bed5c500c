/**
 * Deterministic JSON body text for provider requests.
 *
 * Schemes build a request as a plain object literal whose keys are written in the provider's documented order;
 * `jsonBody` prints it in exactly that order. Three things differ from `JSON.stringify`, each to keep request
 * bodies byte-stable and honest:
 * - a field whose value is `undefined` is omitted, so optional settings can be written inline (`top_p: cfg.topP`);
 * - a non-finite number throws instead of silently becoming `null`;
 * - a `RawJson` fragment (text serialised once and cached, such as a tools array) is spliced in verbatim.
 *
 * Keys that look like array indices ("0", "12") are reordered by JavaScript itself; provider bodies never use
 * them at fixed positions, and the reordering is itself deterministic.
 */

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

const write = (value: JsonBodyValue, path: string, out: Array<string>): void => {
  if (value === null) {
    out.push("null")
    return
  }
  switch (typeof value) {
    case "boolean":
      out.push(value ? "true" : "false")
      return
    case "number":
      if (!Number.isFinite(value)) throw new RangeError(`jsonBody: ${path} is ${value}, which JSON cannot carry`)
      out.push(JSON.stringify(value))
      return
    case "string":
      out.push(JSON.stringify(value))
      return
  }
  if (Array.isArray(value)) {
    out.push("[")
    const items = value as ReadonlyArray<JsonBodyValue>
    for (let i = 0; i < items.length; i++) {
      if (i > 0) out.push(",")
      const item = items[i]
      // An array slot cannot be omitted without shifting the others; JSON.stringify writes null, we refuse.
      if (item === undefined) throw new TypeError(`jsonBody: ${path}[${i}] is undefined`)
      write(item, `${path}[${i}]`, out)
    }
    out.push("]")
    return
  }
  if (isRawJson(value)) {
    out.push(value.text)
    return
  }
  out.push("{")
  let first = true
  for (const [key, field] of Object.entries(value as { readonly [key: string]: JsonBodyValue | undefined })) {
    if (field === undefined) continue
    if (!first) out.push(",")
    first = false
    out.push(JSON.stringify(key), ":")
    write(field, `${path}.${key}`, out)
  }
  out.push("}")
}

/** Prints `value` as compact JSON with keys in insertion order, omitting `undefined` fields. */
export const jsonBody = (value: JsonBodyValue): string => {
  const out: Array<string> = []
  write(value, "$", out)
  return out.join("")
}
