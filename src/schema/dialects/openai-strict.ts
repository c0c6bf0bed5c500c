import { assertDepth, DEFAULT_MAX_DOCUMENT_DEPTH, DEFAULT_MAX_JSON_DEPTH, tooDeepMessage, valueDepth } from "../json-depth.ts"
import type { JsonObject, JsonSchema, JsonValue } from "../json-schema.ts"
import { ownValue, setOwn } from "../own-property.ts"
import { quote } from "../quote.ts"

/**
 * OpenAI strict mode ("Structured Outputs" for function tools) accepts only a subset of JSON Schema: every object
 * closed and listing all its properties in `required`, and only the keywords below. A schema that fits is
 * rewritten (optional properties become required-but-nullable); one that does not is sent with `strict: false`.
 */

/** Keywords strict mode documents as supported (per type), plus the structural ones. */
const STRICT_KEYWORDS = new Set([
  "type",
  "description",
  "title",
  "enum",
  "const",
  "anyOf",
  "$ref",
  "$defs",
  "definitions",
  "properties",
  "required",
  "additionalProperties",
  "items",
  "minItems",
  "maxItems",
  "pattern",
  "format",
  "multipleOf",
  "minimum",
  "maximum",
  "exclusiveMinimum",
  "exclusiveMaximum"
])

/** Annotations strict mode does not list; dropping them changes no accepted value, so they never block strict. */
const DROPPABLE_ANNOTATIONS = new Set(["$schema", "$id", "$comment", "default", "examples", "deprecated", "readOnly", "writeOnly"])

const STRICT_STRING_FORMATS = new Set(["date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"])

/** Documented limits: nesting depth and total property count. */
const MAX_DEPTH = 10
const MAX_PROPERTIES = 5000

export interface StrictProblem {
  readonly path: string
  readonly message: string
}

export type StrictResult =
  | { readonly ok: true; readonly schema: JsonSchema }
  | { readonly ok: false; readonly problems: ReadonlyArray<StrictProblem> }

const isObject = (value: unknown): value is JsonObject =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** Whether a schema already lets `null` through, so marking it optional-by-null would change nothing. */
export const acceptsNull = (schema: JsonValue | undefined, root?: JsonSchema): boolean => {
  if (!isObject(schema)) return schema === true
  const resolved = root === undefined ? schema : resolveRef(schema, root)
  const type = resolved["type"]
  if (type === "null" || (Array.isArray(type) && type.includes("null"))) return true
  const enumValues = resolved["enum"]
  if (Array.isArray(enumValues)) return enumValues.includes(null)
  if ("const" in resolved) return resolved["const"] === null
  const anyOf = resolved["anyOf"] ?? resolved["oneOf"]
  return Array.isArray(anyOf) && anyOf.some((branch) => acceptsNull(branch, root))
}

/** Follows a local `#/$defs/…` or `#/definitions/…` reference; anything else is returned as given. */
export const resolveRef = (schema: JsonObject, root: JsonSchema): JsonObject => {
  let current = schema
  for (let hops = 0; hops < 32; hops++) {
    const ref = current["$ref"]
    if (typeof ref !== "string" || !ref.startsWith("#")) return current
    let target: JsonValue | undefined = root
    for (const part of ref.slice(1).split("/").filter((p) => p !== "")) {
      const key = part.replaceAll("~1", "/").replaceAll("~0", "~")
      // Own members only: "#/constructor" or "#/__proto__" must not resolve into Object.prototype.
      target = isObject(target) ? ownValue(target, key) : undefined
    }
    if (!isObject(target)) return current
    current = target
  }
  return current
}

const nullable = (schema: JsonObject): JsonObject => {
  if (acceptsNull(schema)) return schema
  if ("$ref" in schema || "const" in schema) return { anyOf: [schema, { type: "null" }] }
  const anyOf = schema["anyOf"]
  if (Array.isArray(anyOf)) return { ...schema, anyOf: [...anyOf, { type: "null" }] }
  const type = schema["type"]
  if (type === undefined) return { anyOf: [schema, { type: "null" }] }
  const out: Record<string, JsonValue> = { ...schema, type: Array.isArray(type) ? [...type, "null"] : [type, "null"] }
  const enumValues = schema["enum"]
  if (Array.isArray(enumValues)) out["enum"] = [...enumValues, null]
  return out
}

interface Walk {
  readonly problems: Array<StrictProblem>
  propertyCount: number
}

