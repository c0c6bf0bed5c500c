/**
 * ECMAScript patterns (as JSON Schema validators read them: the `u` flag, no others) rewritten in RE2 syntax for
 * the linear-time engine, with the same set of matched strings — or the reason why not.
 *
 * Only whether a string matches is ever asked, so captures, group names and laziness are dropped: for a pattern
 * without lookaround or backreferences, the strings a backtracking and an automaton engine match are the same.
 * Everything whose meaning differs between the two syntaxes is spelled out explicitly: `.` (JavaScript excludes
 * four line terminators, RE2 only `\n`), `\s` (JavaScript's Unicode whitespace, RE2's six ASCII characters), every
 * non-alphanumeric literal as `\x{…}` (RE2 reads `[[:alpha:]]` as a POSIX class, JavaScript as characters), the
 * empty class `[]` and the any-class `[^]`, and Unicode property names (JavaScript's long names, RE2's short ones).
 */

/** A pattern in RE2 syntax, or why the pattern has none. */
export type Translation = { readonly ok: true; readonly re2: string } | { readonly ok: false; readonly reason: string }

const MAX_CODE_POINT = 0x10ffff

/** JavaScript's `\s`: WhiteSpace and LineTerminator (ECMA-262), as inclusive code point ranges. */
const JS_SPACE: ReadonlyArray<readonly [number, number]> = [
  [0x09, 0x0d], [0x20, 0x20], [0xa0, 0xa0], [0x1680, 0x1680], [0x2000, 0x200a], [0x2028, 0x2029],
  [0x202f, 0x202f], [0x205f, 0x205f], [0x3000, 0x3000], [0xfeff, 0xfeff]
]
const DIGIT: ReadonlyArray<readonly [number, number]> = [[0x30, 0x39]]
const WORD: ReadonlyArray<readonly [number, number]> = [[0x30, 0x39], [0x41, 0x5a], [0x5f, 0x5f], [0x61, 0x7a]]
/** What `.` matches without the `s` flag: everything but the four line terminators. */
const DOT = "[^\\x{a}\\x{d}\\x{2028}\\x{2029}]"

/** A class no code point is in (RE2 has no `[]`). */
const NOTHING = "[^\\x{0}-\\x{10ffff}]"

/** General_Category values by their long names; JavaScript accepts both, RE2 the short one only. */
const CATEGORY_ALIASES: Readonly<Record<string, string>> = {
  Letter: "L", Cased_Letter: "LC", Uppercase_Letter: "Lu", Lowercase_Letter: "Ll", Titlecase_Letter: "Lt",
  Modifier_Letter: "Lm", Other_Letter: "Lo", Mark: "M", Combining_Mark: "M", Nonspacing_Mark: "Mn",
  Spacing_Mark: "Mc", Enclosing_Mark: "Me", Number: "N", Decimal_Number: "Nd", digit: "Nd", Letter_Number: "Nl",
  Other_Number: "No", Punctuation: "P", punct: "P", Connector_Punctuation: "Pc", Dash_Punctuation: "Pd",
  Open_Punctuation: "Ps", Close_Punctuation: "Pe", Initial_Punctuation: "Pi", Final_Punctuation: "Pf",
  Other_Punctuation: "Po", Symbol: "S", Math_Symbol: "Sm", Currency_Symbol: "Sc", Modifier_Symbol: "Sk",
  Other_Symbol: "So", Separator: "Z", Space_Separator: "Zs", Line_Separator: "Zl", Paragraph_Separator: "Zp",
  Other: "C", Control: "Cc", cntrl: "Cc", Format: "Cf", Surrogate: "Cs", Private_Use: "Co", Unassigned: "Cn"
}
const CATEGORIES = new Set(Object.values(CATEGORY_ALIASES))

const hex = (c: number): string => `\\x{${c.toString(16)}}`
const literal = (c: number): string =>
  (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) ? String.fromCharCode(c) : hex(c)

type Ranges = ReadonlyArray<readonly [number, number]>

const complement = (ranges: Ranges): Array<readonly [number, number]> => {
  const out: Array<readonly [number, number]> = []
  let next = 0
  for (const [lo, hi] of ranges) {
    if (lo > next) out.push([next, lo - 1])
    next = hi + 1
  }
  if (next <= MAX_CODE_POINT) out.push([next, MAX_CODE_POINT])
  return out
}

const rangeText = (ranges: Ranges): string =>
  ranges.map(([lo, hi]) => (lo === hi ? hex(lo) : `${hex(lo)}-${hex(hi)}`)).join("")

/** Thrown inside the parser; caught by `translatePattern` and returned as its reason. */
class Untranslatable {
  constructor(readonly reason: string) {}
}

