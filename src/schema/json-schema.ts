/** A JSON value as it appears on the wire. */
export type JsonValue =
  | null
  | boolean
  | number
  | string
  | ReadonlyArray<JsonValue>
  | { readonly [key: string]: JsonValue }

/** A JSON object: string keys, `JsonValue` values. */
export type JsonObject = { readonly [key: string]: JsonValue }

/**
 * A JSON Schema document (draft 2020-12 vocabulary). Kept structural on purpose: schemas come from four
 * producers (Effect Schema, zod 4, zod 3, hand-written) and are normalised by `normalizeJsonSchema` before a
 * provider dialect sees them.
 */
export type JsonSchema = JsonObject
