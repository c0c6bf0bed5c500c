import { Ajv2020 } from "ajv/dist/2020.js"
import addFormatsModule from "ajv-formats"
import { boundFormats, FORMAT_MAX_LENGTH } from "./bounded-formats.ts"
import type { ErrorObject, ValidateFunction } from "ajv/dist/2020.js"
import type { DataValidationCxt } from "ajv/dist/types/index.js"
import { canonicalSchemaJson } from "../canonical-json.ts"
import { clip, listBounded } from "../quote.ts"
import { UnsupportedSchemaError } from "../normalize.ts"
import type { ArgumentIssue } from "../argument-codec.ts"
import type { JsonSchema } from "../json-schema.ts"
import { linearFirstEngine, linearOnlyEngine, type PatternEngine } from "../regex/engine.ts"
import { untrustedPatternProblem } from "../regex/schema-patterns.ts"

/**
 * The shared compilers. `strictNumbers` refuses NaN and ±Infinity for `number`/`integer`, which is what the
 * normalised schema promises. Standard formats (date-time, email, uri, uuid…) are checked, so a `format` the
 * model is shown is a `format` the decoder enforces; unknown formats and keywords (annotations, vendor `x-`
 * keys) are ignored rather than fatal. `multipleOfPrecision` makes `multipleOf: 0.1` accept 0.3 (whose float quotient is
 * 2.9999999999999996), as Effect and zod do; without it the model is refused for following the schema.
 *
 * Two of them because ajv has no cap on the errors it collects: with `allErrors` a million wrong-typed items
 * build a million error objects before anything can stop it. Arguments of ordinary size are checked with every
 * error (the model can fix them all at once); larger ones stop at the first error.
 *
 * `ownProperties`: without it, ajv reads an optional property named `constructor` (or `toString`…) through the
 * prototype chain, so `{}` was refused with "expected string, got function Object()".
 */
const options = { verbose: true, strict: false, strictNumbers: true, validateFormats: true, logger: false, ownProperties: true, multipleOfPrecision: 9 } as const

/**
 * Every regex ajv compiles from a schema (`pattern`, `patternProperties` keys, and so the keys tested for
 * `additionalProperties` beside them) goes through the given engine instead of `new RegExp`: a value from a model
 * must not be able to make the check backtrack for seconds (`"^(a+)+$"` against 27 × `a` and `!` took 4–7 s).
 * ajv-formats' `format` checks use the formats' own fixed expressions, each bounded in the length it reads
 * (`bounded-formats.ts`).
 */
const makeAjv = (engine: PatternEngine, allErrors: boolean): Ajv2020 => {
  const ajv = new Ajv2020({ ...options, allErrors, code: { regExp: engine } })
  // ajv-formats is CommonJS; its module object also carries the plugin as `.default`, which is what NodeNext types.
  addFormatsModule.default(ajv)
  boundFormats(ajv)
  return ajv
}

/** Default number of values (every primitive, array and object) up to which every issue is looked for. */
export const DEFAULT_FULL_CHECK_SIZE = 10_000
/** Default number of issues kept per refused value; the rest are only counted. */
export const DEFAULT_KEPT_ISSUES = 20

/** How much a check reports. */
export interface CheckLimits {
  /** Values (as `measureValue` counts them) up to which every issue is collected; above, only the first. */
  readonly fullCheckSize: number
  /** Issues kept; the count of the others is `omittedIssues`. */
  readonly keptIssues: number
}

/** Why a value was refused: the first `keptIssues` issues and how many more were found. */
export interface CheckFailure {
  readonly issues: ReadonlyArray<ArgumentIssue>
  readonly omittedIssues: number
  /** The value was too large for a full check: the first issue only, more may exist. */
  readonly stoppedEarly: boolean
}

/**
 * Checks a value against a compiled schema; `undefined` means valid, so the success path allocates nothing.
 * `size` is the value's size as `measureValue` counts it (the caller measured it already for its depth check).
 */
export type JsonSchemaCheck = (input: unknown, size: number) => CheckFailure | undefined

/** Default number of distinct compiled schemas kept for sharing, per compiler (see `limitSharedValidators`). */
export const DEFAULT_SHARED_VALIDATORS = 1024

/**
 * Identical schemas (by canonical text) share one compiled validator per compiler. A compiled validator is several
 * KiB of generated code, the bulk of a defined tool's memory; many tools share argument shapes.
 *
 * The share is bounded, least recently compiled-or-shared first out: a long-running tool host whose plugins keep
 * registering new schemas must not keep every schema it ever saw. Eviction also removes the schema from ajv's own
 * cache (ajv keeps every compiled schema object otherwise). A tool that already holds an evicted validator keeps
 * using it; only a later tool with the same schema compiles it again.
 */
