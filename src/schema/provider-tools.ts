import type { ToolSpec } from "../llm/request.ts"
import { isDeepFrozen } from "./canonical-json.ts"
import { strictSchema } from "./dialects/schema-objects.ts"
import type { JsonObject, JsonSchema } from "./json-schema.ts"
import { anthropicTool } from "./dialects/anthropic.ts"
import { geminiFunctionDeclaration, geminiSubsetFunctionDeclaration } from "./dialects/gemini.ts"
import { openAiChatTool, openAiResponsesTool } from "./dialects/openai.ts"
import { buildToolNameMap, type ToolDialect, type ToolNameMap } from "./tool-names.ts"

export type { ToolDialect, ToolNameMap } from "./tool-names.ts"
export { ToolNameRejected } from "./tool-names.ts"
export { restoreStrictArguments } from "./dialects/openai-strict.ts"

/** Whether OpenAI is sent this schema in strict mode (and its arguments need `restoreStrictArguments`). */
export const usesOpenAiStrictMode = (schema: JsonSchema): boolean => strictSchema(schema) !== undefined

type ToolSet = ReadonlyArray<ToolSpec>

/**
 * Per tool-set caches keyed by array identity: an unchanged tool set is the same array, so a hit is O(1). Only
 * tool sets that cannot change are cached (see `isImmutable`): a caller's plain array can be edited in place,
 * and a cache keyed on it would keep sending the model the old tools.
 */
const fragments = new WeakMap<ToolSet, Map<string, string>>()
const nameMaps = new WeakMap<ToolSet, Map<ToolDialect, ToolNameMap>>()

/** Tool sets already found immutable; freezing is permanent, so the answer never changes. */
const immutableSets = new WeakSet<ToolSet>()

/**
 * Whether nothing in the set can change: a frozen array of frozen specs with deep-frozen schemas, which is what
 * the registry hands out (`toolDefinitionsSorted()`). Cheap for the common cases: an unfrozen array fails at
 * once, a registry array passes through the remembered set or, the first time, through each spec's canonical
 * (already known frozen) schema.
 */
const isImmutable = (tools: ToolSet): boolean => {
  if (immutableSets.has(tools)) return true
  if (!Object.isFrozen(tools)) return false
  for (const spec of tools) if (!Object.isFrozen(spec) || !isDeepFrozen(spec.inputSchema)) return false
  immutableSets.add(tools)
  return true
}

const compareNames = (a: ToolSpec, b: ToolSpec): number => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)

/** Tools in code-unit order of their neutral names; the input array is returned when already in order. */
const sortedTools = (tools: ToolSet): ToolSet => {
  for (let i = 1; i < tools.length; i++) {
    if (compareNames(tools[i - 1] as ToolSpec, tools[i] as ToolSpec) > 0) return [...tools].sort(compareNames)
  }
  return tools
}

/**
 * Reversible name mapping for a tool set on one provider: `toWire(neutral)` and `fromWire(wire)`. Cached per
 * array identity for immutable tool sets (the registry's); built afresh for any other array. Throws
 * `ToolNameRejected` when a name cannot be sent or two tools would collide.
 */
export function toolNames(tools: ToolSet, dialect: ToolDialect): ToolNameMap {
  let perDialect = nameMaps.get(tools)
  if (perDialect === undefined) {
    if (!isImmutable(tools)) return buildToolNameMap(tools.map((tool) => tool.name), dialect)
    perDialect = new Map()
    nameMaps.set(tools, perDialect)
  }
  let map = perDialect.get(dialect)
  if (map === undefined) {
    map = buildToolNameMap(tools.map((tool) => tool.name), dialect)
    perDialect.set(dialect, map)
  }
  return map
}

const cached = (tools: ToolSet, key: string, build: () => string): string => {
  let perKey = fragments.get(tools)
  if (perKey === undefined) {
    if (!isImmutable(tools)) return build()
    perKey = new Map()
    fragments.set(tools, perKey)
  }
  let text = perKey.get(key)
  if (text === undefined) {
    text = build()
    perKey.set(key, text)
  }
  return text
}

type Entry = (spec: ToolSpec, wire: string) => JsonObject

/**
 * The entries in name order. Entry objects have canonical key order and reference canonical (frozen) schema
 * objects, so one native `JSON.stringify` over the whole array is the canonical text — as fast as a hand-written
 * sort + map + stringify.
 */
const entries = (tools: ToolSet, dialect: ToolDialect, entry: Entry): Array<JsonObject> => {
  const names = toolNames(tools, dialect)
  const sorted = sortedTools(tools)
  const out = new Array<JsonObject>(sorted.length)
  for (let i = 0; i < sorted.length; i++) {
    const spec = sorted[i] as ToolSpec
    out[i] = entry(spec, names.toWire(spec.name))
  }
  return out
}

const ENTRY: Record<Exclude<ToolDialect, "gemini">, Entry> = {
  "openai-chat": openAiChatTool,
  "openai-responses": openAiResponsesTool,
  anthropic: anthropicTool
}

/**
 * JSON text of the provider's whole `tools` array value for this tool set, sorted by neutral name. Cached per
 * array identity (WeakMap) when the set is immutable — a frozen array of frozen specs with frozen schemas, as
 * `toolDefinitionsSorted()` returns; any other array is serialised on every call, so editing it in place is
 * always seen. An empty set gives `[]`; leaving `tools` out of the body is the caller's choice.
 * Throws `ToolNameRejected` when a name cannot be sent.
 */
export function toolsFragment(tools: ToolSet, dialect: ToolDialect): string {
  return cached(tools, dialect, () => {
    if (tools.length === 0) return "[]"
    if (dialect === "gemini") return JSON.stringify([{ functionDeclarations: entries(tools, dialect, geminiFunctionDeclaration) }])
    return JSON.stringify(entries(tools, dialect, ENTRY[dialect]))
  })
}

/**
 * Gemini `tools` array value using the OpenAPI-subset `parameters` instead of `parametersJsonSchema`, for
 * endpoints that predate JSON Schema support. Lossy: run `lintToolSpec` to see what each schema loses.
 */
export function geminiSubsetToolsFragment(tools: ToolSet): string {
  return cached(tools, "gemini-subset", () =>
    tools.length === 0 ? "[]" : JSON.stringify([{ functionDeclarations: entries(tools, "gemini", geminiSubsetFunctionDeclaration) }])
  )
}
