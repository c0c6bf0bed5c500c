import type { JsonSchema } from "../json-schema.ts"

declare const argumentType: unique symbol

/** A raw JSON Schema carrying, at the type level only, the TypeScript type of the value it describes. */
export type TypedJsonSchema<A> = JsonSchema & { readonly [argumentType]?: A }

/**
 * Gives a hand-written JSON Schema a TypeScript type. Nothing is checked at compile time: keeping `A` and the
 * schema in step is the author's job, while the decoder still enforces the schema at run time.
 *
 * @example
 * const args = jsonSchema<{ city: string }>({
 *   type: "object", properties: { city: { type: "string" } }, required: ["city"]
 * })
 */
export const jsonSchema = <A>(schema: JsonSchema): TypedJsonSchema<A> => schema

/** A plain object that is not any schema library's value: read as raw JSON Schema. */
export const isRawJsonSchema = (u: unknown): u is JsonSchema => {
  if (typeof u !== "object" || u === null || Array.isArray(u)) return false
  const proto: unknown = Object.getPrototypeOf(u)
  return (proto === Object.prototype || proto === null) && !("~standard" in u)
}
