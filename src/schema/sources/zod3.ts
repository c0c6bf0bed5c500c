import type { z } from "zod/v3"
import { zodToJsonSchema } from "zod-to-json-schema"
import type { DecodeResult } from "../argument-codec.ts"
import type { JsonSchema } from "../json-schema.ts"
import { issuePath, type SchemaSource } from "./source.ts"

export type Zod3ArgumentSchema = z.ZodTypeAny

/** A zod 3 schema: a `_def` and `safeParse`, and no `_zod` (which would make it zod 4). */
export const isZod3Schema = (u: unknown): u is Zod3ArgumentSchema =>
  typeof u === "object" &&
  u !== null &&
  !("_zod" in u) &&
  "_def" in u &&
  typeof (u as { safeParse?: unknown }).safeParse === "function"

/** zod 3 through zod-to-json-schema (references kept as `$ref`, inlined later by normalisation). */
export const fromZod3 = <S extends Zod3ArgumentSchema>(schema: S): SchemaSource<z.output<S>> => ({
  jsonSchema: zodToJsonSchema(schema, { target: "jsonSchema2019-09", $refStrategy: "root" }) as JsonSchema,
  refine: (input): DecodeResult<z.output<S>> => {
    const result = schema.safeParse(input)
    return result.success
      ? { ok: true, value: result.data as z.output<S> }
      : { ok: false, issues: result.error.issues.map((i) => ({ path: issuePath(i.path), message: i.message })) }
  }
})
