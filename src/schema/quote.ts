/**
 * Bounded quoting of untrusted text inside messages. A model, provider or plugin may send a 50 MiB key or tool
 * name; an error that echoes it whole costs memory, tokens and terminal space. Every message that quotes such a
 * value goes through here.
 */

/** Default number of UTF-16 code units of a value quoted in a message. */
export const DEFAULT_QUOTE_CHARS = 80
/** Default number of individual issues listed in one message before "… and N more". */
export const DEFAULT_LISTED_ISSUES = 5

/** `text` cut to at most `max` code units (never inside a surrogate pair), with how much was left out. */
export const clip = (text: string, max: number = DEFAULT_QUOTE_CHARS): string => {
  if (text.length <= max) return text
  let end = max
  const last = text.charCodeAt(end - 1)
  if (last >= 0xd800 && last <= 0xdbff) end--
  return `${detached(text.slice(0, end))}… (${text.length - end} more characters)`
}

/**
 * A flat copy of a short string. V8 represents `slice` of a long string as a view that keeps the whole original
 * alive, so 80 characters quoted from a 50 MiB key would pin the 50 MiB for as long as the message lives. The JSON
 * round trip copies the characters (lone surrogates survive it, escaped and restored).
 */
const detached = (text: string): string => JSON.parse(JSON.stringify(text)) as string

/** `text` as a JSON string literal, clipped first: safe to embed in one line of any message. */
export const quote = (text: string, max: number = DEFAULT_QUOTE_CHARS): string => JSON.stringify(clip(text, max))

/** At most `max` entries joined with `separator`, then "… and N more" for the rest. */
export const listBounded = (entries: ReadonlyArray<string>, separator = "; ", max: number = DEFAULT_LISTED_ISSUES): string =>
  entries.length <= max
    ? entries.join(separator)
    : `${entries.slice(0, max).join(separator)}${separator}… and ${entries.length - max} more`
