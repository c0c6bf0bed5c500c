import type { z as z3 } from "zod/v3"
import type { z } from "zod"
import type { StandardSchemaV1 } from "effect/StandardSchema"
import type { ArgumentCodec, ArgumentIssue, DecodeFailure, DecodeResult } from "./argument-codec.ts"
import { DEFAULT_MAX_JSON_DEPTH, measureValue, tooDeepMessage } from "./json-depth.ts"
import type { JsonSchema } from "./json-schema.ts"
import { normalizeJsonSchema, UnsupportedSchemaError } from "./normalize.ts"
import { clip, DEFAULT_LISTED_ISSUES, DEFAULT_QUOTE_CHARS, quote } from "./quote.ts"
import { type CheckFailure, compileJsonSchema, DEFAULT_FULL_CHECK_SIZE, DEFAULT_KEPT_ISSUES } from "./sources/ajv-validator.ts"
import { type EffectArgumentSchema, fromEffect, isEffectSchema } from "./sources/effect.ts"
import { isRawJsonSchema, type TypedJsonSchema } from "./sources/raw.ts"
import type { SchemaSource } from "./sources/source.ts"
import { fromStandard, isStandardJsonSchema, type StandardArgumentSchema } from "./sources/standard.ts"
import { fromZod3, isZod3Schema, type Zod3ArgumentSchema } from "./sources/zod3.ts"
import { fromZod4, isZod4Schema, type Zod4ArgumentSchema } from "./sources/zod4.ts"

export { jsonSchema, type TypedJsonSchema } from "./sources/raw.ts"

/** Every schema a tool's arguments can be declared with. */
export type ArgumentSchema =
  | EffectArgumentSchema
  | Zod4ArgumentSchema
  | Zod3ArgumentSchema
  | StandardArgumentSchema
  | JsonSchema

/**
 * The decoded argument type of a schema: Effect's `Type`, zod's output, a Standard Schema's output, the type
 * given to `jsonSchema<A>`, or `unknown` for an untyped raw schema.
 */
export type InferArguments<S> = S extends EffectArgumentSchema
  ? S["Type"]
  : S extends Zod4ArgumentSchema
    ? z.output<S>
    : S extends Zod3ArgumentSchema
      ? z3.output<S>
      : S extends StandardSchemaV1<unknown, infer O>
        ? O
        : S extends TypedJsonSchema<infer A>
          ? A
          : unknown

const sourceOf = (schema: ArgumentSchema): SchemaSource<unknown> => {
  // zod 4 first: it is also a Standard Schema, and zod-to-json-schema would silently empty it.
  if (isZod4Schema(schema)) return fromZod4(schema)
  if (isEffectSchema(schema)) return fromEffect(schema)
  if (isZod3Schema(schema)) return fromZod3(schema)
  if (isStandardJsonSchema(schema)) return fromStandard(schema)
  if (isRawJsonSchema(schema)) return { jsonSchema: schema, refine: undefined }
  throw new UnsupportedSchemaError({
    message: "not a schema: expected Effect Schema, zod 3 or 4, a Standard JSON Schema, or a JSON Schema object"
  })
}

/**
 * Bounds of one codec. Arguments come from a model and schemas may come from plugins, so every walk and every
 * message is bounded; each default is far beyond what a real tool needs.
 */
export interface ArgumentCodecOptions {
  /** Deepest nesting of arrays and objects accepted in arguments. Default `DEFAULT_MAX_JSON_DEPTH` (64). */
  readonly maxArgumentDepth?: number
  /** Deepest nesting of the schema document. Default `DEFAULT_MAX_DOCUMENT_DEPTH` (256). */
  readonly maxSchemaDepth?: number
  /** Most subschemas once `$ref`s are inlined. Default `DEFAULT_MAX_SCHEMA_NODES` (100,000). */
  readonly maxSchemaNodes?: number
  /**
   * Arguments of up to this many values (primitives, arrays and objects) are checked for every issue; larger ones
   * stop at the first, so a million wrong items cannot build a million errors. Default `DEFAULT_FULL_CHECK_SIZE`
   * (10,000).
   */
  readonly fullCheckSize?: number
  /** Issues kept in a failed result; further ones are counted in `omittedIssues`. Default `DEFAULT_KEPT_ISSUES` (20). */
  readonly keptIssues?: number
  /**
   * The schema came from outside the process (a remote plugin's registration, a plugin's request, an MCP server).
   * Every regex in it (`pattern`, `patternProperties` keys) then runs on the linear-time engine only, and one that
   * engine cannot run (lookaround, backreferences, a repetition count above 1000) makes the codec throw
   * `UnsupportedSchemaError` naming it. Default `false`: a developer's own schema, whose patterns also run on the
   * linear-time engine except those it cannot run, which run on JavaScript's RegExp (see docs/security.md).
   */
  readonly untrustedSchema?: boolean
}

