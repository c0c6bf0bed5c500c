import { TaggedError } from "../error/tagged-error.ts"
import { DEFAULT_MAX_DOCUMENT_DEPTH, tooDeepMessage, valueDepth } from "./json-depth.ts"
import type { JsonObject, JsonSchema, JsonValue } from "./json-schema.ts"
import { setOwn } from "./own-property.ts"

/** A `$ref` points back into itself: the schema cannot be inlined, and no provider dialect accepts a cycle. */
export class RecursiveSchemaError extends TaggedError("RecursiveSchemaError")<{
  readonly ref: string
  readonly message: string
  /** The tool whose `parameters` it is, when it was raised for one (`defineTool`). */
  readonly tool?: string
}> {}

/**
 * The schema cannot describe tool arguments: the root is not an object, a `$ref` does not resolve, or a part has
 * no JSON form (`z.date()`). `path`: the property it is about (`"outer.when"`), when it is about one; `tool`: the
 * tool whose `parameters` it is, when it was raised for one (`defineTool`).
 */
export class UnsupportedSchemaError extends TaggedError("UnsupportedSchemaError")<{
  readonly message: string
  readonly path?: string
  readonly tool?: string
}> {}

/** Why a root that is not an object schema cannot be a tool's arguments, in the schema's own terms. */
const rootProblem = (root: Node, type: unknown): string => {
  const start = "a tool's arguments must be a JSON object"
  for (const union of ["anyOf", "oneOf"] as const) {
    if (Array.isArray(root[union]) && type === undefined) {
      return `${start}, but the schema's root is a union (${union} of ${root[union].length} alternatives); make the root an object and put the union in one of its properties`
    }
  }
  if (type === undefined) return `${start}, but the schema's root declares no type and no properties`
  return `${start}, but the schema's root has type ${JSON.stringify(type)}`
}

/**
 * Default bound on the schema objects a normalised schema may contain once every `$ref` is inlined. Inlining is
 * exponential in the worst case (thirty definitions each referring twice to the next make 2^30 copies), and a
 * schema may come from a plugin over the network; real tool schemas have a few hundred nodes.
 */
export const DEFAULT_MAX_SCHEMA_NODES = 100_000

/** Bounds for `normalizeJsonSchema`; schemas can come from plugins, so each is enforced before anything is built. */
export interface NormalizeOptions {
  /** Deepest nesting of the schema document, as given and once inlined. Default `DEFAULT_MAX_DOCUMENT_DEPTH` (256). */
  readonly maxDepth?: number
  /** Most schema objects once `$ref`s are inlined. Default `DEFAULT_MAX_SCHEMA_NODES` (100,000). */
  readonly maxNodes?: number
}

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
  for (const [k, v] of Object.entries(node)) if (k !== keyword) setOwn(rest, k, v)
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
  /** Schema levels above this node in the result (inlined `$ref` targets included). */
  readonly depth: number
  readonly limits: { readonly maxDepth: number; readonly maxNodes: number }
  /** Schema objects built so far, shared by the whole walk. */
  readonly built: { count: number }
}

const deeper = (ctx: Walk, stack: ReadonlyArray<string> = ctx.stack): Walk => ({ ...ctx, stack, depth: ctx.depth + 1 })

const walk = (value: JsonValue, ctx: Walk): JsonValue => {
  if (!isObject(value)) return value
  // Counted as the result is built, so an exponential `$ref` expansion stops at the budget, not at the heap.
  if (++ctx.built.count > ctx.limits.maxNodes) {
    throw new UnsupportedSchemaError({
      message: `the schema has more than ${ctx.limits.maxNodes} subschemas once its $refs are inlined`
    })
  }
  if (ctx.depth > ctx.limits.maxDepth) {
    throw new UnsupportedSchemaError({ message: tooDeepMessage("the schema (with its $refs inlined) is", ctx.limits.maxDepth) })
  }
  const inner = deeper(ctx)
  let node: Node = {}
  const ref = value["$ref"]
  if (typeof ref === "string") {
    if (ctx.stack.includes(ref)) {
      throw new RecursiveSchemaError({
        ref,
        message: `recursive $ref ${JSON.stringify(ref)}: tool argument schemas must be finite trees`
      })
    }
    // A hop counts as a level: a chain of ten thousand $refs in a flat $defs would otherwise recurse unbounded.
    const target = walk(resolvePointer(ctx.root, ref), deeper(ctx, [...ctx.stack, ref]))
    if (isObject(target)) node = { ...target }
    else if (target === false) node = { not: {} }
  }
  for (const [key, v] of Object.entries(value)) {
    if (key === "$ref" || DROPPED.has(key)) continue
    // setOwn throughout: a property (or unknown keyword) named "__proto__" is a name, not a prototype.
    if (SINGLE.has(key)) setOwn(node, key, walk(v, inner))
    else if (LIST.has(key) && Array.isArray(v)) {
      const walked = v.map((b: JsonValue) => walk(b, inner))
      setOwn(node, key, key === "anyOf" || key === "oneOf" ? cleanAlternatives(walked) : walked)
    } else if (MAP.has(key) && isObject(v)) {
      const out: Node = {}
      for (const [name, sub] of Object.entries(v)) setOwn(out, name, walk(sub, inner))
      setOwn(node, key, out)
    } else setOwn(node, key, v)
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
 * Schemas may come from plugins over the network, so the input is bounded before anything is built: its
 * nesting (`options.maxDepth`, default 256 levels, checked iteratively) and the size of the inlined result
 * (`options.maxNodes`, default 100,000 subschemas).
 *
 * @throws RecursiveSchemaError when a `$ref` cycle exists.
 * @throws UnsupportedSchemaError when the root is not an object schema, a `$ref` does not resolve, or a bound is
 *   exceeded (`schema nested deeper than 256 levels`).
 */
export const normalizeJsonSchema = (schema: JsonSchema, options?: NormalizeOptions): JsonSchema => {
  const maxDepth = options?.maxDepth ?? DEFAULT_MAX_DOCUMENT_DEPTH
  const maxNodes = options?.maxNodes ?? DEFAULT_MAX_SCHEMA_NODES
  // Data inside the schema (`default`, `enum`, `const`) is copied by reference and walked later (freezing,
  // de-duplicating alternatives): the whole document is bounded first, without recursion.
  if (valueDepth(schema, maxDepth) > maxDepth) throw new UnsupportedSchemaError({ message: tooDeepMessage("schema", maxDepth) })
  const walked = walk(schema, { root: schema, stack: [], depth: 1, limits: { maxDepth, maxNodes }, built: { count: 0 } })
  if (!isObject(walked)) throw new UnsupportedSchemaError({ message: "a tool's argument schema must be an object schema" })
  const type = walked["type"] ?? ("properties" in walked ? "object" : undefined)
  if (type !== "object" && !(Object.keys(walked).length === 0)) throw new UnsupportedSchemaError({ message: rootProblem(walked, type) })
  const root: Node = { type: "object", ...walked }
  if (!("properties" in root) && !("patternProperties" in root) && !("additionalProperties" in root)) {
    root["properties"] = {}
  }
  const result = close(root)
  // Inlining can deepen the document past the bound even though every schema level was within it.
  if (valueDepth(result, maxDepth) > maxDepth) {
    throw new UnsupportedSchemaError({ message: tooDeepMessage("the schema (with its $refs inlined) is", maxDepth) })
  }
  return deepFreeze(result)
}
