import type { ToolSpec } from "../../llm/request.ts"
import { adoptCanonicalSchema } from "../canonical-json.ts"
import { assertDepth, DEFAULT_MAX_DOCUMENT_DEPTH } from "../json-depth.ts"
import type { JsonObject, JsonSchema, JsonValue } from "../json-schema.ts"
import { setOwn } from "../own-property.ts"
import { quote } from "../quote.ts"
import { plainSchema } from "./schema-objects.ts"

/** One `functionDeclarations` entry carrying the JSON Schema as given (`parametersJsonSchema`), keys in canonical order. */
export const geminiFunctionDeclaration = (spec: ToolSpec, wireName: string): JsonObject => ({
  description: spec.description,
  name: wireName,
  parametersJsonSchema: plainSchema(spec.inputSchema)
})

/** Something the OpenAPI subset cannot say, dropped or approximated when translating. */
export interface SubsetLoss {
  readonly path: string
  /** `error` when the translation cannot mean the same thing (the decoder would refuse what the model sends). */
  readonly severity: "error" | "warning"
  readonly message: string
}

const isObject = (value: unknown): value is JsonObject =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const TYPE_NAMES: Record<string, string> = {
  string: "STRING",
  number: "NUMBER",
  integer: "INTEGER",
  boolean: "BOOLEAN",
  array: "ARRAY",
  object: "OBJECT",
  null: "NULL"
}

/** Keywords copied unchanged; the int64 ones are written as strings, as proto3 JSON encodes int64. */
const COPIED = new Set(["description", "title", "format", "pattern", "minimum", "maximum", "default"])
const INT64 = new Set(["minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties"])
/** Keywords with no counterpart whose absence changes nothing the model sees. */
const SILENT = new Set(["$schema", "$id", "$comment", "additionalProperties", "required", "type", "enum", "const"])

