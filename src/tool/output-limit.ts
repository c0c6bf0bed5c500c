/**
 * The bound on what one tool call puts in front of the model (and into the history kept for every later
 * request): the Rust original's `ToolOutputLimits`. A tool returning 100 MiB, or failing with a 50 MiB message,
 * must cost at most this many bytes per call, with a marker that says how much was dropped so the model (and
 * the person reading the transcript) knows the text is incomplete.
 */

/** Default cap on one call's output or error text: 100 KiB of UTF-8 (102,400 bytes), marker included. */
export const DEFAULT_TOOL_OUTPUT_BYTES = 100 * 1024

/** The smallest accepted cap: room for the marker and some text. */
export const MIN_TOOL_OUTPUT_BYTES = 256

/** Checks a configured cap: an integer of at least `MIN_TOOL_OUTPUT_BYTES`, or `Infinity` for none. */
export const checkOutputLimit = (value: unknown, what: string): number => {
  if (value === Number.POSITIVE_INFINITY) return value
  if (typeof value !== "number" || !Number.isInteger(value) || value < MIN_TOOL_OUTPUT_BYTES) {
    throw new RangeError(`${what} must be an integer number of bytes >= ${MIN_TOOL_OUTPUT_BYTES} (or Infinity), got ${String(value)}`)
  }
  return value
}

/** UTF-8 length of `text` without encoding it; a lone surrogate counts 3 bytes, as its U+FFFD replacement. */
export const utf8Length = (text: string): number => {
  let bytes = text.length
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c < 0x80) continue
    if (c < 0x800) bytes += 1
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      bytes += 2 // a pair: two code units, four bytes
      i++
    } else bytes += 2
  }
  return bytes
}

/** How many code units of `text` fit in `budget` UTF-8 bytes, ending on a code point (never inside a pair). */
const fittingUnits = (text: string, budget: number): number => {
  let bytes = 0
  let i = 0
  while (i < text.length) {
    const c = text.charCodeAt(i)
    const pair = c >= 0xd800 && c <= 0xdbff && i + 1 < text.length && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00
    const size = c < 0x80 ? 1 : c < 0x800 ? 2 : pair ? 4 : 3
    if (bytes + size > budget) break
    bytes += size
    i += pair ? 2 : 1
  }
  return i
}

const marker = (dropped: number, total: number): string => `\n[… output truncated: ${dropped} of ${total} bytes dropped]`

/**
 * `text` if its UTF-8 form fits in `maxBytes`; otherwise its longest prefix that leaves room for the marker,
 * then the marker, together at most `maxBytes`. Idempotent: a capped text fits its own cap, so capping again
 * (after hooks) changes nothing. The kept prefix is a fresh string, not a slice of the input, so the dropped
 * megabytes can be collected instead of being retained by the history.
 */
export const limitOutput = (text: string, maxBytes: number = DEFAULT_TOOL_OUTPUT_BYTES): string => {
  // Every code unit is 1 to 3 bytes, so short texts need no counting at all (the common case).
  if (text.length * 3 <= maxBytes) return text
  const total = utf8Length(text)
  if (total <= maxBytes) return text
  // Reserve the longest marker this total can produce (the dropped count has at most as many digits).
  const budget = Math.max(0, maxBytes - utf8Length(marker(total, total)))
  const units = fittingUnits(text, budget)
  const kept = text.slice(0, units)
  const keptBytes = utf8Length(kept)
  // The JSON round trip copies the characters into a flat new string (V8 keeps a `slice` pointing into the
  // original, which would retain all of it); lone surrogates survive it, escaped and restored.
  const copy = JSON.parse(JSON.stringify(kept)) as string
  return `${copy}${marker(total - keptBytes, total)}`
}
