import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { compileLinear } from "../../src/schema/regex/engine.ts"

/** The linear-time engine's answer for `source` on `input`, or undefined when it cannot run the pattern. */
const linearTest = (source: string, input: string): boolean | undefined => {
  const compiled = compileLinear(source)
  return compiled.ok ? compiled.matcher.test(input) : undefined
}

/** Characters whose meaning differs between the two syntaxes, and a few ordinary ones. */
const CHARS = ["a", "b", "A", "0", "_", "-", ".", " ", "\n", "\r", "\t", "\v", "\u00a0", "\u2028", "\ufeff", "é", "😀", "\ud800", "[", "]", ":", "\\", "/", "^", "$"]

const escapeChar = (c: string): string => ("\\^$.*+?()[]{}|/-".includes(c) ? `\\${c}` : c)
const hexEscape = (c: string): string => {
  const cp = c.codePointAt(0) as number
  return cp > 0xffff ? `\\u{${cp.toString(16)}}` : `\\u${cp.toString(16).padStart(4, "0")}`
}

const literal = fc.constantFrom(...CHARS).chain((c) => fc.constantFrom(escapeChar(c), hexEscape(c)))
const classItem = fc.oneof(
  literal,
  fc.tuple(fc.constantFrom("a", "0", "A", " "), fc.constantFrom("z", "9", "Z", "~")).map(([lo, hi]) => `${lo}-${hi}`),
  fc.constantFrom("\\d", "\\D", "\\w", "\\W", "\\s", "\\S", "\\b", "\\p{L}", "\\P{Lu}", "\\p{Script=Latin}", "\\p{Nd}", "\\p{ASCII}", "\\P{Any}")
)
const characterClass = fc.tuple(fc.boolean(), fc.array(classItem, { maxLength: 4 })).map(([negated, items]) => `[${negated ? "^" : ""}${items.join("")}]`)
const atom = fc.oneof(
  { weight: 4, arbitrary: literal },
  { weight: 2, arbitrary: fc.constantFrom(".", "\\d", "\\D", "\\w", "\\W", "\\s", "\\S", "\\p{L}", "\\P{L}", "\\p{Letter}", "\\p{gc=Zs}") },
  { weight: 2, arbitrary: characterClass }
)
const quantifier = fc.constantFrom("", "", "*", "+", "?", "{2}", "{0,3}", "{1,}", "*?", "+?", "{1,2}?")

const patternOf: fc.Memo<string> = fc.memo((depth) =>
  depth <= 0
    ? fc.tuple(atom, quantifier).map(([a, q]) => a + q)
    : fc.oneof(
        fc.tuple(atom, quantifier).map(([a, q]) => a + q),
        fc.array(patternOf(depth - 1), { minLength: 1, maxLength: 3 }).map((parts) => parts.join("")),
        fc.array(patternOf(depth - 1), { minLength: 2, maxLength: 3 }).map((parts) => parts.join("|")),
        fc.tuple(fc.constantFrom("(", "(?:", "(?<g>"), patternOf(depth - 1), quantifier).map(([open, inner, q]) => `${open}${inner})${q}`),
        fc.tuple(fc.constantFrom("^", "\\b", "\\B", ""), patternOf(depth - 1), fc.constantFrom("$", "\\b", "")).map(([a, p, b]) => a + p + b)
      )
)

const input = fc.array(fc.constantFrom(...CHARS, "aa", "ab", "a1", "😀a"), { maxLength: 8 }).map((parts) => parts.join(""))

describe("the linear-time engine agrees with JavaScript's RegExp (u flag) wherever both run a pattern", () => {
  it("on generated patterns and strings (property)", () => {
    fc.assert(
      fc.property(patternOf(3), fc.array(input, { minLength: 1, maxLength: 6 }), (source, inputs) => {
        let native: RegExp
        try {
          native = new RegExp(source, "u")
        } catch {
          return // not a valid Unicode pattern: neither engine's business
        }
        const compiled = compileLinear(source)
        // Every construct generated here is one the engine supports.
        expect(compiled.ok, `${source}: ${compiled.ok ? "" : compiled.reason}`).toBe(true)
        if (!compiled.ok) return
        for (const s of inputs) expect(compiled.matcher.test(s), `/${source}/u on ${JSON.stringify(s)}`).toBe(native.test(s))
      }),
      { numRuns: 600 }
    )
  })

  it("`\\s`, `.`, `\\w` and `\\b` mean what they mean in JavaScript, on every BMP code point and a surrogate pair", () => {
    for (const source of ["^\\s$", "^\\S$", "^.$", "^\\w$", "^[\\s\\d]$", "^[^\\S]$", "a\\b", "^\\p{L}$"]) {
      const compiled = compileLinear(source)
      expect(compiled.ok).toBe(true)
      if (!compiled.ok) continue
      const native = new RegExp(source, "u")
      const disagree: Array<number> = []
      for (let c = 0; c <= 0xffff; c++) {
        const s = source === "a\\b" ? `a${String.fromCharCode(c)}` : String.fromCharCode(c)
        if (compiled.matcher.test(s) !== native.test(s)) disagree.push(c)
      }
      expect(disagree, source).toEqual([])
      expect(compiled.matcher.test("😀"), source).toBe(native.test("😀"))
    }
  })

  it("`^` and `$` anchor at the ends of the text only (no multiline), `[]` matches nothing and `[^]` anything", () => {
    expect(linearTest("a$", "a\n")).toBe(false)
    expect(linearTest("^a", "\na")).toBe(false)
    expect(linearTest("[]", "a")).toBe(false)
    expect(linearTest("^[^]$", "\n")).toBe(true)
    // RE2 would read `[:alpha:]` inside a class as a POSIX class; JavaScript as the characters.
    expect(linearTest("^[[:alph]+$", "[:alph")).toBe(true)
    expect(linearTest("^[[:alph]+$", "b")).toBe(false)
    expect(linearTest("^\\u{1F600}\\uD83D\\uDE00$", "😀😀")).toBe(true)
  })

  it("refuses what it cannot run, saying what", () => {
    const reason = (source: string): string => {
      const compiled = compileLinear(source)
      return compiled.ok ? "compiled" : compiled.reason
    }
    expect(reason("(?=a)")).toContain("lookahead")
    expect(reason("(?!a)")).toContain("lookahead")
    expect(reason("(?<=a)b")).toContain("lookbehind")
    expect(reason("(?<!a)b")).toContain("lookbehind")
    expect(reason("(a)\\1")).toContain("backreferences")
    expect(reason("(?<n>a)\\k<n>")).toContain("backreferences")
    expect(reason("a{1001}")).toContain("a repetition count is at most 1000")
    expect(reason("(a{100}){100}")).toContain("a repetition count is at most 1000")
    expect(reason("\\p{Emoji}")).toContain("the Unicode property \\p{Emoji} is not supported")
    expect(reason("(")).toBe("not a valid ECMAScript (Unicode) regular expression")
    expect(reason("\\-")).toBe("not a valid ECMAScript (Unicode) regular expression")
  })

  it("matches in time linear in the input: the issue's pattern against 1 MiB of `a` and `!`", () => {
    const compiled = compileLinear("^(a+)+$")
    expect(compiled.ok).toBe(true)
    if (!compiled.ok) return
    const started = performance.now()
    expect(compiled.matcher.test(`${"a".repeat(1 << 20)}!`)).toBe(false)
    // About 35 ms here; a backtracking engine would not finish.
    expect(performance.now() - started).toBeLessThan(5000)
  })
})
