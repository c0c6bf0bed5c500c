/**
 * Deterministic JSON text. Two request bodies built from equal values are byte-identical however their objects
 * were constructed, which is what provider prompt caches key on.
 *
 * Two entry points because a generic walker cannot tell the `properties` keyword of a JSON Schema from a data
 * object that merely has a key named `properties`:
 * - `canonicalJson` sorts every object's keys (code-unit order).
 * - `canonicalSchemaJson` sorts keys too, except the keys of a `properties` map, which keep the author's order
 *   because models read properties in that order and fill them in that order.
 */

/** Already-serialised JSON text spliced verbatim, e.g. a cached `toolsFragment` inside a request body. */
export class RawJson {
  constructor(readonly text: string) {}
}

const compareCodeUnits = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0)

/** Keys in code-unit order; skips the sort when they already are (the common case for canonical inputs). */
const sortedKeys = (object: object): Array<string> => {
  const keys = Object.keys(object)
  for (let i = 1; i < keys.length; i++) {
    if ((keys[i - 1] as string) > (keys[i] as string)) return keys.sort(compareCodeUnits)
  }
  return keys
}

const scalar = (value: unknown): string | undefined => {
  switch (typeof value) {
    case "string":
      return JSON.stringify(value)
    case "number":
      // JSON has no NaN/Infinity; JSON.stringify writes null for them, and so do we.
      return Number.isFinite(value) ? String(value) : "null"
    case "boolean":
      return value ? "true" : "false"
    case "bigint":
      throw new TypeError("canonicalJson: BigInt has no JSON form")
    case "undefined":
    case "function":
    case "symbol":
      return undefined
    default:
      return value === null ? "null" : undefined
  }
}

/** How the children of a node are read: as plain data, as a JSON Schema, or as a `properties` map. */
type Mode = 0 | 1 | 2
const DATA: Mode = 0
const SCHEMA: Mode = 1
const PROPERTY_MAP: Mode = 2

/** Schema keywords whose value is a schema, a list of schemas or a map of schemas; everything else is data. */
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
const SUBSCHEMA_MAP = new Set(["$defs", "definitions", "patternProperties", "dependentSchemas"])

const childMode = (parent: Mode, key: string): Mode => {
  if (parent === DATA) return DATA
  if (parent === PROPERTY_MAP) return SCHEMA
  if (key === "properties") return PROPERTY_MAP
  if (SUBSCHEMA.has(key)) return SCHEMA
  // A map of schemas: its keys are sorted (no order is meaningful) and its values are schemas.
  if (SUBSCHEMA_MAP.has(key)) return PROPERTY_MAP
  return DATA
}

const write = (value: unknown, mode: Mode, keyOrderKept: boolean): string | undefined => {
  if (typeof value !== "object" || value === null) return scalar(value)
  if (value instanceof RawJson) return value.text
  if (Array.isArray(value)) {
    let out = "["
    for (let i = 0; i < value.length; i++) {
      if (i > 0) out += ","
      // Array entries of a schema keyword (anyOf, prefixItems…) are schemas; of a data value, data.
      out += write(value[i], mode === PROPERTY_MAP ? DATA : mode, false) ?? "null"
    }
    return out + "]"
  }
  const maybeJson = (value as { toJSON?: unknown }).toJSON
  if (typeof maybeJson === "function") return write((maybeJson as () => unknown).call(value), mode, keyOrderKept)
  const keys = keyOrderKept ? Object.keys(value) : sortedKeys(value)
  const record = value as Record<string, unknown>
  let out = "{"
  let first = true
  for (const key of keys) {
    if (mode === SCHEMA && key === "$schema") continue
    const next = childMode(mode, key)
    const text = write(record[key], next, mode === SCHEMA && key === "properties")
    if (text === undefined) continue
    out += first ? JSON.stringify(key) + ":" + text : "," + JSON.stringify(key) + ":" + text
    first = false
  }
  return out + "}"
}

/** Canonical JSON text of a data value: object keys sorted by code unit, `undefined` members dropped. */
export const canonicalJson = (value: unknown): string => write(value, DATA, false) ?? "null"

/**
 * Canonical JSON text of a JSON Schema: keys sorted by code unit except the keys of `properties` maps (author's
 * order kept); `$schema` dropped at every level. `enum`, `const`, `default` and `examples` are data.
 */
export const canonicalSchemaJson = (schema: unknown): string => write(schema, SCHEMA, false) ?? "null"