/** The checker's refusal as a failed result (a module-level function: no closure per codec). */
const failed = (failure: CheckFailure): DecodeFailure => ({
  ok: false,
  issues: failure.issues,
  ...(failure.omittedIssues === 0 ? {} : { omittedIssues: failure.omittedIssues }),
  ...(failure.stoppedEarly ? { stoppedEarly: true as const } : {})
})

/** Keeps at most `kept` issues of a library decoder's refusal, counting the rest. */
const capIssues = <A>(result: DecodeResult<A>, kept: number): DecodeResult<A> => {
  if (result.ok || result.issues.length <= kept) return result
  const omittedIssues = result.issues.length - kept + (result.omittedIssues ?? 0)
  return { ok: false, issues: result.issues.slice(0, kept), omittedIssues }
}

/**
 * Builds the codec for a tool's arguments from any supported schema. The normalised JSON Schema is what the
 * model is shown; decoding first checks the value against exactly that schema (compiled once), so anything the
 * schema forbids is refused — extra keys, `null` for an optional field, non-finite numbers — whatever the
 * library would have tolerated. The library's own decoder then runs for what JSON Schema cannot say
 * (transforms, defaults, custom checks). All built-in sources decode synchronously; a Standard Schema whose
 * `validate` is asynchronous yields a promise.
 *
 * Before anything else a decode measures the value without recursion: arguments nested deeper than
 * `maxArgumentDepth` are refused with one issue, `arguments nested deeper than 64 levels`, so neither the checker
 * nor the library decoder nor a later `JSON.stringify` meets them.
 *
 * Every regex of the schema is matched by a linear-time engine (re2js), so no value can make the check backtrack;
 * see `untrustedSchema` for the patterns that engine cannot run.
 *
 * @throws RecursiveSchemaError / UnsupportedSchemaError (from `normalizeJsonSchema`) for unusable schemas,
 *   including one deeper or larger than the schema bounds, and (with `untrustedSchema`) one with a pattern the
 *   linear-time engine cannot run.
 */
export const makeArgumentCodec = <S extends ArgumentSchema>(schema: S, options?: ArgumentCodecOptions): ArgumentCodec<InferArguments<S>> => {
  const source = sourceOf(schema) as SchemaSource<InferArguments<S>>
  const normalized = normalizeJsonSchema(source.jsonSchema, {
    ...(options?.maxSchemaDepth === undefined ? {} : { maxDepth: options.maxSchemaDepth }),
    ...(options?.maxSchemaNodes === undefined ? {} : { maxNodes: options.maxSchemaNodes })
  })
  const keptIssues = options?.keptIssues ?? DEFAULT_KEPT_ISSUES
  const fullCheckSize = options?.fullCheckSize ?? DEFAULT_FULL_CHECK_SIZE
  const check = compileJsonSchema(normalized, { fullCheckSize, keptIssues }, options?.untrustedSchema === true)
  const maxDepth = options?.maxArgumentDepth ?? DEFAULT_MAX_JSON_DEPTH
  const tooDeep: DecodeFailure = { ok: false, issues: [{ path: [], message: tooDeepMessage("arguments", maxDepth) }] }
  const refine = source.refine
  const decode = (input: unknown): DecodeResult<InferArguments<S>> | Promise<DecodeResult<InferArguments<S>>> => {
    const shape = measureValue(input, maxDepth)
    if (shape.depth > maxDepth) return tooDeep
    return checked(input, shape.size)
  }
  const checked = (input: unknown, size: number): DecodeResult<InferArguments<S>> | Promise<DecodeResult<InferArguments<S>>> => {
    const failure = check(input, size)
    if (failure !== undefined) return failed(failure)
    if (refine === undefined) return { ok: true, value: input as InferArguments<S> }
    const refined = refine(input)
    return refined instanceof Promise ? refined.then((r) => capIssues(r, keptIssues)) : capIssues(refined, keptIssues)
  }
  // The value's bounds, when its parser knew them, settle the depth check and the choice of checker as the
  // measure would: the Worker's parse of the argument text (prepared-arguments.ts) counts both on the way. The
  // usual answer (the check passed, no library decode to run) is the input itself, with no result record.
  const checkWithin = (input: unknown, depthBound: number, sizeBound: number): unknown => {
    if (depthBound > maxDepth || sizeBound > fullCheckSize) return decode(input)
    if (refine !== undefined) return checked(input, sizeBound)
    const failure = check(input, sizeBound)
    return failure === undefined ? input : failed(failure)
  }
  const codec: BoundedCodec<InferArguments<S>> = { jsonSchema: normalized, decode, checkWithin }
  return codec
}

