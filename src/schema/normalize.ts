import { Data } from "effect"
import type { JsonObject, JsonSchema, JsonValue } from "./json-schema.ts"

/** A `$ref` points back into itself: the schema cannot be inlined, and no provider dialect accepts a cycle. */
export class RecursiveSchemaError extends Data.TaggedError("RecursiveSchemaError")<{
  readonly ref: string
  readonly message: string
}> {}

/** The schema cannot describe tool arguments: the root is not an object, or a `$ref` does not resolve. */
export class UnsupportedSchemaError extends Data.TaggedError("UnsupportedSchemaError")<{
  readonly message: string
}> {}

type Node = { [key: string]: JsonValue }

const isObject = (v: JsonValue | undefined): v is JsonObject =>
  typeof v === "object" && v !== null && !Array.isArray(v)

/** Keywords that only address or identify a document; the inlined result needs none of them. */
const DROPPED = new Set(["$schema", "$id", "$defs", "definitions", "$anchor", "$comment"])

/** Keywords whose value is one subschema. */
const SINGLE = new Set([
  "items", "additionalProperties", "not", "if", "then", "else", "contains", "propertyNames",
  "unevaluatedProperties", "unevaluatedItems", "additionalItems"
])
/** Keywords whose value is an array of subschemas. */
const LIST = new Set(["anyOf", "oneOf", "allOf", "prefixItems"])
/** Keywords whose value maps names to subschemas (order kept: `properties` is the author's order). */
const MAP = new Set(["properties", "patternProperties", "dependentSchemas"])

const NON_FINITE = new Set(["Infinity", "-Infinity", "NaN"])

const resolvePointer = (root: JsonObject, ref: string): JsonValue => {
  if (!ref.startsWith("#")) {
    throw new UnsupportedSchemaError({ message: `external $ref ${JSON.stringify(ref)} is not supported` })
  }
  let at: JsonValue | undefined = root
  for (const raw of ref.slice(1).split("/").slice(1)) {
    let key: string
    try {
      key = decodeURIComponent(raw).replaceAll("~1", "/").replaceAll("~0", "~")
    } catch {
      throw new UnsupportedSchemaError({ message: `$ref ${JSON.stringify(ref)} is not a valid JSON Pointer` })
    }
    if (Array.isArray(at)) at = at[Number(key)]
    else if (isObject(at)) at = Object.hasOwn(at, key) ? at[key] : undefined
    else at = undefined
    if (at === undefined) {
      throw new UnsupportedSchemaError({ message: `$ref ${JSON.stringify(ref)} does not resolve` })
    }
  }
  return at
}

/**
 * Effect's canonical JSON codec encodes non-finite numbers as the strings "Infinity", "-Infinity" and "NaN" and
 * advertises them next to `number`. Decoded tool arguments are finite numbers only, so that branch goes.
 */
const isNonFiniteStringBranch = (v: JsonValue): boolean =>
  isObject(v) &&
  v["type"] === "string" &&
  Array.isArray(v["enum"]) &&
  v["enum"].length > 0 &&
  v["enum"].every((e) => typeof e === "string" && NON_FINITE.has(e))

const isNumericBranch = (v: JsonValue): boolean =>
  isObject(v) && (v["type"] === "number" || v["type"] === "integer")

const cleanAlternatives = (branches: ReadonlyArray<JsonValue>): ReadonlyArray<JsonValue> => {
  const finite = branches.some(isNumericBranch) ? branches.filter((b) => !isNonFiniteStringBranch(b)) : branches
  const seen = new Set<string>()
  return finite.filter((b) => {
    const key = JSON.stringify(b)
    if (seen.has(key)) return false
    seen.add(key)
    return true
  })
}

