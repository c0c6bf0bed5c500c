import type { JsonObject, JsonSchema, JsonValue } from "../json-schema.ts"
import { clip, quote } from "../quote.ts"
import { compileLinear } from "./engine.ts"

/** A pattern of a schema the linear-time engine cannot run: where it is, and why. */
export interface PatternProblem {
  /** JSON Pointer to the `pattern` keyword, or to the `patternProperties` entry. */
  readonly path: string
  /** The pattern (quoted, clipped), where it is, and why it cannot be used. */
  readonly message: string
}

/** Keywords whose values are data, not schemas: a `pattern` key inside them is a value, never compiled. */
const DATA_KEYWORDS = new Set(["const", "enum", "default", "examples"])

/** Keywords whose value maps names to subschemas: there `default` or `enum` is a property's name. */
const MAP_KEYWORDS = new Set(["properties", "patternProperties", "dependentSchemas", "$defs", "definitions"])

const pointerSegment = (key: string): string => key.replaceAll("~", "~0").replaceAll("/", "~1")

/**
 * The first regex in `schema` that the linear-time engine cannot run: every `pattern` string and every
 * `patternProperties` key, wherever it stands outside data keywords (an unknown keyword's subschemas too, since
 * a `$ref` can point into them) — or undefined. Walks without recursion; the schema's size is already bounded by
 * `normalizeJsonSchema`.
 */
export const untrustedPatternProblem = (schema: JsonSchema): PatternProblem | undefined => {
  // Each entry: a value, its pointer, and whether it is a map of names to subschemas.
  const stack: Array<readonly [JsonValue, string, boolean]> = [[schema as JsonValue, "", false]]
  const checked = new Set<string>()
  const check = (source: string, path: string): PatternProblem | undefined => {
    if (checked.has(source)) return undefined
    const linear = compileLinear(source)
    if (linear.ok) {
      checked.add(source)
      return undefined
    }
    return { path, message: `pattern ${quote(source, 120)} at ${clip(path, 200)} cannot be used: ${linear.reason}` }
  }
  while (stack.length > 0) {
    const [node, path, isMap] = stack.pop() as readonly [JsonValue, string, boolean]
    if (typeof node !== "object" || node === null) continue
    if (Array.isArray(node)) {
      for (let i = node.length - 1; i >= 0; i--) stack.push([node[i] as JsonValue, `${path}/${i}`, false])
      continue
    }
    const object = node as JsonObject
    const pattern = isMap ? undefined : object["pattern"]
    if (typeof pattern === "string") {
      const problem = check(pattern, `${path}/pattern`)
      if (problem !== undefined) return problem
    }
    const patternProperties = isMap ? undefined : object["patternProperties"]
    if (typeof patternProperties === "object" && patternProperties !== null && !Array.isArray(patternProperties)) {
      for (const key of Object.keys(patternProperties)) {
        const problem = check(key, `${path}/patternProperties/${pointerSegment(key)}`)
        if (problem !== undefined) return problem
      }
    }
    const entries = Object.entries(object)
    for (let i = entries.length - 1; i >= 0; i--) {
      const [key, value] = entries[i] as [string, JsonValue]
      if (isMap || !DATA_KEYWORDS.has(key)) stack.push([value, `${path}/${pointerSegment(key)}`, !isMap && MAP_KEYWORDS.has(key)])
    }
  }
  return undefined
}
