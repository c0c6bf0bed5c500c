import { Result, Schema, SchemaAST, SchemaIssue } from "effect"
import type { ArgumentIssue, DecodeResult } from "../argument-codec.ts"
import type { JsonObject, JsonSchema, JsonValue } from "../json-schema.ts"
import { UnsupportedSchemaError } from "../normalize.ts"
import { effectJsonSchemaDocument } from "./effect-json-schema.ts"
import { issuePath, type SchemaSource } from "./source.ts"

/** An Effect Schema whose decoding needs no services, so it can run synchronously on the dispatch path. */
export type EffectArgumentSchema = Schema.ConstraintDecoder<unknown>

export const isEffectSchema = (u: unknown): u is EffectArgumentSchema => Schema.isSchema(u)

const isObject = (v: JsonValue | undefined): v is JsonObject =>
  typeof v === "object" && v !== null && !Array.isArray(v)

const isNullBranch = (v: JsonValue | undefined): boolean =>
  isObject(v) && Object.keys(v).length === 1 && v["type"] === "null"

/**
 * `Schema.optional(X)` is documented for the canonical JSON codec as "absent or null" and appears as
 * `anyOf: [X, {type: "null"}]`. For tool arguments optional means absent, so the one null branch Effect appends
 * to every optional property is removed; a field written `optional(NullOr(X))` keeps its own null.
 */
const dropOptionalNull = (value: JsonValue): JsonValue => {
  if (Array.isArray(value)) return value.map(dropOptionalNull)
  if (!isObject(value)) return value
  const out: { [k: string]: JsonValue } = {}
  for (const [k, v] of Object.entries(value)) out[k] = dropOptionalNull(v)
  const properties = out["properties"]
  if (!isObject(properties)) return out
  const required = Array.isArray(out["required"]) ? out["required"] : []
  const fixed: { [k: string]: JsonValue } = {}
  for (const [name, prop] of Object.entries(properties)) {
    const branches = isObject(prop) ? prop["anyOf"] : undefined
    if (!required.includes(name) && isObject(prop) && Array.isArray(branches) && isNullBranch(branches.at(-1))) {
      fixed[name] = { ...prop, anyOf: branches.slice(0, -1) }
    } else fixed[name] = prop
  }
  out["properties"] = fixed
  return out
}

/** `Schema.Struct({})` means "any non-nullish value" to Effect; as a tool's arguments it means "no arguments". */
const isEmptyStruct = (ast: SchemaAST.AST): boolean =>
  SchemaAST.isObjects(ast) && ast.propertySignatures.length === 0 && ast.indexSignatures.length === 0

type Check = { readonly _tag?: unknown; readonly checks?: ReadonlyArray<Check>; readonly annotations?: unknown }

const FINITE_IDS = new Set(["effect/schema/isFinite", "effect/schema/isInt"])

const hasFiniteCheck = (checks: ReadonlyArray<Check>): boolean =>
  checks.some((c) => {
    const representation = (c.annotations as { representation?: { id?: unknown } } | undefined)?.representation
    return FINITE_IDS.has(String(representation?.id)) || (c._tag === "FilterGroup" && hasFiniteCheck(c.checks ?? []))
  })

/**
 * Effect's JSON codec gives a `Schema.Number` that is not known finite an artificial "Infinity"/"NaN" encoding,
 * and the checks on it (`isGreaterThanOrEqualTo`…) vanish from the JSON Schema. The model would then be shown a
 * looser schema than the decoder enforces, so such a schema is refused with the fix: `Schema.Finite` (or `Int`)
 * keeps its checks visible.
 */
const findHiddenNumberCheck = (root: SchemaAST.AST): boolean => {
  const seen = new Set<object>()
  const visit = (value: unknown): boolean => {
    if (typeof value !== "object" || value === null || seen.has(value)) return false
    seen.add(value)
    if (Array.isArray(value)) return value.some(visit)
    const node = value as { readonly _tag?: unknown; readonly checks?: ReadonlyArray<Check> }
    if (node._tag === "Number" && node.checks !== undefined && node.checks.length > 0 && !hasFiniteCheck(node.checks)) {
      return true
    }
    return Object.entries(value).some(([key, v]) => key !== "annotations" && key !== "checks" && visit(v))
  }
  return visit(root)
}

