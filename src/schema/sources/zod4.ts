import type { z } from "zod"
// The generator alone, not zod's `z` namespace: importing `z` keeps all of zod (its locales too) in a bundle.
import { toJSONSchema } from "zod/v4/core"
import type { DecodeResult } from "../argument-codec.ts"
import type { JsonSchema } from "../json-schema.ts"
import { UnsupportedSchemaError } from "../normalize.ts"
import { patternProblem } from "./pattern.ts"
import { refuseProtoKeysIn } from "./proto-keys.ts"
import { issuePath, propertyPathOf, type SchemaSource } from "./source.ts"

/** Any zod 4 schema, converted by zod's own JSON Schema generator. */
export type Zod4ArgumentSchema = z.ZodType

/** zod 4 schemas carry `_zod`; checked first because zod-to-json-schema silently empties them. */
export const isZod4Schema = (u: unknown): u is Zod4ArgumentSchema =>
  typeof u === "object" && u !== null && "_zod" in u

/**
 * zod 4 writes a RegExp's source as `pattern` and drops its flags, so `.regex(/^ab$/i)` would be shown (and
 * enforced) as case-sensitive; a source that is not a valid Unicode pattern would make the decoder throw on first
 * use. Both are refused at definition, naming the pattern.
 */
const patternsOf = (zod: { readonly def: object; readonly bag: object }): ReadonlyArray<RegExp> => {
  const checks = (zod.def as { readonly checks?: ReadonlyArray<{ readonly _zod: { readonly def: { readonly pattern?: unknown } } }> }).checks
  const fromChecks = (checks ?? []).map((c) => c._zod.def.pattern).filter((p): p is RegExp => p instanceof RegExp)
  const fromBag = (zod.bag as { readonly patterns?: ReadonlySet<RegExp> }).patterns
  return [...fromChecks, ...(fromBag ?? [])]
}

const refuseInexactPatterns = (ctx: { readonly zodSchema: { readonly _zod: { readonly def: object; readonly bag: object } } }): void => {
  for (const re of patternsOf(ctx.zodSchema._zod)) {
    const problem = patternProblem(re.source, re.flags)
    if (problem !== undefined) {
      throw new UnsupportedSchemaError({
        message: `the model would be shown a different rule than the decoder enforces: /${re.source}/${re.flags}: ${problem}`
      })
    }
  }
}

/** What the model could send instead of a type JSON cannot carry. */
const INSTEAD: Readonly<Record<string, string>> = {
  date: "declare an ISO 8601 string (z.iso.datetime()) and convert it in the handler",
  bigint: "declare z.int() or a digit string (z.string().regex(/^-?\\d+$/)) and convert it in the handler",
  undefined: "make the property optional instead",
  void: "make the property optional instead",
  map: "declare z.record() or an array of entries",
  set: "declare an array (z.array()) and build the set in the handler"
}

/**
 * zod's own error for a type without a JSON form ("Date cannot be represented in JSON Schema") names neither the
 * property nor what to do; this one is tagged and names both (the tool is named by `defineTool`).
 */
const refuseUnrepresentable = (ctx: { readonly zodSchema: { readonly _zod: { readonly def: { readonly type: string } } }; readonly path: ReadonlyArray<string | number>; readonly message: string }): never => {
  const path = propertyPathOf(ctx.path)
  const where = path === "" ? "the schema's root" : `property ${JSON.stringify(path)}`
  const kind = ctx.zodSchema._zod.def.type
  const instead = INSTEAD[kind]
  throw new UnsupportedSchemaError({
    message: `${where}: ${ctx.message}, so a model cannot send it${instead === undefined ? "" : `; ${instead}`}`,
    ...(path === "" ? {} : { path })
  })
}

/**
 * zod 4 through its own generator, describing the input side (what the model sends: fields with defaults are
 * optional). `.int()` keeps its ±MAX_SAFE_INTEGER bounds: zod refuses unsafe integers, and a larger JSON integer
 * would not survive `JSON.parse` exactly anyway, so showing the bound is the truth.
 */
export const fromZod4 = <S extends Zod4ArgumentSchema>(schema: S): SchemaSource<z.output<S>> => ({
  jsonSchema: refuseProtoKeysIn(
    toJSONSchema(schema, {
      io: "input",
      target: "draft-2020-12",
      override: refuseInexactPatterns,
      unrepresentable: refuseUnrepresentable
    }) as JsonSchema
  ),
  refine: isExact(schema)
    ? undefined
    : (input): DecodeResult<z.output<S>> => {
        const result = schema.safeParse(input)
        return result.success
          ? { ok: true, value: result.data }
          : { ok: false, issues: result.error.issues.map((i) => ({ path: issuePath(i.path), message: i.message })) }
      }
})

interface Def {
  readonly type: string
  readonly checks?: ReadonlyArray<{ readonly _zod: { readonly def: { readonly check: string; readonly format?: string } } }>
  readonly shape?: Readonly<Record<string, Zod4ArgumentSchema>>
  readonly catchall?: Zod4ArgumentSchema
  readonly element?: Zod4ArgumentSchema
  readonly innerType?: Zod4ArgumentSchema
  readonly options?: ReadonlyArray<Zod4ArgumentSchema>
}

const NUMBER_CHECKS = new Set(["greater_than", "less_than"])
/** Item counts agree; string lengths do not (code points in JSON Schema, UTF-16 units in zod). */
const ARRAY_CHECKS = new Set(["min_length", "max_length", "length_equals"])

const checksWithin = (def: Def, allowed: ReadonlySet<string>): boolean =>
  (def.checks ?? []).every((c) => {
    const d = c._zod.def
    return allowed.has(d.check) || (d.check === "number_format" && d.format === "safeint")
  })

/**
 * True when the normalised JSON Schema already says everything this schema checks and parsing would return an
 * equal value (no transform, default, refinement, format or string-length check). Then the JSON Schema check
 * alone decides and zod is skipped on the dispatch path. Anything not recognised counts as inexact.
 */
const isExact = (schema: Zod4ArgumentSchema): boolean => {
  const def = schema._zod.def as Def
  switch (def.type) {
    case "string":
    case "boolean":
    case "null":
    case "enum":
    case "literal":
      return (def.checks ?? []).length === 0
    case "number":
      return checksWithin(def, NUMBER_CHECKS)
    case "optional":
    case "nullable":
      return def.innerType !== undefined && isExact(def.innerType)
    case "union":
      return (def.checks ?? []).length === 0 && (def.options ?? []).every(isExact)
    case "array":
      return def.element !== undefined && checksWithin(def, ARRAY_CHECKS) && isExact(def.element)
    case "object":
      return (
        (def.checks ?? []).length === 0 &&
        def.catchall === undefined &&
        Object.values(def.shape ?? {}).every(isExact)
      )
    default:
      return false
  }
}
