import { clip, quote } from "../../schema/quote.ts"
import { parsedJsonText } from "../json-text.ts"
import { limitExceeded } from "../limits.ts"
import { utf8Length } from "../../tool/output-limit.ts"
import { LlmProtocolError } from "../llm-error.ts"

/**
 * Streamed function-call arguments (`toolConfig.functionCallingConfig.streamFunctionCallArguments`): Gemini sends
 * the arguments as a list of `{jsonPath, stringValue | numberValue | boolValue | nullValue, willContinue}` pieces
 * instead of one `args` object. A string may arrive in several pieces for the same path (each but the last with
 * `willContinue: true`); every other value arrives whole. This module rebuilds the arguments object from them.
 *
 * Everything here is the provider's input: paths are parsed without recursion, objects have no prototype (a
 * `__proto__` key is an ordinary key), an index may only extend an array by one (no holes to fill with made-up
 * nulls), and what is held is counted against `maxArgumentBytes` piece by piece.
 */

type Container = Record<string, unknown> | Array<unknown>
type Segment = { readonly key: string } | { readonly index: number }

const problem = (message: string): LlmProtocolError => new LlmProtocolError({ message: `Gemini stream: ${message}` })

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** Longest array index accepted in a path: more digits cannot be an index of anything held in memory. */
const MAX_INDEX_DIGITS = 9

/**
 * `$`, then `.key`, `[n]`, `['key']` or `["key"]` segments (the JSONPath subset Gemini writes). A dotted key runs
 * to the next `.` or `[`; a quoted key may escape its quote or a backslash with a backslash.
 */
export const parseJsonPath = (path: string): ReadonlyArray<Segment> => {
  const bad = (why: string) => problem(`streamed argument path ${quote(path)} ${why}`)
  if (path.charCodeAt(0) !== 0x24 /* $ */) throw bad("does not start with $")
  const segments: Array<Segment> = []
  let i = 1
  while (i < path.length) {
    const c = path[i]
    if (c === ".") {
      let end = i + 1
      while (end < path.length && path[end] !== "." && path[end] !== "[") end++
      if (end === i + 1) throw bad("has an empty key")
      segments.push({ key: path.slice(i + 1, end) })
      i = end
    } else if (c === "[") {
      const q = path[i + 1]
      if (q === "'" || q === '"') {
        let key = ""
        let j = i + 2
        for (; j < path.length && path[j] !== q; j++) {
          if (path[j] === "\\" && j + 1 < path.length) j++
          key += path[j]
        }
        if (path[j] !== q || path[j + 1] !== "]") throw bad("has an unterminated quoted key")
        segments.push({ key })
        i = j + 2
      } else {
        const close = path.indexOf("]", i)
        const digits = close === -1 ? "" : path.slice(i + 1, close)
        if (!/^\d+$/.test(digits) || digits.length > MAX_INDEX_DIGITS) throw bad("has an index that is not a small non-negative integer")
        segments.push({ index: Number(digits) })
        i = close + 1
      }
    } else throw bad(`has ${quote(c ?? "")} where a segment should start`)
  }
  return segments
}

const read = (container: Container, segment: Segment): unknown =>
  "key" in segment
    ? Object.hasOwn(container, segment.key)
      ? (container as Record<string, unknown>)[segment.key]
      : undefined
    : (container as Array<unknown>)[segment.index]

/** Own, enumerable, never a prototype change: `defineProperty` does not run the `__proto__` setter. */
const write = (container: Container, segment: Segment, value: unknown): void => {
  if ("key" in segment) Object.defineProperty(container, segment.key, { value, writable: true, enumerable: true, configurable: true })
  else (container as Array<unknown>)[segment.index] = value
}

/** The scalar one piece carries, or undefined when it carries none (a piece that only ends a string). */
const pieceValue = (piece: Record<string, unknown>): { readonly value: string | number | boolean | null } | undefined => {
  if (typeof piece["stringValue"] === "string") return { value: piece["stringValue"] }
  if (typeof piece["numberValue"] === "number" && Number.isFinite(piece["numberValue"])) return { value: piece["numberValue"] }
  if (typeof piece["boolValue"] === "boolean") return { value: piece["boolValue"] }
  if ("nullValue" in piece) return { value: null }
  if ("numberValue" in piece || "stringValue" in piece || "boolValue" in piece) {
    throw problem(`streamed argument ${quote(String(piece["jsonPath"]))} has a value of the wrong type`)
  }
  return undefined
}

