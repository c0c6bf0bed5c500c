/**
 * Pieces for recognising the few event shapes that make up most of a stream (text and argument deltas) in their
 * exact compact form, so their payload string is read without `JSON.parse` building the whole event (which was
 * the largest cost of decoding, decision 0076). A recogniser either returns exactly what `JSON.parse` would
 * (same values, same keys in the same order) or nothing, and then the event is parsed in full: any other shape,
 * any whitespace, any extra or reordered key, any doubt, takes the ordinary path.
 */

/**
 * The non-negative integer written at `at` in `text` (JSON grammar: no sign, no leading zero, no fraction or
 * exponent, at most 9 digits so it is exact), and where it ends; undefined when there is none.
 */
export const indexAt = (text: string, at: number): { readonly value: number; readonly end: number } | undefined => {
  let end = at
  let value = 0
  while (end < text.length && end - at < 10) {
    const digit = text.charCodeAt(end) - 48
    if (digit < 0 || digit > 9) break
    value = value * 10 + digit
    end++
  }
  const digits = end - at
  if (digits === 0 || digits > 9 || (digits > 1 && text.charCodeAt(at) === 48)) return undefined
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
