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
