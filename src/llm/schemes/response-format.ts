import { plainSchema, strictSchema } from "../../schema/dialects/schema-objects.ts"
import type { JsonObject, JsonSchema, JsonValue } from "../../schema/json-schema.ts"
import type { JsonBodyValue } from "../json-body.ts"
import type { ResponseFormat } from "../request.ts"

/** OpenAI's rule for `json_schema.name`: letters, digits, `_` and `-`, at most 64. */
const WIRE_NAME_MAX = 64

/**
 * The schema's name as every provider accepts it: characters outside `[A-Za-z0-9_-]` become `_` (a dotted
 * `meeting.tasks` is `meeting_tasks`), cut to 64; an empty name is `output`. The same text for the same name.
 */
export const wireSchemaName = (name: string): string => {
  const cleaned = name.replace(/[^A-Za-z0-9_-]/g, "_").slice(0, WIRE_NAME_MAX)
  return cleaned === "" ? "output" : cleaned
}

/**
 * The schema OpenAI is sent and whether it is strict: the strict rewrite (the same one tools get, decision
 * 0004) where the schema allows it, the schema as given otherwise. A strict answer's `null` for an optional
 * property is turned back into an absent one (`restoreStrictArguments`) before decoding.
 */
export const openAiFormatSchema = (schema: JsonSchema): { readonly schema: JsonSchema; readonly strict: boolean } => {
  const strict = strictSchema(schema)
  return strict === undefined ? { schema: plainSchema(schema), strict: false } : { schema: strict, strict: true }
}

/** `response_format` of a Chat Completions body. */
export const chatResponseFormat = (format: ResponseFormat | undefined): JsonBodyValue | undefined => {
  if (format === undefined || format.type === "text") return undefined
  if (format.type === "json_object") return { type: "json_object" }
  const { schema, strict } = openAiFormatSchema(format.schema)
  return { type: "json_schema", json_schema: { name: wireSchemaName(format.name), description: format.description, schema, strict } }
}

/** `text` of a Responses body: `{format: {...}}`, the format's members flattened beside its `type`. */
export const responsesTextFormat = (format: ResponseFormat | undefined): JsonBodyValue | undefined => {
  if (format === undefined || format.type === "text") return undefined
  if (format.type === "json_object") return { format: { type: "json_object" } }
  const { schema, strict } = openAiFormatSchema(format.schema)
  return { format: { type: "json_schema", name: wireSchemaName(format.name), description: format.description, schema, strict } }
}

/**
 * Keywords Anthropic's structured outputs accept (its documented JSON Schema subset). A schema using any other —
 * numeric bounds, string lengths, patterns, `additionalProperties` other than `false` — cannot be sent natively
 * without loosening it, which would break the rule that the model is told what is accepted; `completeObject`
 * sends such a schema as a forced tool instead (tool input schemas are not restricted).
 */
const ANTHROPIC_FORMAT_KEYWORDS = new Set([
  "type", "properties", "required", "additionalProperties", "items", "enum", "const", "anyOf", "allOf",
  "$ref", "$defs", "definitions", "description", "title", "default", "format", "minItems"
])
const ANTHROPIC_FORMATS = new Set(["date-time", "time", "date", "duration", "email", "hostname", "uri", "ipv4", "ipv6", "uuid"])

const isObject = (value: JsonValue | undefined): value is JsonObject => typeof value === "object" && value !== null && !Array.isArray(value)

/**
 * Why Anthropic's native format cannot carry this schema unchanged, or undefined when it can. Iterative (the
 * schema is normalised, so bounded, but a raw one may not be).
 */
export const anthropicFormatProblem = (schema: JsonSchema): string | undefined => {
  const stack: Array<{ readonly node: JsonValue; readonly path: string }> = [{ node: schema, path: "" }]
  let seen = 0
  while (stack.length > 0) {
    const { node, path } = stack.pop() as { node: JsonValue; path: string }
    if (++seen > 100_000) return "the schema is too large"
    if (!isObject(node)) continue
    for (const [key, value] of Object.entries(node)) {
      const at = path === "" ? key : `${path}.${key}`
      if (!ANTHROPIC_FORMAT_KEYWORDS.has(key)) return `${at}: keyword "${key}" is outside Anthropic's structured-output subset`
      if (key === "additionalProperties" && value !== false) return `${at}: Anthropic accepts only additionalProperties: false`
      if (key === "format" && (typeof value !== "string" || !ANTHROPIC_FORMATS.has(value))) return `${at}: string format ${JSON.stringify(value)} is not supported`
      if (key === "minItems" && value !== 0 && value !== 1) return `${at}: Anthropic accepts minItems 0 or 1 only`
      if (key === "properties" || key === "$defs" || key === "definitions") {
        if (isObject(value)) for (const [name, member] of Object.entries(value)) stack.push({ node: member, path: `${at}.${name}` })
      } else if (key === "anyOf" || key === "allOf") {
        if (Array.isArray(value)) value.forEach((member, i) => stack.push({ node: member, path: `${at}[${i}]` }))
      } else if (key === "items") {
        stack.push({ node: value, path: at })
      }
    }
    if (node["type"] === "object" && node["additionalProperties"] !== false && isObject(node["properties"])) {
      return `${path === "" ? "(root)" : path}: Anthropic needs every object closed (additionalProperties: false)`
    }
  }
  return undefined
}

/**
 * Claude models before the 4.5 generation (and Opus 4.1) have no `output_config.format`; they are given a
 * forced tool. Matched on the model id's family and version, so dated and aliased ids both match.
 */
export const anthropicModelHasNativeFormat = (model: string): boolean => {
  const match = /claude-(?:(opus|sonnet|haiku)-(\d+)(?:-(\d))?(?!\d{2})|(\d+)(?:-(\d))?-(opus|sonnet|haiku))/.exec(model)
  if (match === null) return true // not a Claude id we know (a proxy's alias): assume the current API
  const major = Number(match[2] ?? match[4])
  const minor = Number(match[3] ?? match[5] ?? 0)
  const family = match[1] ?? match[6]
  if (major >= 5) return true
  if (major < 4) return false
  return minor >= 5 || (family === "opus" && minor >= 1)
}

/** `output_config` of a Messages body, for a schema format; JSON mode without a schema has no native form. */
export const anthropicOutputConfig = (format: ResponseFormat | undefined): JsonBodyValue | undefined =>
  format?.type === "json_schema" ? { format: { type: "json_schema", schema: plainSchema(format.schema) } } : undefined

/** The `generationConfig` members of a Gemini body. */
export const geminiResponseFields = (
  format: ResponseFormat | undefined
): { readonly responseMimeType?: string; readonly responseJsonSchema?: JsonBodyValue } => {
  if (format === undefined || format.type === "text") return {}
  if (format.type === "json_object") return { responseMimeType: "application/json" }
  return { responseMimeType: "application/json", responseJsonSchema: plainSchema(format.schema) }
}
