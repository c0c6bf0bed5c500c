/**
 * Nesting bounds for JSON that a model, a provider or a plugin controls. Every walker in the package that
 * recurses over such data checks one of these first, so hostile nesting becomes a precise error instead of a
 * stack overflow. Both checks are iterative: they cannot overflow themselves.
 */

/** Default nesting bound for tool arguments and other untrusted JSON: far beyond any real tool schema. */
export const DEFAULT_MAX_JSON_DEPTH = 64

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

/**
 * The deepest nesting of arrays and plain objects in an in-memory value, stopping once `limit` is exceeded
 * (returns `limit + 1` then). Cycles count as too deep. Only own enumerable string keys are read, and nothing
 * that could run code (getters are read by `Object.keys` + indexing like `JSON.stringify` would).
 */
export const valueDepth = (value: unknown, limit: number): number => {
  if (typeof value !== "object" || value === null) return 0
  const stack: Array<{ readonly node: object; readonly depth: number }> = [{ node: value, depth: 1 }]
  let deepest = 0
  let visited = 0
  while (stack.length > 0) {
    const { node, depth } = stack.pop() as { node: object; depth: number }
    if (depth > deepest) {
      deepest = depth
      if (deepest > limit) return limit + 1
    }
    // A cyclic or absurdly shared graph is not JSON; bound the walk by a generous node budget.
    if (++visited > 10_000_000) return limit + 1
    const children = Array.isArray(node) ? node : Object.values(node)
    for (const child of children) if (typeof child === "object" && child !== null) stack.push({ node: child, depth: depth + 1 })
  }
  return deepest
}

/** The error text used everywhere a nesting bound is hit, so users and models see one wording. */
export const tooDeepMessage = (what: string, limit: number): string => `${what} nested deeper than ${limit} levels`
