/**
 * Pieces for recognising the few event shapes that make up most of a stream (text and argument deltas) in their
 * exact compact form, so their payload string is read without `JSON.parse` building the whole event (which was
 * the largest cost of decoding, decision 0076). A recogniser either returns exactly what `JSON.parse` would
 * (same values, same keys in the same order) or nothing, and then the event is parsed in full: any other shape,
 * any whitespace, any extra or reordered key, any doubt, takes the ordinary path.
 */

/** Digits of an integer read here: any 15-digit number is below 2^53, so it is exact. */
const MAX_DIGITS = 15

/**
 * The non-negative integer written at `at` in `text` (JSON grammar: no sign, no leading zero, no fraction or
 * exponent, at most 15 digits so it is exact), and where it ends; undefined when there is none.
 */
export const indexAt = (text: string, at: number): { readonly value: number; readonly end: number } | undefined => {
  let end = at
  let value = 0
  while (end < text.length && end - at <= MAX_DIGITS) {
    const digit = text.charCodeAt(end) - 48
    if (digit < 0 || digit > 9) break
    value = value * 10 + digit
    end++
  }
  const digits = end - at
  if (digits === 0 || digits > MAX_DIGITS || (digits > 1 && text.charCodeAt(at) === 48)) return undefined
  return { value, end }
}

const QUOTE = 34
const BACKSLASH = 92

/**
 * The string whose JSON literal spans `text` from `from` (its opening quote) to `to` (just past its closing
 * quote); undefined unless that span is exactly one JSON string. A scan first rejects a span with a quote
 * inside or a raw control character (without throwing); `JSON.parse` of the span then decodes the escapes and
 * gives a string of its own (a slice would keep the whole read's text alive as long as the event).
 */
export const stringLiteral = (text: string, from: number, to: number): string | undefined => {
  if (to - from < 2 || text.charCodeAt(from) !== QUOTE || text.charCodeAt(to - 1) !== QUOTE) return undefined
  for (let i = from + 1; i < to - 1; i++) {
    const c = text.charCodeAt(i)
    if (c === QUOTE || c < 0x20) return undefined
    if (c === BACKSLASH) i++
  }
  // A span whose closing quote is escaped (`"ab\"`) got past the scan; JSON.parse refuses it.
  try {
    const value: unknown = JSON.parse(text.slice(from, to))
    return typeof value === "string" ? value : undefined
  } catch {
    return undefined
  }
}

/** Where the JSON string literal opening at `from` ends (just past its closing quote); undefined if it does not. */
export const stringEnd = (text: string, from: number): number | undefined => {
  if (text.charCodeAt(from) !== QUOTE) return undefined
  for (let i = from + 1; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c === QUOTE) return i + 1
    if (c < 0x20) return undefined
    if (c === BACKSLASH) i++
  }
  return undefined
}

/**
 * One step of a compact object's leading members: a member whose value is a string or a small non-negative
 * integer (read from the text), or a run of exact text that stands for known members (`members` gives them,
 * fresh each time, with `hole` — a string read where the text has `{}`, if it has — put in its place).
 */
export type ShapeStep =
  | { readonly key: string; readonly kind: "string" | "index" }
  | { readonly text: string; readonly members: (hole: string) => Readonly<Record<string, unknown>> }

/**
 * An object written compactly as `{` + the members `steps` describe, in that order + any further members + `}`,
 * as `JSON.parse` gives it; undefined when the text is not so written. The further members are parsed as an
 * object of their own and spread after the leading ones: a repeated key's last value wins in the first one's
 * place, exactly as in `JSON.parse`.
 */
export const compactObject = (data: string, steps: ReadonlyArray<ShapeStep>): Record<string, unknown> | undefined => {
  if (data.charCodeAt(0) !== 123) return undefined
  let at = 1
  const out: Record<string, unknown> = {}
  for (let i = 0; i < steps.length; i++) {
    const step = steps[i] as ShapeStep
    if (i > 0) {
      if (data.charCodeAt(at) !== 44) return undefined
      at++
    }
    if ("text" in step) {
      const hole = step.text.indexOf("{}")
      if (hole === -1) {
        if (!data.startsWith(step.text, at)) return undefined
        Object.assign(out, step.members(""))
        at += step.text.length
        continue
      }
      const head = step.text.slice(0, hole)
      if (!data.startsWith(head, at)) return undefined
      const end = stringEnd(data, at + head.length)
      if (end === undefined) return undefined
      const tail = step.text.slice(hole + 2)
      if (!data.startsWith(tail, end)) return undefined
      const value = stringLiteral(data, at + head.length, end)
      if (value === undefined) return undefined
      Object.assign(out, step.members(value))
      at = end + tail.length
      continue
    }
    const head = `"${step.key}":`
    if (!data.startsWith(head, at)) return undefined
    at += head.length
    if (step.kind === "index") {
      const index = indexAt(data, at)
      if (index === undefined) return undefined
      out[step.key] = index.value
      at = index.end
    } else {
      const end = stringEnd(data, at)
      if (end === undefined) return undefined
      const value = stringLiteral(data, at, end)
      if (value === undefined) return undefined
      out[step.key] = value
      at = end
    }
  }
  if (at === data.length - 1 && data.charCodeAt(at) === 125) return out
  // Further members must follow as `,"key":…}`: `{` + them is then exactly the object they make.
  if (data.charCodeAt(at) !== 44 || data.charCodeAt(at + 1) !== 34) return undefined
  let rest: unknown
  try {
    rest = JSON.parse(`{${data.slice(at + 1)}`)
  } catch {
    return undefined
  }
  return { ...out, ...(rest as object) }
}
