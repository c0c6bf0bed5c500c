/**
 * Deterministic JSON text. Two request bodies built from equal values are byte-identical however their objects
 * were constructed, which is what provider prompt caches key on.
 *
 * Two entry points because a generic walker cannot tell the `properties` keyword of a JSON Schema from a data
 * object that merely has a key named `properties`:
 * - `canonicalJson` sorts every object's keys (code-unit order).
 * - `canonicalSchemaJson` sorts keys too, except the keys of a `properties` map, which keep the author's order
 *   because models read properties in that order and fill them in that order.
 *
 * Speed: a value already in canonical order goes straight to the native `JSON.stringify` after a read-only check
 * (about 1.3x a bare `JSON.stringify` on Node 20); any other value is copied in canonical order first and then
 * stringified (about 2-3x), which measured faster than writing the text in JavaScript.
 */

import { DEFAULT_MAX_DOCUMENT_DEPTH, JsonTooDeepError, tooDeepMessage } from "./json-depth.ts"
import { setOwn } from "./own-property.ts"

/** Bounds for the canonical serialisers. */
export interface CanonicalJsonOptions {
  /**
   * Deepest nesting of arrays and objects written; deeper (or cyclic) input throws `JsonTooDeepError` before
   * anything is built. Default `DEFAULT_MAX_DOCUMENT_DEPTH` (256).
   */
  readonly maxDepth?: number
}

const tooDeep = (limit: number): JsonTooDeepError => new JsonTooDeepError({ limit, message: tooDeepMessage("value", limit) })

const compareCodeUnits = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0)

/** Keys in code-unit order; skips the sort when they already are (the common case for canonical inputs). */
const sortedKeys = (object: object): Array<string> => {
  const keys = Object.keys(object)
  for (let i = 1; i < keys.length; i++) {
    if ((keys[i - 1] as string) > (keys[i] as string)) return keys.sort(compareCodeUnits)
  }
  return keys
}

/** How a node is read: as plain data, as a JSON Schema, or as a map from names to schemas. */
const DATA = 0
const SCHEMA = 1
const SCHEMA_MAP = 2
type Mode = typeof DATA | typeof SCHEMA | typeof SCHEMA_MAP

/** Schema keywords whose value is a schema or an array of schemas; other keywords (enum, const, default…) are data. */
const SUBSCHEMA = new Set([
  "items",
  "additionalItems",
  "unevaluatedItems",
  "contains",
  "additionalProperties",
  "unevaluatedProperties",
  "propertyNames",
  "not",
  "if",
  "then",
  "else",
  "anyOf",
  "oneOf",
  "allOf",
  "prefixItems"
])
/** Schema keywords whose value maps names to schemas; only `properties` keeps its order. */
const SUBSCHEMA_MAP = new Set(["properties", "$defs", "definitions", "patternProperties", "dependentSchemas"])

const childMode = (parent: Mode, key: string): Mode => {
  if (parent === DATA) return DATA
  if (parent === SCHEMA_MAP) return SCHEMA
  if (SUBSCHEMA.has(key)) return SCHEMA
  if (SUBSCHEMA_MAP.has(key)) return SCHEMA_MAP
  return DATA
}

/**
 * Both walkers recurse, so each carries the depth of the value it is at (1 for the root container) and refuses
 * to go past `limit`: a hostile value becomes `JsonTooDeepError`, never a stack overflow.
 */
const ordered = (value: unknown, mode: Mode, keepOrder: boolean, depth: number, limit: number): unknown => {
  if (typeof value !== "object" || value === null) return value
  if (depth > limit) throw tooDeep(limit)
  if (Array.isArray(value)) {
    const itemMode = mode === SCHEMA ? SCHEMA : DATA
    const out = new Array<unknown>(value.length)
    for (let i = 0; i < value.length; i++) out[i] = ordered(value[i], itemMode, false, depth + 1, limit)
    return out
  }
  const toJson = (value as { toJSON?: unknown }).toJSON
  // A hop through toJSON counts as a level: `toJSON() { return this }` must end too.
  if (typeof toJson === "function") return ordered((toJson as () => unknown).call(value), mode, keepOrder, depth + 1, limit)
  const record = value as Record<string, unknown>
  const out: Record<string, unknown> = {}
  for (const key of keepOrder ? Object.keys(record) : sortedKeys(record)) {
    if (mode === SCHEMA && key === "$schema") continue
    // A data key "__proto__" must stay a key: plain assignment would set the copy's prototype instead.
    setOwn(out, key, ordered(record[key], childMode(mode, key), mode === SCHEMA && key === "properties", depth + 1, limit))
  }
  return out
}