/** Checks whose JSON Schema keywords mean exactly what the Effect check means. */
const EXACT_NUMBER_CHECKS = new Set([
  "effect/schema/isFinite", "effect/schema/isInt", "effect/schema/isBetween", "effect/schema/isGreaterThan",
  "effect/schema/isGreaterThanOrEqualTo", "effect/schema/isLessThan", "effect/schema/isLessThanOrEqualTo"
])
/** Item counts agree; string lengths do not (code points in JSON Schema, UTF-16 units in Effect). */
const EXACT_ARRAY_CHECKS = new Set(["effect/schema/isMinLength", "effect/schema/isMaxLength", "effect/schema/isLengthBetween"])

const checksWithin = (checks: ReadonlyArray<Check> | undefined, allowed: ReadonlySet<string>): boolean =>
  (checks ?? []).every((c) => {
    if (c._tag === "FilterGroup") return checksWithin(c.checks, allowed)
    const representation = (c.annotations as { representation?: { id?: unknown } } | undefined)?.representation
    return allowed.has(String(representation?.id))
  })

/**
 * True when the normalised JSON Schema already says everything this schema checks and decoding would return
 * the input unchanged (no transformation, default, custom check or recursion). Then the JSON Schema check alone
 * decides, and the Effect decoder is skipped on the dispatch path. Anything not recognised counts as inexact.
 */
const isExact = (ast: SchemaAST.AST): boolean => {
  if (ast.encoding !== undefined) return false
  switch (ast._tag) {
    case "String":
      return ast.checks === undefined || ast.checks.length === 0
    case "Number":
      return checksWithin(ast.checks, EXACT_NUMBER_CHECKS)
    case "Boolean":
    case "Null":
    case "Undefined":
    case "Literal":
      return ast.checks === undefined || ast.checks.length === 0
    case "Union":
      return (ast.checks === undefined || ast.checks.length === 0) && ast.types.every(isExact)
    case "Arrays":
      return (
        checksWithin(ast.checks, EXACT_ARRAY_CHECKS) && ast.elements.length === 0 && ast.rest.every(isExact)
      )
    case "Objects":
      return (
        (ast.checks === undefined || ast.checks.length === 0) &&
        ast.indexSignatures.length === 0 &&
        ast.propertySignatures.every((p) => isExact(p.type))
      )
    default:
      return false
  }
}

const NO_ARGUMENTS: JsonSchema = { type: "object", properties: {}, additionalProperties: false }

const effectJsonSchema = (schema: EffectArgumentSchema): JsonSchema =>
  dropOptionalNull(effectJsonSchemaDocument(schema)) as JsonSchema

const formatter = SchemaIssue.makeFormatterStandardSchemaV1()

/**
 * Effect Schema: the JSON Schema of its canonical JSON codec (closed structs), decoded by that same codec so
 * JSON-encoded types (dates, bigints, transforms) come out as the schema's `Type`. The decoder is built once.
 */
export const fromEffect = <S extends EffectArgumentSchema>(schema: S): SchemaSource<S["Type"]> => {
  if (findHiddenNumberCheck(schema.ast)) {
    throw new UnsupportedSchemaError({
      message:
        "a Schema.Number with checks loses them in JSON Schema (Effect encodes non-finite numbers as strings); " +
        "use Schema.Finite or Schema.Int, which keep their checks visible to the model"
    })
  }
  const jsonSchema = isEmptyStruct(schema.ast) ? NO_ARGUMENTS : effectJsonSchema(schema)
  if (isExact(schema.ast)) return { jsonSchema, refine: undefined }
  const decode = Schema.decodeUnknownResult(Schema.toCodecJson(schema), { onExcessProperty: "error", errors: "all" })
  return {
    jsonSchema,
    refine: (input): DecodeResult<S["Type"]> => {
      const result = decode(input)
      if (Result.isSuccess(result)) return { ok: true, value: result.success }
      const issues: ReadonlyArray<ArgumentIssue> = formatter(result.failure.issue).issues.map((i) => ({
        path: issuePath(i.path),
        message: i.message
      }))
      return { ok: false, issues }
    }
  }
}
