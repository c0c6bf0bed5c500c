import type { StandardJSONSchemaV1, StandardSchemaV1 } from "effect/StandardSchema"
import type { DecodeResult } from "../argument-codec.ts"
import type { JsonSchema } from "../json-schema.ts"
import { issuePath, type SchemaSource } from "./source.ts"

/** A validator that also publishes its JSON Schema (Standard Schema + Standard JSON Schema, v1). */
export type StandardArgumentSchema<I = unknown, O = I> = StandardSchemaV1<I, O> & StandardJSONSchemaV1<I, O>

export const isStandardJsonSchema = (u: unknown): u is StandardArgumentSchema => {
  if ((typeof u !== "object" && typeof u !== "function") || u === null || !("~standard" in u)) return false
  const props = (u as { "~standard": unknown })["~standard"]
  if (typeof props !== "object" || props === null) return false
  const p = props as { validate?: unknown; jsonSchema?: { input?: unknown } }
  return typeof p.validate === "function" && typeof p.jsonSchema?.input === "function"
}

const toResult = <O>(result: StandardSchemaV1.Result<O>): DecodeResult<O> =>
  result.issues === undefined
    ? { ok: true, value: result.value }
    : { ok: false, issues: result.issues.map((i) => ({ path: issuePath(i.path), message: i.message })) }

/** Any Standard JSON Schema: the input-side draft 2020-12 schema, then the library's own `validate`. */
export const fromStandard = <I, O>(schema: StandardArgumentSchema<I, O>): SchemaSource<O> => {
  const std = schema["~standard"]
  return {
    jsonSchema: std.jsonSchema.input({ target: "draft-2020-12" }) as JsonSchema,
    refine: (input) => {
      const result = std.validate(input)
      return result instanceof Promise ? result.then(toResult) : toResult(result)
    }
  }
}
