import type { z as z3 } from "zod/v3"
import type { z } from "zod"
import type { StandardSchemaV1 } from "effect/StandardSchema"
import type { ArgumentCodec, ArgumentIssue, DecodeResult } from "./argument-codec.ts"
import type { JsonSchema } from "./json-schema.ts"
import { normalizeJsonSchema, UnsupportedSchemaError } from "./normalize.ts"
import { compileJsonSchema } from "./sources/ajv-validator.ts"
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
 * Builds the codec for a tool's arguments from any supported schema. The normalised JSON Schema is what the
 * model is shown; decoding first checks the value against exactly that schema (compiled once), so anything the
 * schema forbids is refused — extra keys, `null` for an optional field, non-finite numbers — whatever the
 * library would have tolerated. The library's own decoder then runs for what JSON Schema cannot say
 * (transforms, defaults, custom checks). All built-in sources decode synchronously; a Standard Schema whose
 * `validate` is asynchronous yields a promise.
 *
 * @throws RecursiveSchemaError / UnsupportedSchemaError (from `normalizeJsonSchema`) for unusable schemas.
 */
export const makeArgumentCodec = <S extends ArgumentSchema>(schema: S): ArgumentCodec<InferArguments<S>> => {
  const source = sourceOf(schema) as SchemaSource<InferArguments<S>>
  const normalized = normalizeJsonSchema(source.jsonSchema)
  const check = compileJsonSchema(normalized)
  const refine = source.refine
  const decode =
    refine === undefined
      ? (input: unknown): DecodeResult<InferArguments<S>> => {
          const issues = check(input)
          return issues === undefined ? { ok: true, value: input as InferArguments<S> } : { ok: false, issues }
        }
      : (input: unknown) => {
          const issues = check(input)
          return issues === undefined ? refine(input) : { ok: false as const, issues }
        }
  return { jsonSchema: normalized, decode }
}

const renderPath = (path: ReadonlyArray<string | number>): string =>
  path.reduce<string>(
    (out, seg) =>
      typeof seg === "number" ? `${out}[${seg}]` : out === "" ? seg : `${out}.${seg}`,
    ""
  )

/**
 * One line for the model, e.g. `days: expected integer <= 14, got 20; city: required`. Issues at the root
 * have no path prefix.
 */
export const formatIssues = (issues: ReadonlyArray<ArgumentIssue>): string =>
  issues
    .map((i) => {
      const path = renderPath(i.path)
      return path === "" ? i.message : `${path}: ${i.message}`
    })
    .join("; ")
