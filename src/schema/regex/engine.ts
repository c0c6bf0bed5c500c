import { RE2JS } from "re2js"
import { UnsupportedSchemaError } from "../normalize.ts"
import { clip } from "../quote.ts"
import { translatePattern } from "./translate.ts"

/** What ajv asks of a compiled pattern (its `RegExpLike`), with the name it keys its scope by. */
export interface PatternMatcher {
  test(input: string): boolean
  toString(): string
}

/** An ajv `code.regExp` engine: a pattern source and ajv's flags (`"u"`) to a matcher. */
export interface PatternEngine {
  (source: string, flags: string): PatternMatcher
  /** How ajv names the engine in standalone code (never generated here; required by ajv's type). */
  readonly code: string
}

/** A pattern compiled for the linear-time engine, or why it cannot be. */
export type LinearPattern = { readonly ok: true; readonly matcher: PatternMatcher } | { readonly ok: false; readonly reason: string }

/** RE2's messages start with this; the rest names the construct. */
const RE2_PREFIX = "error parsing regexp: "

/** Longest pattern source compiled (UTF-16 code units); a generated list of alternatives fits, a megabyte does not. */
export const MAX_PATTERN_CHARS = 16_384
/** Deepest nesting of groups and classes in a pattern: the parsers that read a pattern recurse per level. */
export const MAX_PATTERN_NESTING = 100

/**
 * Why `source` is too large to be parsed at all, or undefined. A linear scan that runs before any parser does:
 * group depth is counted on `(` and `)` outside classes and escapes (an approximation that can only overcount
 * classes as one level), so 20,000 nested groups are refused here instead of overflowing a parser's stack.
 */
export const patternSizeProblem = (source: string): string | undefined => {
  if (source.length > MAX_PATTERN_CHARS) return `it is ${source.length} characters long; at most ${MAX_PATTERN_CHARS} are read`
  let depth = 0
  let inClass = false
  for (let i = 0; i < source.length; i++) {
    const c = source.charCodeAt(i)
    if (c === 0x5c) i++ // a backslash escapes the next character
    else if (inClass) inClass = c !== 0x5d
    else if (c === 0x5b) inClass = true
    else if (c === 0x28 && ++depth > MAX_PATTERN_NESTING) return `its groups nest deeper than ${MAX_PATTERN_NESTING} levels`
    else if (c === 0x29) depth = Math.max(0, depth - 1)
  }
  return undefined
}

/**
 * `source` (an ECMAScript pattern with the `u` flag, as JSON Schema reads it) compiled for re2js, whose matching
 * time is linear in the input's length whatever the pattern; or why it cannot be.
 */
export const compileLinear = (source: string): LinearPattern => {
  const tooLarge = patternSizeProblem(source)
  if (tooLarge !== undefined) return { ok: false, reason: tooLarge }
  const translated = translatePattern(source)
  if (!translated.ok) return translated
  let compiled: RE2JS
  try {
    compiled = RE2JS.compile(translated.re2)
  } catch (thrown) {
    const message = thrown instanceof Error ? thrown.message : String(thrown)
    const said = message.startsWith(RE2_PREFIX) ? message.slice(RE2_PREFIX.length) : message
    const hint = said.startsWith("invalid repeat count") ? " (a repetition count is at most 1000, nested counts multiplied)" : ""
    return { ok: false, reason: `the linear-time engine refuses it: ${clip(said, 200)}${hint}` }
  }
  const name = `re2:/${source}/u`
  return { ok: true, matcher: { test: (input) => compiled.test(input), toString: () => name } }
}

/**
 * The engine for schemas from outside the process (a remote registration, a plugin's request): every pattern runs
 * on the linear-time engine, never on JavaScript's backtracking RegExp. A pattern it cannot run throws; the
 * codec refuses such a schema at definition (`untrustedPatternProblem`), so this throw is a second line only.
 */
export const linearOnlyEngine: PatternEngine = Object.assign(
  (source: string): PatternMatcher => {
    const linear = compileLinear(source)
    if (linear.ok) return linear.matcher
    throw new UnsupportedSchemaError({ message: `pattern ${JSON.stringify(clip(source, 120))}: ${linear.reason}` })
  },
  { code: "llmWorkerLinearOnlyPattern" }
)

/**
 * The engine for a developer's own schemas: the linear-time engine for every pattern it can run, and
 * JavaScript's RegExp for the few it cannot (lookaround, backreferences — zod's `email()` pattern has a
 * lookahead). The pattern is trusted code; the value it is matched against is not, which is why the linear
 * engine comes first.
 */
export const linearFirstEngine: PatternEngine = Object.assign(
  (source: string, flags: string): PatternMatcher => {
    const linear = compileLinear(source)
    if (linear.ok) return linear.matcher
    // A pattern too large to parse is refused, not handed to RegExp's parser.
    const tooLarge = patternSizeProblem(source)
    if (tooLarge !== undefined) throw new UnsupportedSchemaError({ message: `pattern ${JSON.stringify(clip(source, 120))}: ${tooLarge}` })
    return new RegExp(source, flags)
  },
  { code: "llmWorkerLinearFirstPattern" }
)