const rewrite = (schema: JsonValue, path: string, depth: number, walk: Walk): JsonObject => {
  if (!isObject(schema)) {
    walk.problems.push({ path, message: "a boolean schema is not allowed in strict mode" })
    return {}
  }
  if (depth > MAX_DEPTH) walk.problems.push({ path, message: `nesting deeper than ${MAX_DEPTH} levels` })
  const out: Record<string, JsonValue> = {}
  // Keys visited in code-unit order so the result is usually canonical already and serialises without a copy.
  for (const key of Object.keys(schema).sort()) {
    const value = schema[key] as JsonValue
    if (DROPPABLE_ANNOTATIONS.has(key)) continue
    if (!STRICT_KEYWORDS.has(key)) {
      walk.problems.push({ path, message: `keyword ${quote(key)} is not supported in strict mode` })
      continue
    }
    switch (key) {
      case "properties": {
        if (!isObject(value)) break
        const props: Record<string, JsonValue> = {}
        const required = new Set(Array.isArray(schema["required"]) ? schema["required"] : [])
        for (const name of Object.keys(value)) {
          walk.propertyCount++
          const child = rewrite(value[name] as JsonValue, `${path}/properties/${name}`, depth + 1, walk)
          setOwn(props, name, required.has(name) ? child : nullable(child))
        }
        out["properties"] = props
        out["required"] = Object.keys(value)
        break
      }
      case "required":
        // Rebuilt from `properties`; on an object without properties it can only list nothing.
        if (!("properties" in schema)) out["required"] = []
        break
      case "additionalProperties":
        if (value !== false) {
          walk.problems.push({
            path,
            message: isObject(value) && Object.keys(value).length > 0
              ? "a record (additionalProperties with a schema) cannot be strict"
              : "an open object (additionalProperties not false) cannot be strict"
          })
        }
        out["additionalProperties"] = false
        break
      case "items":
        if (Array.isArray(value)) {
          walk.problems.push({ path, message: "tuple-form items is not supported in strict mode" })
        } else {
          out["items"] = rewrite(value, `${path}/items`, depth + 1, walk)
        }
        break
      case "anyOf":
        if (!Array.isArray(value)) break
        out["anyOf"] = value.map((branch, i) => rewrite(branch, `${path}/anyOf/${i}`, depth + 1, walk))
        break
      case "$defs":
      case "definitions":
        if (!isObject(value)) break
        out[key] = Object.fromEntries(
          Object.keys(value).map((name) => [name, rewrite(value[name] as JsonValue, `${path}/${key}/${name}`, depth, walk)])
        )
        break
      case "format":
        if (typeof value !== "string" || !STRICT_STRING_FORMATS.has(value)) {
          walk.problems.push({ path, message: `format ${typeof value === "string" ? quote(value) : "(not a string)"} is not supported in strict mode` })
        }
        out[key] = value
        break
      default:
        out[key] = value
    }
  }
  const type = out["type"]
  const isObjectType = type === "object" || (Array.isArray(type) && type.includes("object"))
  if (isObjectType) {
    if (!("additionalProperties" in schema)) {
      walk.problems.push({ path, message: "an open object (no additionalProperties: false) cannot be strict" })
    }
    if (!("properties" in out)) {
      out["properties"] = {}
      out["required"] = []
    }
  } else if (!("type" in out) && !("enum" in out) && !("const" in out) && !("anyOf" in out) && !("$ref" in out)) {
    walk.problems.push({ path, message: "a schema without type, enum, const or anyOf cannot be strict" })
  }
  return out
}

/** The strict rewrite of a tool's parameters schema, or why it cannot be strict. */
export const toStrictSchema = (schema: JsonSchema): StrictResult => {
  // The rewrite recurses; a schema that is not bounded yet (a raw ToolSpec, a lint of a plugin's schema) is checked
  // iteratively first and simply cannot be strict.
  if (valueDepth(schema, DEFAULT_MAX_DOCUMENT_DEPTH) > DEFAULT_MAX_DOCUMENT_DEPTH) {
    return { ok: false, problems: [{ path: "", message: tooDeepMessage("schema", DEFAULT_MAX_DOCUMENT_DEPTH) }] }
  }
  const walk: Walk = { problems: [], propertyCount: 0 }
  const problems = walk.problems
  if (schema["type"] !== "object") problems.push({ path: "", message: "the root must be an object schema" })
  if ("anyOf" in schema) problems.push({ path: "", message: "the root cannot be anyOf in strict mode" })
  const rewritten = rewrite(schema, "", 1, walk)
  if (walk.propertyCount > MAX_PROPERTIES) {
    problems.push({ path: "", message: `more than ${MAX_PROPERTIES} properties in total` })
  }
  return problems.length === 0 ? { ok: true, schema: rewritten } : { ok: false, problems }
}