/** One streamed call's arguments, rebuilt piece by piece. */
export class GeminiPartialArgs {
  private readonly root: Record<string, unknown> = Object.create(null) as Record<string, unknown>
  /** The path whose string value the last piece said would continue. */
  private continuing: string | undefined
  private held = 0

  /** `label` names the call in errors (its id); `maxBytes` is `maxArgumentBytes`. */
  constructor(
    private readonly label: string,
    private readonly maxBytes: number,
    initial?: unknown
  ) {
    if (isRecord(initial)) {
      for (const [key, value] of Object.entries(initial)) write(this.root, { key }, value)
      this.count(parsedJsonText(initial))
    }
  }

  /** UTF-8 bytes of argument text held so far (about what `text()` comes to). */
  get heldBytes(): number {
    return this.held
  }

  private count(text: string): void {
    this.held += utf8Length(text)
    if (this.held > this.maxBytes) {
      throw limitExceeded("maxArgumentBytes", this.maxBytes, this.held, ` (call ${quote(this.label)}, streamed arguments)`)
    }
  }

  /** Applies one `partialArgs` entry. */
  apply(piece: unknown): void {
    if (!isRecord(piece) || typeof piece["jsonPath"] !== "string") {
      throw problem(`streamed argument without a jsonPath: ${clip(parsedJsonText(piece), 200)}`)
    }
    const path = piece["jsonPath"]
    const carried = pieceValue(piece)
    const continues = piece["willContinue"] === true
    const appending = this.continuing === path
    this.continuing = continues ? path : undefined
    // A piece with no value only ends the string it continued (or says nothing at all).
    if (carried === undefined) return
    const segments = parseJsonPath(path)
    const last = segments[segments.length - 1]
    if (last === undefined) throw problem(`streamed argument path ${quote(path)} names the whole arguments object`)
    let container: Container = this.root
    for (let i = 0; i < segments.length - 1; i++) {
      const segment = segments[i] as Segment
      const next = segments[i + 1] as Segment
      let child = this.slot(container, segment, path)
      if (child === undefined) {
        child = "key" in next ? (Object.create(null) as Record<string, unknown>) : []
        write(container, segment, child)
        this.count("key" in segment ? `"${segment.key}":{}` : ",[]")
      } else if (typeof child !== "object" || child === null || Array.isArray(child) !== !("key" in next)) {
        throw problem(`streamed argument path ${quote(path)} runs through a value that is not ${"key" in next ? "an object" : "an array"}`)
      }
      container = child as Container
    }
    const existing = this.slot(container, last, path)
    const value = carried.value
    if (existing === undefined) this.count("key" in last ? `"${last.key}":` : ",")
    if (appending && typeof value === "string" && typeof existing === "string") {
      this.count(value)
      write(container, last, existing + value)
    } else {
      this.count(typeof value === "string" ? value : String(value))
      write(container, last, value)
    }
  }

  /** The value at `segment`, after checking that an index extends its array by at most one. */
  private slot(container: Container, segment: Segment, path: string): unknown {
    if (Array.isArray(container) !== !("key" in segment)) {
      throw problem(`streamed argument path ${quote(path)} indexes ${Array.isArray(container) ? "an array with a key" : "an object with an index"}`)
    }
    if (!("key" in segment) && segment.index > (container as Array<unknown>).length) {
      throw problem(`streamed argument path ${quote(path)} skips array elements`)
    }
    return read(container, segment)
  }

  /** The arguments as JSON text, checked against `maxArgumentBytes` as a whole. */
  text(): string {
    const text = parsedJsonText(this.root)
    const bytes = utf8Length(text)
    if (bytes > this.maxBytes) throw limitExceeded("maxArgumentBytes", this.maxBytes, bytes, ` (call ${quote(this.label)}, streamed arguments)`)
    return text
  }
}
