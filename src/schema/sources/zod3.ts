import type { z } from "zod/v3"
import { ignoreOverride, parseStringDef, zodToJsonSchema, type Refs } from "zod-to-json-schema"
import type { DecodeResult } from "../argument-codec.ts"
import type { JsonObject, JsonSchema, JsonValue } from "../json-schema.ts"
import { UnsupportedSchemaError } from "../normalize.ts"
import { escapeForPattern, patternProblem } from "./pattern.ts"
import { refuseProtoKeysIn } from "./proto-keys.ts"
import { issuePath, type SchemaSource } from "./source.ts"

/** Any zod 3 schema (`zod/v3`), converted through zod-to-json-schema. */
export type Zod3ArgumentSchema = z.ZodTypeAny

/** A zod 3 schema: a `_def` and `safeParse`, and no `_zod` (which would make it zod 4). */
export const isZod3Schema = (u: unknown): u is Zod3ArgumentSchema =>
  typeof u === "object" &&
  u !== null &&
  !("_zod" in u) &&
  "_def" in u &&
  typeof (u as { safeParse?: unknown }).safeParse === "function"

interface StringCheck {
  readonly kind: string
  readonly value?: unknown
  readonly position?: unknown
  readonly regex?: RegExp
  readonly message?: string
}

/**
 * zod-to-json-schema escapes the literal of `startsWith`/`endsWith`/`includes` by putting a backslash before every
 * character outside its alphanumeric set — which omits `w` and `W`, so `startsWith("www")` becomes `^\w\w\w` (any
 * word characters), and `\-` or `\!` are not valid in a Unicode pattern (the decoder would throw on first use).
 * Each literal check is therefore restated as the equivalent RegExp check before the library sees it.
 */
const literalAsRegex = (check: StringCheck): StringCheck => {
  if (typeof check.value !== "string") return check
  const literal = escapeForPattern(check.value)
  const from = typeof check.position === "number" && check.position > 0 ? `^[\\s\\S]{${check.position}}[\\s\\S]*?` : ""
  switch (check.kind) {
    case "startsWith":
      return { kind: "regex", regex: new RegExp(`^${literal}`, "u"), message: check.message }
    case "endsWith":
      return { kind: "regex", regex: new RegExp(`${literal}$`, "u"), message: check.message }
    case "includes":
      return { kind: "regex", regex: new RegExp(`${from}${literal}`, "u"), message: check.message }
    default:
      return check
  }
}

/**
 * A user's `.regex()` is shown as a pattern; with `applyRegexFlags` the `i` flag is spelled out as character
 * classes, but zod-to-json-schema's `s` and `m` rewrites change the language (`[.\r\n]` is a literal dot), so
 * those are refused, as is any source that is not a valid Unicode pattern.
 */
const checkRegex = (check: StringCheck): void => {
  if (check.kind !== "regex" || check.regex === undefined) return
  const flags = check.regex.flags.replaceAll("i", "")
  const problem = patternProblem(check.regex.source, flags)
  if (problem !== undefined) {
    throw new UnsupportedSchemaError({
      message: `the model would be shown a different rule than the decoder enforces: z.string().regex(/${check.regex.source}/${check.regex.flags}): ${problem}`
    })
  }
}

const override = (def: z.ZodTypeDef, refs: Refs): ReturnType<typeof parseStringDef> | typeof ignoreOverride => {
  const d = def as { readonly typeName?: unknown; readonly checks?: ReadonlyArray<StringCheck> }
  if (d.typeName !== "ZodString" || d.checks === undefined) return ignoreOverride
  const checks = d.checks.map(literalAsRegex)
  checks.forEach(checkRegex)
  return parseStringDef({ ...(def as z.ZodStringDef), checks: checks as z.ZodStringDef["checks"] }, refs)
}

const isObject = (v: JsonValue | undefined): v is JsonObject => typeof v === "object" && v !== null && !Array.isArray(v)

/**
 * zod-to-json-schema writes two draft-4/7 spellings even for its 2019-09 target, which a 2020-12 validator
 * refuses or misreads: `exclusiveMinimum: true` beside `minimum` (for `.gt()`, `.positive()`), and tuples as
 * `items: [...]` with `additionalItems` for the rest. Both are rewritten to their 2020-12 meaning.
 */
const to2020 = (value: JsonValue): JsonValue => {
  if (Array.isArray(value)) return value.map(to2020)
  if (!isObject(value)) return value
  const out: { [k: string]: JsonValue } = {}
  for (const [k, v] of Object.entries(value)) {
    Object.defineProperty(out, k, { value: to2020(v), enumerable: true, writable: true, configurable: true })
  }
  for (const [flag, bound] of [["exclusiveMinimum", "minimum"], ["exclusiveMaximum", "maximum"]] as const) {
    if (out[flag] === true && typeof out[bound] === "number") {
      out[flag] = out[bound]
      delete out[bound]
    } else if (out[flag] === false) delete out[flag]
  }
  if (Array.isArray(out["items"])) {
    out["prefixItems"] = out["items"]
    delete out["items"]
    if (out["additionalItems"] !== undefined) out["items"] = out["additionalItems"]
    else out["items"] = false
    delete out["additionalItems"]
  }
  return out
}

/**
 * zod 3 through zod-to-json-schema (references kept as `$ref`, inlined later by normalisation). Emails are shown
 * with zod's own pattern (ajv's `email` format accepts one-letter top-level domains that zod refuses).
 */
export const fromZod3 = <S extends Zod3ArgumentSchema>(schema: S): SchemaSource<z.output<S>> => ({
  jsonSchema: refuseProtoKeysIn(to2020(
    zodToJsonSchema(schema, {
      target: "jsonSchema2019-09",
      $refStrategy: "root",
      applyRegexFlags: true,
      emailStrategy: "pattern:zod",
      override
    }) as JsonSchema
  ) as JsonSchema),
  refine: (input): DecodeResult<z.output<S>> => {
    const result = schema.safeParse(input)
    return result.success
      ? { ok: true, value: result.data as z.output<S> }
      : { ok: false, issues: result.error.issues.map((i) => ({ path: issuePath(i.path), message: i.message })) }
  }
})
