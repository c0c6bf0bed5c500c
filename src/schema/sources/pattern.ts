/**
 * Whether a JavaScript RegExp can be shown to the model as a JSON Schema `pattern` that means what the schema
 * library's check means. A JSON Schema pattern has no flags and is matched (by the decoder's ajv step, as by
 * most validators) as a Unicode RegExp.
 *
 * `d` and `g` do not change which strings match (libraries reset `lastIndex`); `y` is shown as an anchored
 * pattern by the caller. `i`, `m`, `s` and `v` change the language matched, so a pattern carrying them is
 * refused rather than silently shown narrower or wider than the check. Without `u`, a source is accepted when
 * it is also a valid Unicode pattern and uses no escape whose meaning the `u` flag changes; the two readings
 * then differ only on characters beyond U+FFFF (where `.` or a negated class counts a surrogate pair as one
 * character in one reading and two in the other) — the same UTF-16 residual as string lengths.
 *
 * @returns undefined when the pattern is exact, else why not (for the definition-time error).
 */
export const patternProblem = (source: string, flags: string): string | undefined => {
  const changing = [...flags].filter((f) => !"dguy".includes(f))
  if (changing.length > 0) {
    return `the ${changing.map((f) => `"${f}"`).join(", ")} flag changes what it matches and a JSON Schema pattern has no flags; write the pattern without it`
  }
  try {
    new RegExp(source, "u")
  } catch {
    return "not a valid Unicode RegExp, so it cannot be a JSON Schema pattern; add the u flag and fix the escapes"
  }
  // `\p{…}`, `\P{…}` and `\u{…}` are property classes / code points with `u`, literal letters without it.
  if (!flags.includes("u") && /(?:^|[^\\])(?:\\\\)*\\[pPu]\{/.test(source)) {
    return "its \\p{…} or \\u{…} escapes mean something else without the u flag; add the u flag"
  }
  return undefined
}

/** A literal string as a Unicode-mode pattern matching exactly it (only syntax characters are escaped). */
export const escapeForPattern = (literal: string): string => literal.replace(/[\\^$.*+?()[\]{}|/]/g, "\\$&")