const matchesType = (schema: JsonObject, value: unknown): boolean => {
  const type = schema["type"]
  const types = Array.isArray(type) ? type : type === undefined ? [] : [type]
  if (types.length === 0) return true
  const actual = value === null ? "null" : Array.isArray(value) ? "array" : typeof value
  return types.some((t) => t === actual || (t === "integer" && actual === "number"))
}

/**
 * `hops` counts every step, into a member or through an `anyOf`: the value's depth is bounded on entry, but a
 * hand-written schema with a `$ref` cycle through `anyOf` could loop on one value forever. Past the bound the
 * value is left as it is (the decoder still checks it against the schema).
 */
const restore = (schema: JsonValue | undefined, value: unknown, root: JsonSchema, hops: number): unknown => {
  if (!isObject(schema) || typeof value !== "object" || value === null || hops > DEFAULT_MAX_DOCUMENT_DEPTH) return value
  const resolved = resolveRef(schema, root)
  const branches = resolved["anyOf"] ?? resolved["oneOf"]
  if (Array.isArray(branches)) {
    const objects = branches.filter((b): b is JsonObject => isObject(b)).map((b) => resolveRef(b, root))
    const branch = objects.find((b) => matchesType(b, value) && (b["type"] !== undefined || "properties" in b))
    return branch === undefined ? value : restore(branch, value, root, hops + 1)
  }
  if (Array.isArray(value)) {
    const items = resolved["items"]
    if (!isObject(items)) return value
    let changed = false
    const restored = value.map((item) => {
      const out = restore(items, item, root, hops + 1)
      if (out !== item) changed = true
      return out
    })
    return changed ? restored : value
  }
  const properties = resolved["properties"]
  if (!isObject(properties)) return value
  const required = new Set(Array.isArray(resolved["required"]) ? resolved["required"] : [])
  const entries = Object.entries(value as Record<string, unknown>)
  let changed = false
  const kept: Array<readonly [string, unknown]> = []
  for (const [key, member] of entries) {
    // Own members only: a model's "constructor" key must not pick up Object.prototype.constructor as its schema.
    const propertySchema = ownValue(properties, key)
    if (member === null && !required.has(key) && propertySchema !== undefined && !acceptsNull(propertySchema, root)) {
      changed = true
      continue
    }
    const out = restore(propertySchema, member, root, hops + 1)
    if (out !== member) changed = true
    kept.push([key, out])
  }
  // Nothing removed anywhere below: the model's own object, so the caller knows its text still spells it.
  if (!changed) return value
  // Shaped as `JSON.parse` shapes objects: a model-sent "__proto__" key is an own data property, never the
  // prototype (and the closed schema refuses it).
  const out: Record<string, unknown> = {}
  for (const [key, member] of kept) {
    if (key === "__proto__") Object.defineProperty(out, key, { value: member, enumerable: true, writable: true, configurable: true })
    else out[key] = member
  }
  return out
}

/** Bounds for `restoreStrictArguments`. */
export interface RestoreOptions {
  /** Deepest nesting of arguments accepted; deeper throws `JsonTooDeepError`. Default `DEFAULT_MAX_JSON_DEPTH` (64). */
  readonly maxDepth?: number
}

/**
 * For OpenAI strict tools: turns the model's `null` for a property that the original schema marks optional (and
 * does not itself allow to be null) back into an absent property, at every depth. `schema` is the original,
 * non-strict schema. Other values are returned unchanged, and a value with no such `null` anywhere is returned
 * as the same object (so a caller can tell its text still spells it).
 *
 * The value comes from the model, so its depth is checked first (iteratively): what comes back can be
 * re-serialised with `JSON.stringify` without overflowing the stack.
 *
 * @throws JsonTooDeepError (`arguments nested deeper than 64 levels`) when the value nests deeper than
 *   `options.maxDepth`; check the argument text with `jsonTextDepth` first to report it as an invalid argument.
 */
export const restoreStrictArguments = (schema: JsonSchema, value: unknown, options?: RestoreOptions): unknown => {
  assertDepth(value, options?.maxDepth ?? DEFAULT_MAX_JSON_DEPTH, "arguments")
  return restore(schema, value, schema, 0)
}