/** `{anyOf: [X], description}` says the same as `{...X, description}` when the two share no keyword. */
const collapseSingle = (node: Node, keyword: "anyOf" | "oneOf"): Node => {
  const branches = node[keyword]
  if (!Array.isArray(branches) || branches.length !== 1 || !isObject(branches[0])) return node
  const only = branches[0]
  const rest: Node = {}
  for (const [k, v] of Object.entries(node)) if (k !== keyword) rest[k] = v
  if (Object.keys(only).some((k) => Object.hasOwn(rest, k))) return node
  return { ...only, ...rest }
}

/**
 * Objects that list their properties are closed: an argument the tool does not declare is refused, never
 * silently dropped. A non-empty `additionalProperties` schema is a deliberate typed rest and is kept.
 */
const close = (node: Node): Node => {
  const declares = "properties" in node || "patternProperties" in node
  if (!declares) return node
  const extra = node["additionalProperties"]
  if (extra === false || (isObject(extra) && Object.keys(extra).length > 0)) return node
  return { ...node, additionalProperties: false }
}

interface Walk {
  readonly root: JsonObject
  readonly stack: ReadonlyArray<string>
}

const walk = (value: JsonValue, ctx: Walk): JsonValue => {
  if (!isObject(value)) return value
  let node: Node = {}
  const ref = value["$ref"]
  if (typeof ref === "string") {
    if (ctx.stack.includes(ref)) {
      throw new RecursiveSchemaError({
        ref,
        message: `recursive $ref ${JSON.stringify(ref)}: tool argument schemas must be finite trees`
      })
    }
    const target = walk(resolvePointer(ctx.root, ref), { root: ctx.root, stack: [...ctx.stack, ref] })
    if (isObject(target)) node = { ...target }
    else if (target === false) node = { not: {} }
  }
  for (const [key, v] of Object.entries(value)) {
    if (key === "$ref" || DROPPED.has(key)) continue
    if (SINGLE.has(key)) node[key] = walk(v, ctx)
    else if (LIST.has(key) && Array.isArray(v)) {
      const walked = v.map((b: JsonValue) => walk(b, ctx))
      node[key] = key === "anyOf" || key === "oneOf" ? cleanAlternatives(walked) : walked
    } else if (MAP.has(key) && isObject(v)) {
      const out: Node = {}
      for (const [name, sub] of Object.entries(v)) out[name] = walk(sub, ctx)
      node[key] = out
    } else node[key] = v
  }
  node = collapseSingle(collapseSingle(node, "anyOf"), "oneOf")
  return close(node)
}

const deepFreeze = <A extends JsonValue>(value: A): A => {
  if (typeof value === "object" && value !== null) {
    for (const v of Object.values(value)) deepFreeze(v as JsonValue)
    Object.freeze(value)
  }
  return value
}

/**
 * The one JSON Schema a tool shows every provider: no `$schema`/`$id`, every non-recursive `$ref` inlined,
 * non-finite number encodings removed, duplicate alternatives merged, and every object with declared properties
 * closed (`additionalProperties: false`). A root without properties becomes the no-argument schema, which accepts
 * exactly `{}`. The author's property order is kept. The result is deeply frozen.
 *
 * @throws RecursiveSchemaError when a `$ref` cycle exists.
 * @throws UnsupportedSchemaError when the root is not an object schema or a `$ref` does not resolve.
 */
export const normalizeJsonSchema = (schema: JsonSchema): JsonSchema => {
  const walked = walk(schema, { root: schema, stack: [] })
  if (!isObject(walked)) throw new UnsupportedSchemaError({ message: "a tool's argument schema must be an object schema" })
  const type = walked["type"] ?? ("properties" in walked ? "object" : undefined)
  if (type !== "object" && !(Object.keys(walked).length === 0)) {
    throw new UnsupportedSchemaError({
      message: `a tool's arguments must be a JSON object, but the schema's root has type ${JSON.stringify(type ?? null)}`
    })
  }
  const root: Node = { type: "object", ...walked }
  if (!("properties" in root) && !("patternProperties" in root) && !("additionalProperties" in root)) {
    root["properties"] = {}
  }
  return deepFreeze(close(root))
}
