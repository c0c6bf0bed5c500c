import type { ToolSpec } from "../llm/request.ts"
import { toGeminiSubsetSchema } from "./dialects/gemini.ts"
import { toStrictSchema } from "./dialects/openai-strict.ts"
import { DEFAULT_MAX_DOCUMENT_DEPTH, tooDeepMessage, valueDepth } from "./json-depth.ts"
import type { JsonObject, JsonValue } from "./json-schema.ts"
import { quote } from "./quote.ts"
import { buildToolNameMap, ToolNameRejected, wireNameProblem, type ToolDialect } from "./tool-names.ts"

/** Where a tool can be sent: the four dialects, plus Gemini's older OpenAPI-subset `parameters`. */
export type LintTarget = ToolDialect | "gemini-subset"

/** One thing a provider would refuse (`error`) or silently ignore or degrade (`warning`). */
export interface SchemaLint {
  readonly _tag: "SchemaLint"
  readonly provider: LintTarget
  readonly severity: "error" | "warning"
  /** The tool, then a JSON Pointer into its input schema ("" for the tool itself or the schema root). */
  readonly tool: string
  readonly path: string
  readonly message: string
}

/** Which provider rules `lintToolSpec` / `lintToolSet` check (every dialect when `targets` is absent). */
export interface LintOptions {
  /** Which targets to check; all four dialects by default. */
  readonly targets?: ReadonlyArray<LintTarget>
}

const DEFAULT_TARGETS: ReadonlyArray<LintTarget> = ["openai-chat", "openai-responses", "anthropic", "gemini"]

/** The keywords Gemini's `parametersJsonSchema` honours (per its reference); others are accepted and ignored. */
const GEMINI_JSON_SCHEMA_KEYWORDS = new Set([
  "$id", "$defs", "$ref", "$anchor", "type", "format", "title", "description", "enum", "items", "prefixItems",
  "minItems", "maxItems", "minimum", "maximum", "anyOf", "oneOf", "properties", "additionalProperties", "required",
  "propertyOrdering"
])

const isObject = (value: unknown): value is JsonObject =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** Every keyword not in `known`, anywhere in the schema, with its path. */
const unknownKeywords = (
  schema: JsonValue,
  known: ReadonlySet<string>,
  path: string,
  found: Array<{ path: string; keyword: string }>
): void => {
  if (!isObject(schema)) return
  for (const key of Object.keys(schema)) {
    const value = schema[key] as JsonValue
    if (!known.has(key)) found.push({ path, keyword: key })
    if (key === "properties" || key === "$defs") {
      if (isObject(value)) for (const name of Object.keys(value)) unknownKeywords(value[name] as JsonValue, known, `${path}/${key}/${name}`, found)
    } else if (key === "items" || key === "additionalProperties") {
      unknownKeywords(value, known, `${path}/${key}`, found)
    } else if ((key === "anyOf" || key === "oneOf" || key === "prefixItems") && Array.isArray(value)) {
      value.forEach((branch, i) => unknownKeywords(branch, known, `${path}/${key}/${i}`, found))
    }
  }
}

const lintFor = (spec: ToolSpec, target: LintTarget): Array<SchemaLint> => {
  const findings: Array<SchemaLint> = []
  const add = (severity: SchemaLint["severity"], path: string, message: string) =>
    findings.push({ _tag: "SchemaLint", provider: target, severity, tool: spec.name, path, message })
  const dialect: ToolDialect = target === "gemini-subset" ? "gemini" : target

  const nameProblem = wireNameProblem(spec.name, dialect)
  if (nameProblem !== undefined) add("error", "", nameProblem)

  const schema: unknown = spec.inputSchema
  if (!isObject(schema) || schema["type"] !== "object") {
    add("error", "", "the input schema must be an object schema (type: \"object\")")
    return findings
  }
  // The checks below recurse over the schema; a schema too deep for them is one error, found without recursion.
  if (valueDepth(schema, DEFAULT_MAX_DOCUMENT_DEPTH) > DEFAULT_MAX_DOCUMENT_DEPTH) {
    add("error", "", tooDeepMessage("the input schema is", DEFAULT_MAX_DOCUMENT_DEPTH))
    return findings
  }
  if (typeof schema["$ref"] === "string") add("warning", "", "a root $ref is not resolved by every provider")

  switch (target) {
    case "openai-chat":
    case "openai-responses": {
      const strict = toStrictSchema(schema)
      if (!strict.ok) {
        for (const problem of strict.problems) add("warning", problem.path, `sent with strict: false — ${problem.message}`)
      }
      break
    }
    case "anthropic":
      break
    case "gemini": {
      if (spec.description.trim() === "") add("warning", "", "Gemini documents the function description as required")
      const found: Array<{ path: string; keyword: string }> = []
      unknownKeywords(schema, GEMINI_JSON_SCHEMA_KEYWORDS, "", found)
      for (const { path, keyword } of found) add("warning", path, `Gemini ignores keyword ${quote(keyword)}`)
      break
    }
    case "gemini-subset": {
      if (spec.description.trim() === "") add("warning", "", "Gemini documents the function description as required")
      for (const loss of toGeminiSubsetSchema(schema).losses) add(loss.severity, loss.path, loss.message)
      break
    }
  }
  return findings
}

/**
 * What each provider would refuse or ignore in one tool definition. Meant for registration time: an `error`
 * means the tool must not be offered to that provider; a `warning` means it works with something lost (strict
 * mode, an ignored keyword).
 */
export const lintToolSpec = (spec: ToolSpec, options?: LintOptions): ReadonlyArray<SchemaLint> =>
  (options?.targets ?? DEFAULT_TARGETS).flatMap((target) => lintFor(spec, target))

/**
 * `lintToolSpec` for every tool, plus the errors only a whole set can have: two tools whose provider spellings
 * collide (e.g. `a.b` and `a_b` on OpenAI).
 */
export const lintToolSet = (specs: ReadonlyArray<ToolSpec>, options?: LintOptions): ReadonlyArray<SchemaLint> => {
  const targets = options?.targets ?? DEFAULT_TARGETS
  const findings = specs.flatMap((spec) => lintToolSpec(spec, { targets }))
  const valid = specs.filter((spec) => targets.every((t) => wireNameProblem(spec.name, t === "gemini-subset" ? "gemini" : t) === undefined))
  for (const target of targets) {
    const dialect: ToolDialect = target === "gemini-subset" ? "gemini" : target
    try {
      buildToolNameMap(valid.map((spec) => spec.name), dialect)
    } catch (error) {
      if (!(error instanceof ToolNameRejected)) throw error
      findings.push({
        _tag: "SchemaLint",
        provider: target,
        severity: "error",
        tool: error.tool,
        path: "",
        message: error.message
      })
    }
  }
  return findings
}