/** Whether `ordered` would rebuild `value` identically, so the original can be stringified as it is. */
const isOrdered = (value: unknown, mode: Mode, keepOrder: boolean, depth: number, limit: number): boolean => {
  if (typeof value !== "object" || value === null) return true
  if (depth > limit) throw tooDeep(limit)
  if (Array.isArray(value)) {
    const itemMode = mode === SCHEMA ? SCHEMA : DATA
    for (let i = 0; i < value.length; i++) if (!isOrdered(value[i], itemMode, false, depth + 1, limit)) return false
    return true
  }
  if (typeof (value as { toJSON?: unknown }).toJSON === "function") return false
  const record = value as Record<string, unknown>
  const keys = Object.keys(record)
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i] as string
    if (!keepOrder && i > 0 && (keys[i - 1] as string) > key) return false
    if (mode === SCHEMA && key === "$schema") return false
    if (!isOrdered(record[key], childMode(mode, key), mode === SCHEMA && key === "properties", depth + 1, limit)) return false
  }
  return true
}

/**
 * Once `isOrdered` (or `ordered`) has walked the value within `limit`, the native stringify cannot overflow either.
 * The one exception is a `toJSON` reached on the fast path — impossible, since `isOrdered` refuses those.
 */
const serialise = (value: unknown, mode: Mode, limit: number): string =>
  JSON.stringify(isOrdered(value, mode, false, 1, limit) ? value : ordered(value, mode, false, 1, limit)) ?? "null"

/**
 * Canonical JSON text of a data value: object keys sorted by code unit; otherwise as `JSON.stringify`.
 *
 * @throws JsonTooDeepError when the value nests deeper than `options.maxDepth` (default 256) or is cyclic.
 */
export const canonicalJson = (value: unknown, options?: CanonicalJsonOptions): string =>
  serialise(value, DATA, options?.maxDepth ?? DEFAULT_MAX_DOCUMENT_DEPTH)

/** Schemas known to be deep-frozen and in canonical order: serialised by a plain `JSON.stringify`. */
const canonical = new WeakSet<object>()

const deepFreeze = (value: unknown): void => {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    for (const child of Object.values(value)) deepFreeze(child)
    Object.freeze(value)
  }
}

/**
 * A deep-frozen copy of a JSON Schema with its keys in canonical order (as `canonicalSchemaJson` writes them),
 * remembered as such. Done once per tool, at creation, so every later emission is a plain `JSON.stringify` of the
 * stored object — no reordering, no check.
 */
export const isCanonicalSchema = (schema: unknown): boolean =>
  typeof schema === "object" && schema !== null && canonical.has(schema)

/**
 * @throws JsonTooDeepError when the schema nests deeper than `DEFAULT_MAX_DOCUMENT_DEPTH` (checked before the copy).
 */
export const canonicalSchema = <A>(schema: A): A => {
  if (isCanonicalSchema(schema)) return schema
  const limit = DEFAULT_MAX_DOCUMENT_DEPTH
  return remember((isOrdered(schema, SCHEMA, false, 1, limit) ? structuredClone(schema) : ordered(schema, SCHEMA, false, 1, limit)) as A)
}

/**
 * `canonicalSchema` for a schema the caller just built and gives away (no one else holds it): already in
 * canonical order, it is frozen and remembered in place instead of copied.
 */
export const adoptCanonicalSchema = <A>(owned: A): A => {
  if (isCanonicalSchema(owned)) return owned
  const limit = DEFAULT_MAX_DOCUMENT_DEPTH
  return remember(isOrdered(owned, SCHEMA, false, 1, limit) ? owned : (ordered(owned, SCHEMA, false, 1, limit) as A))
}

const remember = <A>(schema: A): A => {
  deepFreeze(schema)
  if (typeof schema === "object" && schema !== null) canonical.add(schema)
  return schema
}

/**
 * Canonical JSON text of a JSON Schema: keys sorted by code unit except the keys of `properties` maps (author's
 * order kept); `$schema` dropped at every level. `enum`, `const`, `default` and `examples` are data.
 *
 * @throws JsonTooDeepError when the schema nests deeper than `options.maxDepth` (default 256) or is cyclic.
 */
export const canonicalSchemaJson = (schema: unknown, options?: CanonicalJsonOptions): string =>
  serialise(schema, SCHEMA, options?.maxDepth ?? DEFAULT_MAX_DOCUMENT_DEPTH)

/**
 * Whether every object and array in `value` is frozen, so nothing derived from it (canonical copies, strict
 * rewrites, serialised text) can go stale. Iterative; stops at the first unfrozen node, which for a caller's
 * plain schema is the root.
 */
export const isDeepFrozen = (value: unknown): boolean => {
  if (isCanonicalSchema(value)) return true
  const stack: Array<unknown> = [value]
  let visited = 0
  while (stack.length > 0) {
    const node = stack.pop()
    if (typeof node !== "object" || node === null || isCanonicalSchema(node)) continue
    if (!Object.isFrozen(node) || ++visited > 1_000_000) return false
    for (const child of Object.values(node)) stack.push(child)
  }
  return true
}
