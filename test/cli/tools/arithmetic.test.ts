import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { ArithmeticError, MAX_DEPTH, MAX_EXPRESSION_LENGTH, evaluate } from "../../../src/cli/tools/arithmetic.ts"

/** A number literal as a person or model writes it, with an optional leading minus. */
const literal = fc.oneof(
  fc.integer({ min: 0, max: 10_000 }).map(String),
  fc.integer({ min: 0, max: 100_000 }).map((n) => String(n / 100)),
  fc.double({ min: 0, max: 1e6, noNaN: true, noDefaultInfinity: true }).map(String)
)
const signed = fc.tuple(fc.boolean(), literal).map(([negative, text]) => (negative ? `-${text}` : text))
const operator = fc.constantFrom("+", "-", "*", "/", "%")

/** Flat expressions without `^` are also valid JavaScript with the same precedence, so JS can be the oracle. */
const flatExpression = fc
  .tuple(signed, fc.array(fc.tuple(operator, signed), { maxLength: 12 }))
  .map(([first, rest]) => [first, ...rest.flatMap(([op, operand]) => [op, operand])].join(" "))

type Tree = { readonly kind: "leaf"; readonly value: number } | { readonly kind: "node"; readonly op: string; readonly left: Tree; readonly right: Tree } | { readonly kind: "neg"; readonly inner: Tree }

const tree: fc.Arbitrary<Tree> = fc.letrec<{ tree: Tree }>((tie) => ({
  tree: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.integer({ min: 0, max: 50 }).map((value): Tree => ({ kind: "leaf", value })),
    fc.record({ kind: fc.constant("node" as const), op: fc.constantFrom("+", "-", "*", "/", "%", "^"), left: tie("tree"), right: tie("tree") }),
    fc.record({ kind: fc.constant("neg" as const), inner: tie("tree") })
  )
})).tree

const print = (t: Tree): string =>
  t.kind === "leaf" ? String(t.value) : t.kind === "neg" ? `(-${print(t.inner)})` : `(${print(t.left)} ${t.op} ${print(t.right)})`

/** An interpreter over the tree, independent of the parser: the reference the parsed text must agree with. */
const reference = (t: Tree): number | "refused" => {
  if (t.kind === "leaf") return t.value
  if (t.kind === "neg") {
    const inner = reference(t.inner)
    return inner === "refused" ? inner : -inner
  }
  const left = reference(t.left)
  const right = reference(t.right)
  if (left === "refused" || right === "refused") return "refused"
  switch (t.op) {
    case "+":
      return left + right
    case "-":
      return left - right
    case "*":
      return left * right
    case "/":
      return right === 0 ? "refused" : left / right
    case "%":
      return right === 0 ? "refused" : left % right
    default:
      return left ** right
  }
}

const finalOf = (value: number | "refused"): number | "refused" =>
  value === "refused" || !Number.isFinite(value) ? "refused" : Object.is(value, -0) ? 0 : value

const outcome = (text: string): number | "refused" => {
  const result = evaluate(text)
  return result.ok ? result.value : "refused"
}

describe("calculator arithmetic", () => {
  it("evaluates precedence, associativity and signs as written", () => {
    expect(outcome("(17.5 * 4) - 2^3")).toBe(62)
    expect(outcome("2^3^2")).toBe(512)
    expect(outcome("-2^2")).toBe(-4)
    expect(outcome("2^-1")).toBe(0.5)
    expect(outcome("10 - 4 - 3")).toBe(3)
    expect(outcome("100 / 10 / 5")).toBe(2)
    expect(outcome(" 7 % 4 * 2 ")).toBe(6)
    expect(outcome("--3")).toBe(3)
    expect(outcome(".5 + 5.")).toBe(5.5)
    expect(outcome("1.5e3")).toBe(1500)
  })

  it("agrees with JavaScript on random flat expressions (same precedence, same IEEE steps)", () => {
    fc.assert(
      fc.property(flatExpression, (text) => {
        // The test's oracle only; the calculator itself never evaluates code.
        const expected = finalOf(Function(`"use strict"; return (${text})`)() as number)
        expect(outcome(text)).toBe(expected)
      }),
      { numRuns: 500 }
    )
  })

  it("agrees with a tree interpreter on random nested expressions with ^ and unary minus", () => {
    fc.assert(
      fc.property(tree, (t) => {
        expect(outcome(print(t))).toBe(finalOf(reference(t)))
      }),
      { numRuns: 500 }
    )
  })

  it("refuses garbage with an ArithmeticError value and never throws", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 60 }), (text) => {
        const result = evaluate(text)
        if (!result.ok) {
          expect(result.error).toBeInstanceOf(ArithmeticError)
          expect(result.error.position).toBeGreaterThanOrEqual(0)
          expect(result.error.position).toBeLessThanOrEqual(Math.max(text.length, MAX_EXPRESSION_LENGTH))
          expect(result.error.message.length).toBeGreaterThan(0)
        }
      }),
      { numRuns: 1000 }
    )
  })

  it("refuses any text holding a character outside the language", () => {
    const foreign = fc.string({ minLength: 1, maxLength: 3 }).filter((s) => /[^0-9+\-*/%^().eE \t\r\n]/.test(s))
    fc.assert(
      fc.property(flatExpression, foreign, fc.nat(), (text, junk, at) => {
        const cut = at % (text.length + 1)
        expect(evaluate(text.slice(0, cut) + junk + text.slice(cut)).ok).toBe(false)
      })
    )
  })

  it("names the problem and where it is", () => {
    const cases: ReadonlyArray<readonly [string, string, number]> = [
      ["1 / 0", "division by zero", 2],
      ["4 % (2 - 2)", "remainder by zero", 2],
      ["1 +", "unexpected end of expression", 3],
      ["(1 + 2", "missing ')'", 6],
      ["1 + 2)", "unbalanced ')'", 5],
      ["2 3", "expected an operator", 2],
      ["2 * x", 'unexpected character "x"', 4],
      ["", "empty expression", 0],
      ["1e999", "the result is not a finite number", 0],
      ["process.exit()", 'unexpected character "p"', 0]
    ]
    for (const [text, message, position] of cases) {
      const result = evaluate(text)
      expect(result.ok ? "accepted" : { message: result.error.message, position: result.error.position }).toEqual({ message, position })
    }
  })

  it("refuses deep nesting and overlong input instead of exhausting the stack", () => {
    const nested = `${"(".repeat(MAX_DEPTH + 1)}1${")".repeat(MAX_DEPTH + 1)}`
    expect(evaluate(nested).ok).toBe(false)
    expect(evaluate(`${"-".repeat(MAX_EXPRESSION_LENGTH - 1)}1`).ok).toBe(false)
    expect(evaluate(`${"(".repeat(MAX_DEPTH)}1${")".repeat(MAX_DEPTH)}`)).toEqual({ ok: true, value: 1 })
    const long = evaluate("1+".repeat(MAX_EXPRESSION_LENGTH))
    expect(long.ok ? "accepted" : long.error.message).toMatch(/longer than/)
  })
})
