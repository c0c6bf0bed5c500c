import type { DecodeResult } from "../argument-codec.ts"
import type { JsonSchema } from "../json-schema.ts"

/**
 * What each schema library contributes to a codec: the JSON Schema it produces (before normalisation) and, when
 * the library can do more than JSON Schema says (transforms, defaults, custom checks), the decode step that runs
 * after the value already matched the normalised schema.
 */
export interface SchemaSource<A> {
  readonly jsonSchema: JsonSchema
  readonly refine: ((input: unknown) => DecodeResult<A> | Promise<DecodeResult<A>>) | undefined
}

/** Converts a Standard-Schema-style path (keys or `{ key }` segments) to an issue path. */
export const issuePath = (
  path: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }> | undefined
): Array<string | number> =>
  (path ?? []).map((seg) => {
    const key = typeof seg === "object" ? seg.key : seg
    return typeof key === "number" ? key : String(key)
  })

/**
 * The property a JSON Schema location is about, as a user writes it: `["properties", "outer", "properties",
 * "when"]` is `outer.when`, an array's items are `list[]`; combinators and other keywords add nothing.
 */
export const propertyPathOf = (schemaPath: ReadonlyArray<string | number>): string => {
  let out = ""
  for (let at = 0; at < schemaPath.length; at++) {
    const seg = schemaPath[at]
    if ((seg === "properties" || seg === "patternProperties") && at + 1 < schemaPath.length) {
      const name = String(schemaPath[++at])
      out = out === "" ? name : `${out}.${name}`
    } else if (seg === "items" || seg === "additionalItems") out += "[]"
    else if (seg === "prefixItems" && at + 1 < schemaPath.length) out += `[${String(schemaPath[++at])}]`
    else if (seg === "additionalProperties") out += out === "" ? "*" : ".*"
  }
  return out
}