class SharedValidators {
  private readonly compiled = new Map<string, { readonly schema: JsonSchema; readonly validate: ValidateFunction }>()
  private made: Ajv2020 | undefined

  constructor(private readonly make: () => Ajv2020) {}

  /** The compiler, made on first use: a process that never sees an untrusted schema never builds those two. */
  get ajv(): Ajv2020 {
    return (this.made ??= this.make())
  }

  get size(): number {
    return this.compiled.size
  }

  get(schema: JsonSchema): ValidateFunction {
    const key = canonicalSchemaJson(schema)
    const found = this.compiled.get(key)
    if (found !== undefined) {
      // Map order is the eviction order: a shared hit moves to the back.
      this.compiled.delete(key)
      this.compiled.set(key, found)
      return found.validate
    }
    const validate = this.ajv.compile(schema)
    this.compiled.set(key, { schema, validate })
    this.trim(sharedLimit)
    return validate
  }

  trim(limit: number): void {
    for (const [key, entry] of this.compiled) {
      if (this.compiled.size <= limit) return
      this.compiled.delete(key)
      this.made?.removeSchema(entry.schema)
    }
  }
}

/**
 * The call context every check passes, so ajv's validator does not build its two default objects per call (a
 * quarter of what a check allocates). Shared and frozen: ajv only reads it — except `dynamicAnchors`, which
 * `$dynamicAnchor` / `$dynamicRef` write to, so a schema that uses them gets ajv's fresh default each call.
 * `rootData` left undefined is ajv's own default, the value checked.
 */
const SHARED_CONTEXT = Object.freeze({ instancePath: "", dynamicAnchors: Object.freeze({}) }) as unknown as DataValidationCxt
const contextFor = (schema: JsonSchema): DataValidationCxt | undefined =>
  JSON.stringify(schema).includes('"$dynamic') ? undefined : SHARED_CONTEXT

let sharedLimit = DEFAULT_SHARED_VALIDATORS
/** A developer's schemas: patterns on the linear-time engine where it can run them, else on RegExp. */
const trustedAll = new SharedValidators(() => makeAjv(linearFirstEngine, true))
const trustedFirst = new SharedValidators(() => makeAjv(linearFirstEngine, false))
/** Schemas from outside the process: patterns on the linear-time engine only. */
const untrustedAll = new SharedValidators(() => makeAjv(linearOnlyEngine, true))
const untrustedFirst = new SharedValidators(() => makeAjv(linearOnlyEngine, false))
const everyShare = [trustedAll, trustedFirst, untrustedAll, untrustedFirst] as const

/**
 * Sets how many distinct compiled schemas are kept for sharing between tools, per compiler (default
 * {@link DEFAULT_SHARED_VALIDATORS}); the process-wide bound on the validator cache. Lowering it evicts at once.
 * `0` turns sharing off (every tool compiles its own validator on first use).
 *
 * @example
 * ```ts
 * import { limitSharedValidators } from "llm-worker"
 * limitSharedValidators(256) // a host whose plugins churn through many schemas
 * ```
 */
export const limitSharedValidators = (limit: number): void => {
  if (!Number.isSafeInteger(limit) || limit < 0) throw new RangeError(`limitSharedValidators: expected a whole number ≥ 0, got ${String(limit)}`)
  sharedLimit = limit
  for (const share of everyShare) share.trim(limit)
}

/** Distinct compiled schemas held for sharing (every compiler); for tests and diagnostics. */
export const sharedValidatorCount = (): number => everyShare.reduce((sum, share) => sum + share.size, 0)

const validatorFor = (schema: JsonSchema, all: boolean, untrusted: boolean): ValidateFunction =>
  (untrusted ? (all ? untrustedAll : untrustedFirst) : all ? trustedAll : trustedFirst).get(schema)

/** Keywords whose value is one subschema, a list of them, or a map of names to them (as in `normalize.ts`). */
const SUBSCHEMA_KEYWORDS = new Set([
  "items", "additionalProperties", "not", "if", "then", "else", "contains", "propertyNames",
  "unevaluatedProperties", "unevaluatedItems", "additionalItems", "anyOf", "oneOf", "allOf", "prefixItems",
  "properties", "patternProperties", "dependentSchemas", "$defs", "definitions"
])
const MAP_KEYWORDS = new Set(["properties", "patternProperties", "dependentSchemas", "$defs", "definitions"])

/**
 * Where the schema declares a property named `__proto__`, or undefined. ajv skips that name on purpose (a guard
 * of its own against prototype pollution), so such a property would be neither checked nor allowed: the tool
 * could never receive it. Refused at definition instead of failing every call. Recursion depth is the schema's,
 * already bounded by `normalizeJsonSchema`.
 */
