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

/**
 * `source` (an ECMAScript pattern with the `u` flag, as JSON Schema reads it) compiled for re2js, whose matching
 * time is linear in the input's length whatever the pattern; or why it cannot be.
 */
export const compileLinear = (source: string): LinearPattern => {
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
    return linear.ok ? linear.matcher : new RegExp(source, flags)
  },
  { code: "llmWorkerLinearFirstPattern" }
)
