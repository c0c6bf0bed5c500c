/**
 * Turning anything a tool, hook or subscriber throws into text. JavaScript can throw any value: a revoked or
 * hostile `Proxy`, an object whose `message` / `name` / `toString` / `toJSON` / `Symbol.toPrimitive` throws, a
 * symbol, a null-prototype object, a 50 MiB message. The describer runs inside rejection handlers, where a throw
 * of its own would become an unhandled rejection (process exit) or a call that never settles, so it must never
 * throw and must never return unbounded text.
 */
import { clip } from "../schema/quote.ts"

/** Default bound, in UTF-16 code units, of a thrown value's description (the rest is clipped with a count). */
export const DEFAULT_DESCRIBED_CHARS = 8192

/** Said when every way of reading the value threw (a revoked Proxy, say): still a message, never a crash. */
const UNDESCRIBABLE = "a thrown value that cannot be described"

/** A property read that may run hostile code (getter, Proxy trap): its throw becomes `undefined`. */
const read = (value: object, key: string): unknown => {
  try {
    return (value as Record<string, unknown>)[key]
  } catch {
    return undefined
  }
}

const nonEmptyString = (value: unknown): value is string => typeof value === "string" && value !== ""

const isError = (value: object): boolean => {
  try {
    // `instanceof` walks the prototype chain, which a Proxy's getPrototypeOf trap (or a revoked Proxy) can throw.
    return value instanceof Error
  } catch {
    return false
  }
}

const describeObject = (value: object): string => {
  // Never String(value): it runs Symbol.toPrimitive / toString / valueOf, the first things a hostile value breaks.
  if (isError(value)) {
    const message = read(value, "message")
    if (nonEmptyString(message)) return message
    const name = read(value, "name")
    return nonEmptyString(name) ? name : "Error"
  }
  try {
    // May run toJSON and getters; a throw, a cycle or hostile depth (RangeError) falls through to the next try.
    const json: unknown = JSON.stringify(value)
    if (typeof json === "string") return json
  } catch {
    // fall through
  }
  const message = read(value, "message")
  if (nonEmptyString(message)) return message
  try {
    return Object.prototype.toString.call(value)
  } catch {
    return UNDESCRIBABLE
  }
}

const describeAny = (thrown: unknown): string => {
  switch (typeof thrown) {
    case "string":
      return thrown
    case "symbol":
      // String(symbol) is defined (template interpolation is what throws); the description is a plain string.
      return String(thrown)
    case "object":
      return thrown === null ? "null" : describeObject(thrown)
    case "function":
      // Never its source text (String(fn) could be huge, and is user code for a Proxy): its name, read safely.
      return `a function ${nonEmptyString(read(thrown, "name")) ? String(read(thrown, "name")) : "(anonymous)"}`
    default:
      // number, bigint, boolean, undefined: conversion runs no user code.
      return String(thrown)
  }
}

/**
 * Renders anything thrown as a message a model (or a person) can read — never `[object Object]` when the value
 * has a message or a JSON form — clipped to `maxChars`. Never throws: when every way of reading the value fails,
 * it says so.
 */
export const describeThrown = (thrown: unknown, maxChars: number = DEFAULT_DESCRIBED_CHARS): string => {
  try {
    return clip(describeAny(thrown), maxChars)
  } catch {
    return UNDESCRIBABLE
  }
}