const protoProperty = (schema: unknown, path: string): string | undefined => {
  if (typeof schema !== "object" || schema === null) return undefined
  if (Array.isArray(schema)) {
    for (let i = 0; i < schema.length; i++) {
      const found = protoProperty(schema[i], `${path}/${i}`)
      if (found !== undefined) return found
    }
    return undefined
  }
  for (const [key, value] of Object.entries(schema)) {
    if (!SUBSCHEMA_KEYWORDS.has(key)) continue
    if (MAP_KEYWORDS.has(key) && typeof value === "object" && value !== null && !Array.isArray(value)) {
      if (key === "properties" && Object.hasOwn(value, "__proto__")) return `${path}/properties/__proto__`
      for (const [name, sub] of Object.entries(value)) {
        const found = protoProperty(sub, `${path}/${key}/${name.replaceAll("~", "~0").replaceAll("/", "~1")}`)
        if (found !== undefined) return found
      }
    } else {
      const found = protoProperty(value, `${path}/${key}`)
      if (found !== undefined) return found
    }
  }
  return undefined
}

/**
 * Checks the schema now (an invalid schema fails at definition time) but compiles it on first use: defining
 * ten thousand tools should not cost ten thousand compilations when most are never called. The first-error
 * validator is compiled only if a large value ever arrives. Call the result per decode.
 *
 * `untrusted`: the schema came from outside the process; every regex in it must run on the linear-time engine,
 * and one that cannot is refused now, naming it. A developer's schema (the default) may use lookaround or
 * backreferences, which then run on JavaScript's RegExp.
 */
export const compileJsonSchema = (
  schema: JsonSchema,
  limits: CheckLimits = { fullCheckSize: DEFAULT_FULL_CHECK_SIZE, keptIssues: DEFAULT_KEPT_ISSUES },
  untrusted = false
): JsonSchemaCheck => {
  const metaCheck = trustedAll.ajv
  if (metaCheck.validateSchema(schema) !== true) {
    throw new UnsupportedSchemaError({ message: `not a valid JSON Schema: ${clip(metaCheck.errorsText(metaCheck.errors), 500)}` })
  }
  const proto = protoProperty(schema, "")
  if (proto !== undefined) {
    throw new UnsupportedSchemaError({
      message: `a property named "__proto__" (at ${clip(proto, 200)}) cannot be checked by the argument decoder; rename it`
    })
  }
  if (untrusted) {
    const problem = untrustedPatternProblem(schema)
    if (problem !== undefined) throw new UnsupportedSchemaError({ message: problem.message })
  }
  let all: ValidateFunction | undefined
  let first: ValidateFunction | undefined
  // null until the first check works it out (undefined: the schema needs ajv's fresh default per call).
  let context: DataValidationCxt | undefined | null = null
  return (input, size) => {
    const full = size <= limits.fullCheckSize
    const validate = full ? (all ??= validatorFor(schema, true, untrusted)) : (first ??= validatorFor(schema, false, untrusted))
    if (context === null) context = contextFor(schema)
    return validate(input, context) ? undefined : { ...toIssues(validate.errors ?? [], limits.keptIssues), stoppedEarly: !full }
  }
}

const pathOf = (pointer: string): Array<string | number> =>
  pointer === ""
    ? []
    : pointer
        .slice(1)
        .split("/")
        .map((s) => s.replaceAll("~1", "/").replaceAll("~0", "~"))
        .map((s) => (/^(0|[1-9]\d*)$/.test(s) ? Number(s) : s))

/** A value as the model should see it quoted back: short, and only as much as helps. */
export const renderValue = (v: unknown): string => {
  if (v === null) return "null"
  if (Array.isArray(v)) return "array"
  if (typeof v === "object") return "object"
  if (typeof v === "string") return JSON.stringify(v.length > 32 ? `${v.slice(0, 29)}...` : v)
  return clip(String(v), 40)
}

const typeNameOf = (schema: unknown): string => {
  const t = typeof schema === "object" && schema !== null ? (schema as { type?: unknown }).type : undefined
  return typeof t === "string" ? t : "number"
}

/** A schema value (from the tool's schema, which may come from a plugin) quoted back in a message: short. */
const shown = (v: unknown): string => clip(JSON.stringify(v) ?? "null")

/** At most a handful of alternatives or allowed values, each short. */
const SHOWN_ALTERNATIVES = 8