/**
 * @internal A codec built by `makeArgumentCodec`, with the check that skips measuring the value when the caller
 * vouches for upper bounds of its nesting depth and size (as `measureValue` counts them). `checkWithin` answers
 * the input itself (the very object) when `decode` would answer `{ ok: true, value: input }` — the usual call of
 * a schema with no library decode — and otherwise what `decode` answers: a fresh result record, never the input
 * (test/schema/codec-bounded.property.test.ts). One call where the typed tool used to take the result record
 * apart (decision 0089).
 */
export interface BoundedCodec<A> extends ArgumentCodec<A> {
  readonly checkWithin: (input: unknown, depthBound: number, sizeBound: number) => unknown
}

/** @internal Whether `codec` offers `checkWithin` (every codec `makeArgumentCodec` builds does). */
export const isBoundedCodec = <A>(codec: ArgumentCodec<A>): codec is BoundedCodec<A> =>
  typeof (codec as Partial<BoundedCodec<A>>).checkWithin === "function"

/** A key shown bare in a path: identifier-like and short; anything else is quoted (bounded, escaped). */
const BARE_KEY = /^[A-Za-z_$][A-Za-z0-9_$-]*$/

const renderPath = (path: ReadonlyArray<string | number>, quoteChars: number): string => {
  let out = ""
  for (const seg of path) {
    if (typeof seg === "number") out += `[${seg}]`
    else if (seg.length <= quoteChars && BARE_KEY.test(seg)) out += out === "" ? seg : `.${seg}`
    else out += `[${quote(seg, quoteChars)}]`
  }
  return out
}

/** How `formatIssues` bounds its line. */
export interface FormatIssuesOptions {
  /** Issues found beyond those given (a failed decode's `omittedIssues`), counted in "… and N more". */
  readonly omitted?: number | undefined
  /** Issues written before "… and N more". Default `DEFAULT_LISTED_ISSUES` (5). */
  readonly listed?: number
  /** Characters quoted of any key in a path. Default `DEFAULT_QUOTE_CHARS` (80). */
  readonly quoteChars?: number
}

/** An issue's message is already short when it comes from the checker; a library's custom message may not be. */
const MESSAGE_CHARS = 400

/**
 * One line for the model, e.g. `days: expected integer <= 14, got 20; city: required`. Issues at the root
 * have no path prefix. Bounded whatever the input: at most `listed` issues, then `… and 997 more`; keys that are
 * not short identifiers are quoted as a clipped JSON string (`["a b"]`, a 50 MiB key as its first 80 characters).
 * Pass a failed `DecodeResult` to count its `omittedIssues` too.
 */
export const formatIssues = (issues: ReadonlyArray<ArgumentIssue> | DecodeFailure, options?: FormatIssuesOptions): string => {
  const list = "issues" in issues ? issues.issues : issues
  const omitted = (options?.omitted ?? 0) + ("issues" in issues ? (issues.omittedIssues ?? 0) : 0)
  const listed = options?.listed ?? DEFAULT_LISTED_ISSUES
  const quoteChars = options?.quoteChars ?? DEFAULT_QUOTE_CHARS
  const lines: Array<string> = []
  for (let i = 0; i < list.length && i < listed; i++) {
    const issue = list[i] as ArgumentIssue
    const path = renderPath(issue.path, quoteChars)
    const message = clip(issue.message, MESSAGE_CHARS)
    lines.push(path === "" ? message : `${path}: ${message}`)
  }
  const rest = list.length - lines.length + omitted
  const text = rest > 0 ? `${lines.join("; ")}; … and ${rest} more` : lines.join("; ")
  // Said so the model knows fixing the issues shown may not be enough.
  return "issues" in issues && issues.stoppedEarly === true ? `${text} (checking stopped at the first issue: the arguments are too large to list every one)` : text
}
