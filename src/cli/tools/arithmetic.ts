import { TaggedError } from "../../error/tagged-error.ts"

/**
 * A small arithmetic language for the calculator tool: numbers, + - * / % ^, unary signs and parentheses.
 * It is parsed by hand (recursive descent) because the input comes from a model: no `eval`, no `Function`, and
 * every refusal is an `ArithmeticError` value that says where and why, never an exception.
 */

export class ArithmeticError extends TaggedError("ArithmeticError")<{
  readonly message: string
  /** 0-based character offset of the problem in the expression. */
  readonly position: number
}> {}

export type Evaluation = { readonly ok: true; readonly value: number } | { readonly ok: false; readonly error: ArithmeticError }

/** Long enough for any sum a person types; short enough that parsing cost stays trivial. */
export const MAX_EXPRESSION_LENGTH = 1000
/** Nesting beyond this is refused instead of risking the call stack. */
export const MAX_DEPTH = 64

type Token =
  | { readonly kind: "number"; readonly value: number; readonly at: number }
  | { readonly kind: "op"; readonly op: "+" | "-" | "*" | "/" | "%" | "^" | "(" | ")"; readonly at: number }

const NUMBER = /(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?/y
const OPERATORS = new Set(["+", "-", "*", "/", "%", "^", "(", ")"])

/** Thrown only inside this module and always caught by `evaluate`. */
class Refusal {
  constructor(
    readonly message: string,
    readonly position: number
  ) {}
}

const tokenize = (text: string): ReadonlyArray<Token> => {
  const tokens: Array<Token> = []
  let at = 0
  while (at < text.length) {
    const char = text[at] as string
    if (char === " " || char === "\t" || char === "\n" || char === "\r") {
      at++
      continue
    }
    NUMBER.lastIndex = at
    const number = NUMBER.exec(text)
    if (number !== null) {
      tokens.push({ kind: "number", value: Number(number[0]), at })
      at += number[0].length
      continue
    }
    if (OPERATORS.has(char)) {
      tokens.push({ kind: "op", op: char as Extract<Token, { kind: "op" }>["op"], at })
      at++
      continue
    }
    throw new Refusal(`unexpected character ${JSON.stringify(char)}`, at)
  }
  return tokens
}

const apply = (op: string, left: number, right: number, at: number): number => {
  switch (op) {
    case "+":
      return left + right
    case "-":
      return left - right
    case "*":
      return left * right
    case "/":
      if (right === 0) throw new Refusal("division by zero", at)
      return left / right
    case "%":
      if (right === 0) throw new Refusal("remainder by zero", at)
      return left % right
    default:
      return left ** right
  }
}

/**
 * Grammar, loosest binding first (`^` is right-associative and binds tighter than a leading sign, so -2^2 = -4):
 *   sum     = product (("+" | "-") product)*
 *   product = signed (("*" | "/" | "%") signed)*
 *   signed  = ("+" | "-") signed | power
 *   power   = atom ("^" signed)?
 *   atom    = number | "(" sum ")"
 */
class Parser {
  #next = 0

  constructor(
    private readonly tokens: ReadonlyArray<Token>,
    private readonly length: number
  ) {}

  parse(): number {
    const value = this.sum(0)
    const extra = this.tokens[this.#next]
    if (extra !== undefined) throw new Refusal(extra.kind === "op" && extra.op === ")" ? "unbalanced ')'" : "expected an operator", extra.at)
    return value
  }

  private peekOp(...ops: ReadonlyArray<string>): Extract<Token, { kind: "op" }> | undefined {
    const token = this.tokens[this.#next]
    return token?.kind === "op" && ops.includes(token.op) ? token : undefined
  }

  private guard(depth: number, at: number): void {
    if (depth > MAX_DEPTH) throw new Refusal(`nested deeper than ${MAX_DEPTH} levels`, at)
  }

  private sum(depth: number): number {
    let value = this.product(depth)
    for (let op = this.peekOp("+", "-"); op !== undefined; op = this.peekOp("+", "-")) {
      this.#next++
      value = apply(op.op, value, this.product(depth), op.at)
    }
    return value
  }

  private product(depth: number): number {
    let value = this.signed(depth)
    for (let op = this.peekOp("*", "/", "%"); op !== undefined; op = this.peekOp("*", "/", "%")) {
      this.#next++
      value = apply(op.op, value, this.signed(depth), op.at)
    }
    return value
  }

  private signed(depth: number): number {
    const sign = this.peekOp("+", "-")
    if (sign === undefined) return this.power(depth)
    this.guard(depth + 1, sign.at)
    this.#next++
    const value = this.signed(depth + 1)
    return sign.op === "-" ? -value : value
  }

  private power(depth: number): number {
    const base = this.atom(depth)
    const op = this.peekOp("^")
    if (op === undefined) return base
    this.guard(depth + 1, op.at)
    this.#next++
    return apply("^", base, this.signed(depth + 1), op.at)
  }

  private atom(depth: number): number {
    const token = this.tokens[this.#next]
    if (token === undefined) throw new Refusal("unexpected end of expression", this.length)
    if (token.kind === "number") {
      this.#next++
      return token.value
    }
    if (token.op !== "(") throw new Refusal(`unexpected '${token.op}'`, token.at)
    this.guard(depth + 1, token.at)
    this.#next++
    const value = this.sum(depth + 1)
    if (this.peekOp(")") === undefined) throw new Refusal("missing ')'", this.tokens[this.#next]?.at ?? this.length)
    this.#next++
    return value
  }
}

/** Evaluates `expression`; a result that is not a finite number (overflow, 0^-1…) is refused too. */
export const evaluate = (expression: string): Evaluation => {
  const refuse = (message: string, position: number): Evaluation => ({ ok: false, error: new ArithmeticError({ message, position }) })
  if (expression.length > MAX_EXPRESSION_LENGTH) return refuse(`expression longer than ${MAX_EXPRESSION_LENGTH} characters`, MAX_EXPRESSION_LENGTH)
  try {
    const tokens = tokenize(expression)
    if (tokens.length === 0) return refuse("empty expression", 0)
    const value = new Parser(tokens, expression.length).parse()
    if (!Number.isFinite(value)) return refuse("the result is not a finite number", 0)
    return { ok: true, value: Object.is(value, -0) ? 0 : value }
  } catch (thrown) {
    if (thrown instanceof Refusal) return refuse(thrown.message, thrown.position)
    throw thrown
  }
}