const describeAlternatives = (branches: unknown): string => {
  if (!Array.isArray(branches)) return "one of the allowed shapes"
  const names = branches.map((b) => {
    if (typeof b !== "object" || b === null) return "any value"
    const o = b as { type?: unknown; const?: unknown; enum?: unknown }
    if ("const" in o) return shown(o.const)
    if (Array.isArray(o.enum)) return listBounded(o.enum.map(shown), " or ", SHOWN_ALTERNATIVES)
    if (typeof o.type === "string") return clip(o.type)
    if (Array.isArray(o.type)) return listBounded(o.type.map(String), " or ", SHOWN_ALTERNATIVES)
    return "a matching value"
  })
  return listBounded([...new Set(names)], " or ", SHOWN_ALTERNATIVES)
}

const messageOf = (e: ErrorObject): string => {
  const p = e.params as Record<string, unknown>
  const got = renderValue(e.data)
  switch (e.keyword) {
    case "type":
      return `expected ${clip(String(p["type"]).split(",").join(" or "))}, got ${got}`
    case "minimum":
    case "maximum":
    case "exclusiveMinimum":
    case "exclusiveMaximum":
      return `expected ${typeNameOf(e.parentSchema)} ${String(p["comparison"])} ${String(p["limit"])}, got ${got}`
    case "multipleOf":
      return `expected a multiple of ${String(p["multipleOf"])}, got ${got}`
    case "required":
      return "required"
    case "additionalProperties":
    case "unevaluatedProperties":
      return "not allowed"
    case "enum":
      return `expected one of ${listBounded((p["allowedValues"] as ReadonlyArray<unknown>).map(shown), ", ", SHOWN_ALTERNATIVES)}, got ${got}`
    case "const":
      return `expected ${shown(p["allowedValue"])}, got ${got}`
    case "minLength":
      return `expected at least ${String(p["limit"])} characters, got ${String((e.data as string).length)}`
    case "maxLength":
      return `expected at most ${String(p["limit"])} characters, got ${String((e.data as string).length)}`
    case "minItems":
      return `expected at least ${String(p["limit"])} items, got ${String((e.data as ReadonlyArray<unknown>).length)}`
    case "maxItems":
      return `expected at most ${String(p["limit"])} items, got ${String((e.data as ReadonlyArray<unknown>).length)}`
    case "format": {
      const format = String(p["format"])
      const max = Object.hasOwn(FORMAT_MAX_LENGTH, format) ? FORMAT_MAX_LENGTH[format] : undefined
      return typeof e.data === "string" && max !== undefined && e.data.length > max
        ? `expected a ${clip(format)} of at most ${max} characters, got ${e.data.length}`
        : `expected a string of format ${clip(format)}, got ${got}`
    }
    case "pattern":
      return `expected a string matching ${clip(String(p["pattern"]))}, got ${got}`
    case "anyOf":
    case "oneOf":
      return `expected ${describeAlternatives(e.schema)}, got ${got}`
    default:
      return clip(e.message ?? `failed ${e.keyword}`, 200)
  }
}

/**
 * Errors raised inside the branches of a failed `anyOf`/`oneOf` are dropped: the alternative-level issue says
 * what was expected, the branch noise would only confuse. A branch error's schema path extends its alternative's,
 * so each error looks its own path prefixes up in a set (cost per error: its path's length, not the number of
 * failed alternatives, which can be as many as the errors).
 */
const branchFilter = (errors: ReadonlyArray<ErrorObject>): ((e: ErrorObject) => boolean) => {
  const roots = new Set<string>()
  for (const e of errors) if (e.keyword === "anyOf" || e.keyword === "oneOf") roots.add(e.schemaPath)
  if (roots.size === 0) return () => false
  return (e) => {
    const path = e.schemaPath
    for (let at = path.indexOf("/"); at !== -1; at = path.indexOf("/", at + 1)) {
      if (roots.has(path.slice(0, at))) return true
    }
    return false
  }
}

/** Turns ajv's errors into at most `kept` issues, one per problem, and the count of the others. */
const toIssues = (errors: ReadonlyArray<ErrorObject>, kept: number): Omit<CheckFailure, "stoppedEarly"> => {
  const inBranch = branchFilter(errors)
  const issues: Array<ArgumentIssue> = []
  let omittedIssues = 0
  for (const e of errors) {
    if (inBranch(e)) continue
    if (issues.length >= kept) {
      omittedIssues++
      continue
    }
    const path = pathOf(e.instancePath)
    const p = e.params as Record<string, unknown>
    // Names are kept whole in the path (a reference, not a copy); `formatIssues` quotes a bounded prefix.
    if (e.keyword === "required") path.push(String(p["missingProperty"]))
    if (e.keyword === "additionalProperties") path.push(String(p["additionalProperty"]))
    if (e.keyword === "unevaluatedProperties") path.push(String(p["unevaluatedProperty"]))
    issues.push({ path, message: messageOf(e) })
  }
  return { issues, omittedIssues }
}
