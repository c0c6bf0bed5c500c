import { Schema, SchemaRepresentation } from "effect"
import type { JsonSchema } from "../json-schema.ts"
import { UnsupportedSchemaError } from "../normalize.ts"
import { patternProblem } from "./pattern.ts"

type CheckCompiler = SchemaRepresentation.ToJsonSchema.Check
type CheckInput = SchemaRepresentation.ToJsonSchema.CheckInput
type CheckOutput = ReturnType<CheckCompiler>

interface FilterNode {
  readonly _tag: "Filter"
  readonly representation?: { readonly id: string; readonly payload: unknown } | undefined
  readonly annotations?: { readonly toJsonSchema?: CheckCompiler | undefined } | undefined
}

const isFilter = (value: object): value is FilterNode => (value as { _tag?: unknown })._tag === "Filter"

const count = (payload: unknown, key: string): number | undefined => {
  const v = typeof payload === "object" && payload !== null ? (payload as Record<string, unknown>)[key] : undefined
  return typeof v === "number" ? v : undefined
}

/**
 * The exact keywords of Effect's length checks. Effect 4.1 shows a string length minimum of N as
 * `minLength: ceil(N / 2)` (its "safe" bound for a string of surrogate pairs), so `isMinLength(2)` reaches the
 * model as "at least 1" while the decoder refuses one character. The model must be told the author's bound.
 * JSON Schema counts code points where Effect counts UTF-16 units; the two agree on every string without
 * characters beyond U+FFFF, and a minimum in code points is never looser than the same minimum in units, so the
 * decoder (which checks both) accepts exactly what `minLength` says. Arrays are already exact and kept.
 */
const lengthKeywords = (id: string, payload: unknown, type: CheckInput["type"]): JsonSchema | undefined => {
  if (type !== "string") return undefined
  switch (id) {
    case "effect/schema/isMinLength": {
      const min = count(payload, "minLength")
      return min === undefined ? undefined : { minLength: min }
    }
    case "effect/schema/isMaxLength": {
      const max = count(payload, "maxLength")
      return max === undefined ? undefined : { maxLength: max }
    }
    case "effect/schema/isBetweenLength": {
      const min = count(payload, "minimum")
      const max = count(payload, "maximum")
      return min === undefined || max === undefined ? undefined : { minLength: min, maxLength: max }
    }
    default:
      return undefined
  }
}

/**
 * Effect omits every `Schema.isPattern` whose RegExp lacks the `u` flag (`[{}, true]`: "any string"), so the
 * model would be told nothing about a pattern the decoder enforces. A pattern that means the same as a JSON
 * Schema `pattern` is shown; any other is reported by `patternProblem` and the schema refused.
 */
const patternKeywords = (payload: unknown, refuse: (why: string) => void): CheckOutput => {
  const p = payload as { readonly source?: unknown; readonly flags?: unknown }
  const source = typeof p.source === "string" ? p.source : ""
  const flags = typeof p.flags === "string" ? p.flags : ""
  const problem = patternProblem(source, flags)
  if (problem !== undefined) {
    refuse(`Schema.isPattern(/${source}/${flags}): ${problem}`)
    return [{}, true]
  }
  return { pattern: flags.includes("y") ? `^(?:${source})` : source }
}

const describeCheck = (id: string, payload: unknown): string => {
  const name = id.slice("effect/schema/".length)
  return payload === null || payload === undefined ? `Schema.${name}()` : `Schema.${name}(${JSON.stringify(payload)})`
}

/**
 * A copy of the filter whose JSON Schema compiler is exact. Built-in checks (those Effect identifies as
 * `effect/schema/…`) that Effect can only approximate are reported through `refuse`: a looser schema shown to
 * the model than the decoder enforces is the mismatch this module exists to prevent. A user's own filter
 * without a JSON Schema form stays a library-only refinement, as decision 0002 allows.
 */
const exactFilter = (filter: FilterNode, refuse: (why: string) => void): FilterNode => {
  const id = filter.representation?.id
  const original = filter.annotations?.toJsonSchema
  if (id === undefined || !id.startsWith("effect/schema/") || original === undefined) return filter
  const payload = filter.representation?.payload
  const toJsonSchema: CheckCompiler = (input) => {
    if (id === "effect/schema/isPattern") return patternKeywords(payload, refuse)
    const exact = lengthKeywords(id, payload, input.type)
    if (exact !== undefined) return exact
    const out = original(input)
    if (Array.isArray(out)) refuse(`${describeCheck(id, payload)} has no exact JSON Schema form here`)
    return out
  }
  return { ...filter, annotations: { ...filter.annotations, toJsonSchema } }
}

/**
 * Copies the representation document with every filter made exact. The document is plain data (shared
 * sub-documents are copied once, by identity), so a structural copy is all it takes.
 */
const rewrite = (value: unknown, refuse: (why: string) => void, seen: Map<object, unknown>): unknown => {
  if (typeof value !== "object" || value === null) return value
  const done = seen.get(value)
  if (done !== undefined) return done
  if (Array.isArray(value)) {
    const out: Array<unknown> = []
    seen.set(value, out)
    for (const item of value) out.push(rewrite(item, refuse, seen))
    return out
  }
  if (Object.getPrototypeOf(value) !== Object.prototype) return value
  if (isFilter(value)) {
    const out = exactFilter(value, refuse)
    seen.set(value, out)
    return out
  }
  const out: Record<string, unknown> = {}
  seen.set(value, out)
  for (const [key, v] of Object.entries(value)) {
    Object.defineProperty(out, key, { value: rewrite(v, refuse, seen), enumerable: true, writable: true, configurable: true })
  }
  return out
}

/**
 * The draft 2020-12 JSON Schema of an Effect Schema's canonical JSON codec (as `Schema.toJsonSchemaDocument`
 * makes it, with closed structs), except that every built-in check is shown exactly or the schema is refused.
 *
 * @throws UnsupportedSchemaError naming each built-in check the JSON Schema cannot state exactly.
 */
export const effectJsonSchemaDocument = (schema: Schema.Constraint): JsonSchema => {
  const problems: Array<string> = []
  const refuse = (why: string): void => {
    if (!problems.includes(why)) problems.push(why)
  }
  const document = SchemaRepresentation.toRepresentation(Schema.toCodecJson(schema).ast)
  const exact = rewrite(document, refuse, new Map()) as SchemaRepresentation.Document
  const out = SchemaRepresentation.toJsonSchemaDocument(exact, { onExcessProperty: "error" })
  if (problems.length > 0) {
    throw new UnsupportedSchemaError({
      message: `the model would be shown a looser schema than the decoder enforces: ${problems.join("; ")}`
    })
  }
  return { ...(out.schema as JsonSchema), $defs: out.definitions as JsonSchema }
}
