import type { JsonObject, JsonSchema, JsonValue } from "../json-schema.ts"

const isObject = (v: JsonValue | undefined): v is JsonObject => typeof v === "object" && v !== null && !Array.isArray(v)

const NOT_PROTO: JsonObject = { not: { const: "__proto__" } }

/**
 * zod (3 and 4) builds a record's output by assignment, so an argument key `__proto__` sets the prototype
 * instead of becoming an entry: the value was accepted and the handler never sees it. Such schemas advertise
 * the key as not allowed, which the decoder's JSON Schema step then enforces with a located issue. Applies to
 * every object schema that admits undeclared keys (records, catch-alls).
 */
export const refuseProtoKeys = (value: JsonValue): JsonValue => {
  if (Array.isArray(value)) return value.map(refuseProtoKeys)
  if (!isObject(value)) return value
  const out: { [k: string]: JsonValue } = {}
  for (const [k, v] of Object.entries(value)) {
    Object.defineProperty(out, k, { value: refuseProtoKeys(v), enumerable: true, writable: true, configurable: true })
  }
  const extra = out["additionalProperties"]
  if (isObject(extra) || extra === true) {
    const names = out["propertyNames"]
    if (!isObject(names)) out["propertyNames"] = NOT_PROTO
    else if (!Array.isArray(names["enum"]) && !("const" in names)) out["propertyNames"] = { allOf: [names, NOT_PROTO] }
  }
  return out
}

export const refuseProtoKeysIn = (schema: JsonSchema): JsonSchema => refuseProtoKeys(schema) as JsonSchema