const translate = (schema: JsonValue, path: string, losses: Array<SubsetLoss>): JsonObject => {
  if (!isObject(schema)) {
    losses.push({ path, severity: "warning", message: "a boolean schema has no OpenAPI-subset form" })
    return { type: "STRING" }
  }
  const out: Record<string, JsonValue> = {}
  const rawType = schema["type"]
  const types = (Array.isArray(rawType) ? rawType : rawType === undefined ? [] : [rawType]).filter(
    (t): t is string => typeof t === "string"
  )
  let nullable = types.includes("null")
  const nonNull = types.filter((t) => t !== "null")

  let enumValues: ReadonlyArray<JsonValue> | undefined = Array.isArray(schema["enum"])
    ? schema["enum"]
    : "const" in schema
    ? [schema["const"] as JsonValue]
    : undefined
  if (enumValues !== undefined) {
    if (enumValues.includes(null)) nullable = true
    enumValues = enumValues.filter((v) => v !== null)
    if (enumValues.every((v) => typeof v === "string")) {
      out["enum"] = enumValues
      if (nonNull.length === 0) nonNull.push("string")
    } else {
      losses.push({ path, severity: "warning", message: "enum/const with non-string values has no OpenAPI-subset form (dropped)" })
    }
  }

  if (nonNull.length > 1) {
    // Several types become a union of single-typed branches.
    out["anyOf"] = nonNull.map((t) => translate({ ...schema, type: t }, path, losses))
  } else if (nonNull.length === 1) {
    const name = TYPE_NAMES[nonNull[0] as string]
    if (name === undefined) losses.push({ path, severity: "warning", message: `unknown type ${quote(nonNull[0] as string)}` })
    else out["type"] = name
  } else if (types.includes("null")) {
    out["type"] = "NULL"
    nullable = false
  }
  if (nullable) out["nullable"] = true

  for (const key of Object.keys(schema)) {
    const value = schema[key] as JsonValue
    if (nonNull.length > 1 && key !== "description" && key !== "title") continue
    if (COPIED.has(key)) out[key] = value
    else if (INT64.has(key) && typeof value === "number") out[key] = String(value)
    else if (key === "examples" && Array.isArray(value) && value.length > 0) out["example"] = value[0] as JsonValue
    else if (key === "properties" && isObject(value)) {
      const required = Array.isArray(schema["required"]) ? schema["required"] : []
      const props: Record<string, JsonValue> = {}
      for (const name of Object.keys(value)) {
        const child = translate(value[name] as JsonValue, `${path}/properties/${name}`, losses)
        // Gemini refuses an OBJECT without properties, so such a member (typically a record) is left out.
        if (child["type"] === "OBJECT" && !isObject(child["properties"])) {
          losses.push({
            path: `${path}/properties/${name}`,
            severity: required.includes(name) ? "error" : "warning",
            message: required.includes(name)
              ? "a required object without properties cannot be declared in the OpenAPI subset"
              : "an object without properties cannot be declared in the OpenAPI subset (property left out)"
          })
          continue
        }
        setOwn(props, name, child)
      }
      const names = Object.keys(props)
      if (names.length === 0) continue
      out["properties"] = props
      // Gemini orders properties alphabetically unless told; the author's order steers the model.
      if (names.length > 1) out["propertyOrdering"] = names
      const kept = required.filter((name) => typeof name === "string" && names.includes(name))
      if (kept.length > 0) out["required"] = kept
    } else if (key === "items" && isObject(value)) out["items"] = translate(value, `${path}/items`, losses)
    else if (key === "anyOf" || key === "oneOf") {
      if (!Array.isArray(value)) continue
      if (key === "oneOf") losses.push({ path, severity: "warning", message: "oneOf is sent as anyOf (the subset has no oneOf)" })
      const branches = value.filter((b) => !(isObject(b) && b["type"] === "null"))
      if (branches.length < value.length) out["nullable"] = true
      const translated = branches.map((b, i) => translate(b, `${path}/${key}/${i}`, losses))
      if (translated.length === 1) Object.assign(out, translated[0])
      else out["anyOf"] = translated
    } else if (key === "additionalProperties" && value !== false && !(isObject(value) && Object.keys(value).length === 0)) {
      losses.push({ path, severity: "warning", message: "additionalProperties with a schema (a record) has no OpenAPI-subset form (dropped)" })
    } else if (!SILENT.has(key) && key !== "examples") {
      losses.push({ path, severity: "warning", message: `keyword ${quote(key)} has no OpenAPI-subset form (dropped)` })
    }
  }
  return out
}

/**
 * The schema translated to Gemini's OpenAPI-subset `Schema` (the older `parameters` field): upper-case type names,
 * `type: [x, "null"]` as `nullable`, string-only enums, `propertyOrdering` to keep the author's order. Anything
 * the subset lacks is dropped and reported in `losses`.
 *
 * @throws JsonTooDeepError when the schema nests deeper than `DEFAULT_MAX_DOCUMENT_DEPTH` (the translation recurses).
 */
export const toGeminiSubsetSchema = (
  schema: JsonSchema
): { readonly schema: JsonObject; readonly losses: ReadonlyArray<SubsetLoss> } => {
  assertDepth(schema, DEFAULT_MAX_DOCUMENT_DEPTH, "schema")
  const losses: Array<SubsetLoss> = []
  return { schema: translate(schema, "", losses), losses }
}

/** One `functionDeclarations` entry carrying the OpenAPI-subset `parameters`, for endpoints without JSON Schema. */
export const geminiSubsetFunctionDeclaration = (spec: ToolSpec, wireName: string): JsonObject => {
  const parameters = toGeminiSubsetSchema(spec.inputSchema).schema
  // A function without arguments leaves `parameters` out: an OBJECT without properties is refused.
  return isObject(parameters["properties"])
    ? { description: spec.description, name: wireName, parameters: adoptCanonicalSchema(parameters) }
    : { description: spec.description, name: wireName }
}
