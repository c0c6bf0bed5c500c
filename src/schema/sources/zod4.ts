import { z } from "zod"
import type { DecodeResult } from "../argument-codec.ts"
import type { JsonSchema } from "../json-schema.ts"
import { issuePath, type SchemaSource } from "./source.ts"

export type Zod4ArgumentSchema = z.ZodType

/** zod 4 schemas carry `_zod`; checked first because zod-to-json-schema silently empties them. */
export const isZod4Schema = (u: unknown): u is Zod4ArgumentSchema =>
  typeof u === "object" && u !== null && "_zod" in u

/**
 * zod 4 through its own generator, describing the input side (what the model sends: fields with defaults are
 * optional). `.int()` keeps its ±MAX_SAFE_INTEGER bounds: zod refuses unsafe integers, and a larger JSON integer
 * would not survive `JSON.parse` exactly anyway, so showing the bound is the truth.
 */
export const fromZod4 = <S extends Zod4ArgumentSchema>(schema: S): SchemaSource<z.output<S>> => ({
  jsonSchema: z.toJSONSchema(schema, { io: "input", target: "draft-2020-12" }) as JsonSchema,
  refine: (input): DecodeResult<z.output<S>> => {
    const result = schema.safeParse(input)
    return result.success
      ? { ok: true, value: result.data }
      : { ok: false, issues: result.error.issues.map((i) => ({ path: issuePath(i.path), message: i.message })) }
  }
})
