import { clip } from "../schema/quote.ts"
import { describeThrown } from "../tool/tool-constructors.ts"

/** Longest description of a thrown value that goes into an error message, a warning or a tool result. */
const MAX_DESCRIPTION_CHARS = 500

/**
 * `describeThrown` that never throws and never returns something huge. Hooks, subscribers, tools and clients may
 * throw anything — a Proxy, a revoked Proxy, an object whose `message` or `toString` getter throws, a symbol —
 * and the worker formats what they threw while it is already handling a failure. A second throw there would
 * turn a reported failure into a defect or an unhandled rejection, so this guard stays here even though the
 * describer itself is hardened elsewhere.
 */
export const describeSafely = (thrown: unknown): string => {
  try {
    const text: unknown = describeThrown(thrown)
    if (typeof text === "string") return clip(text, MAX_DESCRIPTION_CHARS)
  } catch {
    // Fall through: `typeof` reads nothing from the value, so it is the one thing always safe to say.
  }
  return `a thrown ${typeof thrown} that cannot be described`
}

/** `String(value)` for values that may come from plain JavaScript: never throws, bounded. */
export const stringSafely = (value: unknown): string => {
  if (typeof value === "string") return clip(value, MAX_DESCRIPTION_CHARS)
  try {
    return clip(String(value), MAX_DESCRIPTION_CHARS)
  } catch {
    return `an unprintable ${typeof value}`
  }
}
