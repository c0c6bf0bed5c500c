import { canonicalSchemaJson } from "../canonical-json.ts"
import type { JsonSchema } from "../json-schema.ts"
import { toStrictSchema } from "./openai-strict.ts"

/**
 * Serialised schema text per schema object. Tool specs outlive tool arrays (a tool set change builds a new array
 * around mostly the same specs), so caching by schema identity makes rebuilding a changed set cheap.
 */
const plainText = new WeakMap<JsonSchema, string>()
const strictText = new WeakMap<JsonSchema, string | null>()

/** Canonical JSON text of the schema as given. */
export const plainSchemaText = (schema: JsonSchema): string => {
  let text = plainText.get(schema)
  if (text === undefined) {
    text = canonicalSchemaJson(schema)
    plainText.set(schema, text)
  }
  return text
}

/** Canonical JSON text of the schema's OpenAI strict rewrite, or undefined when it cannot be strict. */
export const strictSchemaText = (schema: JsonSchema): string | undefined => {
  let text = strictText.get(schema)
  if (text === undefined) {
    const result = toStrictSchema(schema)
    text = result.ok ? canonicalSchemaJson(result.schema) : null
    strictText.set(schema, text)
  }
  return text ?? undefined
}