/**
 * A pattern's parser, for sources already known to be valid `u`-flag patterns (so every syntax error a valid
 * pattern cannot have is reported as untranslatable rather than diagnosed). Walks code points, as `u` does.
 */
class Parser {
  private at = 0
  private readonly cps: ReadonlyArray<number>

  constructor(source: string) {
    this.cps = Array.from(source, (ch) => ch.codePointAt(0) as number)
  }

  private peek(offset = 0): number | undefined {
    return this.cps[this.at + offset]
  }

  private is(ch: string, offset = 0): boolean {
    return this.cps[this.at + offset] === ch.codePointAt(0)
  }

  private take(): number {
    const c = this.cps[this.at++]
    if (c === undefined) throw new Untranslatable("the pattern ends early")
    return c
  }

  private eat(ch: string): boolean {
    if (!this.is(ch)) return false
    this.at++
    return true
  }

  parse(): string {
    const out = this.disjunction()
    if (this.at < this.cps.length) throw new Untranslatable(`unexpected ${String.fromCodePoint(this.cps[this.at] as number)}`)
    return out
  }

  private disjunction(): string {
    const alternatives = [this.alternative()]
    while (this.eat("|")) alternatives.push(this.alternative())
    return alternatives.join("|")
  }

  private alternative(): string {
    let out = ""
    while (this.at < this.cps.length && !this.is("|") && !this.is(")")) out += this.term()
    return out
  }

  private term(): string {
    if (this.eat("^")) return "^"
    if (this.eat("$")) return "$"
    if (this.is("\\") && (this.is("b", 1) || this.is("B", 1))) {
      this.at++
      return `\\${String.fromCodePoint(this.take())}`
    }
    const atom = this.atom()
    return atom + this.quantifier()
  }

  private quantifier(): string {
    let q: string
    if (this.eat("*")) q = "*"
    else if (this.eat("+")) q = "+"
    else if (this.eat("?")) q = "?"
    else if (this.is("{")) {
      const start = this.at
      this.at++
      let text = ""
      while (!this.is("}")) text += String.fromCodePoint(this.take())
      this.at++
      if (!/^\d+(,\d*)?$/.test(text)) {
        this.at = start
        throw new Untranslatable(`unexpected {${text}}`)
      }
      q = `{${text}}`
    } else return ""
    // Laziness changes which match is found, never whether one is.
    this.eat("?")
    return q
  }

  private atom(): string {
    const c = this.take()
    switch (String.fromCodePoint(c)) {
      case ".":
        return DOT
      case "(":
        return this.group()
      case "[":
        return this.characterClass()
      case "\\":
        return this.atomEscape()
      case "*":
      case "+":
      case "?":
      case "{":
      case "}":
      case "]":
      case ")":
        throw new Untranslatable(`unexpected ${String.fromCodePoint(c)}`)
      default:
        return literal(c)
    }
  }

  private group(): string {
    if (this.eat("?")) {
      if (this.eat(":")) {
        // plain non-capturing group
      } else if (this.is("=") || this.is("!")) {
        throw new Untranslatable("lookahead ((?=…) or (?!…)) is not supported by the linear-time engine")
      } else if (this.is("<") && (this.is("=", 1) || this.is("!", 1))) {
        throw new Untranslatable("lookbehind ((?<=…) or (?<!…)) is not supported by the linear-time engine")
      } else if (this.eat("<")) {
        while (!this.eat(">")) this.take()
      } else throw new Untranslatable("this group syntax (?… is not supported by the linear-time engine")
    }
    const inner = this.disjunction()
    if (!this.eat(")")) throw new Untranslatable("unclosed group")
    return `(?:${inner})`
  }

  private atomEscape(): string {
    const c = this.peek()
    if (c === undefined) throw new Untranslatable("the pattern ends in \\")
    const ch = String.fromCodePoint(c)
    if (/[1-9]/.test(ch) || ch === "k") {
      throw new Untranslatable("backreferences (\\1, \\k<name>) are not supported by the linear-time engine")
    }
    const set = this.classEscape(false)
    if (typeof set === "number") return literal(set)
    return set === "" ? NOTHING : `[${set}]`
  }

