/**
 * Values a hostile or careless tool can throw or reject with: each one breaks a naive describer in its own way
 * (a getter that throws, a Proxy trap that throws, a revoked Proxy, a symbol, a throwing `Symbol.toPrimitive`,
 * a null prototype, a frozen object, a huge message). Shared by the unit tests and the child-process check.
 */
const boom = (): never => {
  throw new Error("boom from a getter")
}

const revoked = (): object => {
  const { proxy, revoke } = Proxy.revocable({}, {})
  revoke()
  return proxy
}

const everyTrapThrows = (target: object): object =>
  new Proxy(target, {
    get: boom,
    getPrototypeOf: boom,
    getOwnPropertyDescriptor: boom,
    ownKeys: boom,
    has: boom,
    apply: boom
  })

class GetterError extends Error {
  override get message(): string {
    return boom()
  }
  override get name(): string {
    return boom()
  }
}

export const hostileValues = (): ReadonlyArray<readonly [string, unknown]> => [
  ["throwing message getter", Object.defineProperty(new Error("x"), "message", { get: boom })],
  ["throwing message and name getters", new GetterError()],
  ["throwing toString", { toString: boom, toJSON: boom }],
  ["throwing toJSON", { toJSON: boom }],
  ["throwing Symbol.toPrimitive", { [Symbol.toPrimitive]: boom, toJSON: boom }],
  ["hostile Proxy over an object", everyTrapThrows({})],
  ["hostile Proxy over an Error", everyTrapThrows(new Error("inner"))],
  ["hostile Proxy over a function", everyTrapThrows(() => 1)],
  ["revoked Proxy", revoked()],
  ["symbol", Symbol("sym")],
  ["null-prototype object", Object.create(null) as object],
  ["null-prototype object with a throwing toJSON", Object.assign(Object.create(null) as object, { toJSON: boom })],
  ["frozen Error", Object.freeze(new Error("frozen"))],
  ["frozen null-prototype object", Object.freeze(Object.create(null) as object)],
  ["cyclic object", ((): object => { const o: Record<string, unknown> = {}; o["self"] = o; return o })()],
  ["deeply nested object", ((): object => { let o: unknown = {}; for (let i = 0; i < 100_000; i++) o = { o }; return o as object })()],
  ["huge message", new Error("m".repeat(5 * 1024 * 1024))],
  ["huge string", "s".repeat(5 * 1024 * 1024)],
  ["undefined", undefined],
  ["null", null],
  ["bigint", 10n],
  ["function with a throwing name", Object.defineProperty(() => 1, "name", { get: boom })],
  ["Error with empty message and name", Object.assign(new Error(""), { name: "" })],
  ["Error-like object with a throwing then", { then: boom, message: "then" }]
]
