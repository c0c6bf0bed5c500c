import { adoptCanonicalSchema, canonicalSchema, isCanonicalSchema, isDeepFrozen } from "../canonical-json.ts"
import type { JsonSchema } from "../json-schema.ts"
import { toStrictSchema } from "./openai-strict.ts"

/**
 * The schema objects the emitters put into a `tools` array, in canonical key order and frozen. A schema that
 * came through `ToolMeta` already is one and is used as it is; any other is copied, and the copy remembered by
 * identity only when the schema is deep-frozen (a caller's plain schema can be edited in place, and a copy kept
 * for it would go stale).
 */
const plainCopies = new WeakMap<JsonSchema, JsonSchema>()
const strictCopies = new WeakMap<JsonSchema, JsonSchema | null>()

/** The schema as given, in canonical form. */
export const plainSchema = (schema: JsonSchema): JsonSchema => {
  if (isCanonicalSchema(schema)) return schema
  let copy = plainCopies.get(schema)
  if (copy === undefined) {
    copy = canonicalSchema(schema)
    if (isDeepFrozen(schema)) plainCopies.set(schema, copy)
  }
  return copy
}

/** The schema's OpenAI strict rewrite in canonical form, or undefined when it cannot be strict. Cached per frozen schema. */
export const strictSchema = (schema: JsonSchema): JsonSchema | undefined => {
  let strict = strictCopies.get(schema)
  if (strict === undefined) {
    const result = toStrictSchema(schema)
    strict = result.ok ? adoptCanonicalSchema(result.schema) : null
    if (isDeepFrozen(schema)) strictCopies.set(schema, strict)
  }
  return strict ?? undefined
}