  /**
   * One escape after `\`: a code point, or class contents in RE2 syntax (for `\d`, `\p{…}`…). `inClass`: `\b` is
   * backspace and `\-` a hyphen there.
   */
  private classEscape(inClass: boolean): number | string {
    const c = this.take()
    const ch = String.fromCodePoint(c)
    switch (ch) {
      case "d":
        return rangeText(DIGIT)
      case "D":
        return rangeText(complement(DIGIT))
      case "w":
        return rangeText(WORD)
      case "W":
        return rangeText(complement(WORD))
      case "s":
        return rangeText(JS_SPACE)
      case "S":
        return rangeText(complement(JS_SPACE))
      case "p":
      case "P":
        return this.property(ch === "P")
      case "f":
        return 0x0c
      case "n":
        return 0x0a
      case "r":
        return 0x0d
      case "t":
        return 0x09
      case "v":
        return 0x0b
      case "c": {
        const letter = this.take()
        return letter % 32
      }
      case "0":
        return 0
      case "x": {
        const digits = String.fromCodePoint(this.take(), this.take())
        return Number.parseInt(digits, 16)
      }
      case "u":
        return this.unicodeEscape()
      case "b":
        if (inClass) return 0x08
        throw new Untranslatable("unexpected \\b")
      case "-":
        if (inClass) return 0x2d
        throw new Untranslatable("unexpected \\-")
      default:
        if ("^$\\.*+?()[]{}|/".includes(ch)) return c
        throw new Untranslatable(`the escape \\${ch} is not supported by the linear-time engine`)
    }
  }

  private unicodeEscape(): number {
    if (this.eat("{")) {
      let digits = ""
      while (!this.eat("}")) digits += String.fromCodePoint(this.take())
      return Number.parseInt(digits, 16)
    }
    const unit = (): number => Number.parseInt(String.fromCodePoint(this.take(), this.take(), this.take(), this.take()), 16)
    const lead = unit()
    // `\uD83D\uDE00` is one code point under `u`.
    if (lead >= 0xd800 && lead <= 0xdbff && this.is("\\") && this.is("u", 1) && !this.is("{", 2)) {
      const save = this.at
      this.at += 2
      const trail = unit()
      if (trail >= 0xdc00 && trail <= 0xdfff) return 0x10000 + ((lead - 0xd800) << 10) + (trail - 0xdc00)
      this.at = save
    }
    return lead
  }

  /** `\p{…}` / `\P{…}` as RE2 class contents. */
  private property(negated: boolean): string {
    if (!this.eat("{")) throw new Untranslatable("\\p without {…}")
    let text = ""
    while (!this.eat("}")) text += String.fromCodePoint(this.take())
    const [key, value] = text.includes("=") ? (text.split("=", 2) as [string, string]) : [undefined, text]
    const p = negated ? "\\P" : "\\p"
    if (key === undefined || key === "General_Category" || key === "gc") {
      const category = CATEGORIES.has(value) ? value : CATEGORY_ALIASES[value]
      if (category !== undefined) return `${p}{${category}}`
      if (key === undefined) {
        if (value === "Any") return negated ? "" : rangeText([[0, MAX_CODE_POINT]])
        if (value === "ASCII") return rangeText(negated ? complement([[0, 0x7f]]) : [[0, 0x7f]])
        if (value === "Assigned") return `${negated ? "\\p" : "\\P"}{Cn}`
      }
    } else if (key === "Script" || key === "sc") {
      // RE2 knows scripts by their long names (`Latin`); the four-letter codes (`Latn`) fail its compile.
      if (/^[A-Z][A-Za-z_]*$/.test(value)) return `${p}{${value}}`
    }
    throw new Untranslatable(
      `the Unicode property \\${negated ? "P" : "p"}{${text}} is not supported by the linear-time engine (General_Category values and Script=<long name> are)`
    )
  }

  private characterClass(): string {
    const negated = this.eat("^")
    let body = ""
    while (!this.eat("]")) {
      const first = this.classAtom()
      if (this.is("-") && !this.is("]", 1)) {
        this.at++
        const last = this.classAtom()
        if (typeof first !== "number" || typeof last !== "number") throw new Untranslatable("a class range with a class escape")
        body += `${hex(first)}-${hex(last)}`
      } else body += typeof first === "number" ? hex(first) : first
    }
    // RE2 has no empty class: `[]` matches nothing and `[^]` anything, as in JavaScript.
    if (body === "") return negated ? `[${rangeText([[0, MAX_CODE_POINT]])}]` : NOTHING
    return negated ? `[^${body}]` : `[${body}]`
  }

  private classAtom(): number | string {
    const c = this.take()
    return c === 0x5c ? this.classEscape(true) : c
  }
}

/**
 * The RE2 form of `source`, read as JSON Schema validators read a pattern (an ECMAScript RegExp with the `u`
 * flag), or why it has none: not a valid pattern, or a construct the linear-time engine cannot run (lookaround,
 * backreferences, some Unicode properties). RE2's own limits (a repetition count above 1000, a program too large)
 * show when the result is compiled.
 */
export const translatePattern = (source: string): Translation => {
  try {
    new RegExp(source, "u")
  } catch {
    return { ok: false, reason: "not a valid ECMAScript (Unicode) regular expression" }
  }
  try {
    return { ok: true, re2: new Parser(source).parse() }
  } catch (thrown) {
    if (thrown instanceof Untranslatable) return { ok: false, reason: thrown.reason }
    throw thrown
  }
}
