import { canonicalJson } from "../schema/canonical-json.ts"
import type { JsonObject } from "../schema/json-schema.ts"
import type { SchemaLint } from "../schema/lint.ts"
import type { ProviderItemScheme } from "./item.ts"
import { MAX_PROVIDER_JSON_DEPTH } from "./provider-item.ts"

/**
 * A tool the provider runs itself (decision 0025): web search, web fetch, code execution, Gemini's Google
 * Search grounding… It is declared next to the worker's own tools (`RequestConfig.hostedTools`) and sent in the
 * same `tools` array, after the function tools; nobody on this side executes it. What it does comes back as
 * provider items and citations (`provider_output` / `citation` events), kept in history for the same provider.
 *
 * `definition` is the tool entry exactly as the provider's API documents it (`{ "type": "web_search" }` for
 * OpenAI Responses, `{ "type": "web_search_20250305", "name": "web_search" }` for Anthropic, `{ "googleSearch":
 * {} }` for Gemini). Build one with the `HostedTool` helpers, or `HostedTool.of` for any other entry.
 */
export interface HostedTool {
  readonly type: "hosted_tool"
  /** The only wire format this tool can be sent to; other schemes leave it out with a warning. */
  readonly scheme: ProviderItemScheme
  readonly definition: JsonObject
}

const deepFreeze = (value: unknown): void => {
  // The value was parsed from text no deeper than MAX_PROVIDER_JSON_DEPTH, so this recursion is bounded.
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    for (const child of Object.values(value)) deepFreeze(child)
    Object.freeze(value)
  }
}

const SCHEMES: ReadonlySet<string> = new Set(["openai-responses", "anthropic", "gemini"])

/**
 * A hosted tool from a provider's own tool entry: a deep-frozen JSON copy (so the request bytes cannot change
 * behind a cache lock), nested no deeper than 64 levels. Throws `TypeError` for a non-object or an unknown
 * scheme, `JsonTooDeepError` for deeper nesting.
 */
const of = (scheme: ProviderItemScheme, definition: JsonObject): HostedTool => {
  if (!SCHEMES.has(scheme)) throw new TypeError(`a hosted tool's scheme must be openai-responses, anthropic or gemini, got ${String(scheme)}`)
  if (typeof definition !== "object" || definition === null || Array.isArray(definition)) {
    throw new TypeError("a hosted tool's definition must be a JSON object")
  }
  const copy = JSON.parse(canonicalJson(definition, { maxDepth: MAX_PROVIDER_JSON_DEPTH })) as JsonObject
  deepFreeze(copy)
  return Object.freeze({ type: "hosted_tool", scheme, definition: copy })
}

/** Leaves out fields the caller did not set, so an unset option is absent from the request, not `null`. */
const defined = (fields: Readonly<Record<string, JsonObject[string] | undefined>>): JsonObject =>
  Object.fromEntries(Object.entries(fields).filter((entry): entry is [string, JsonObject[string]] => entry[1] !== undefined))

/** Helpers for the hosted tools this library documents; `of` accepts any other provider entry. */
export const HostedTool = {
  /** Any other provider entry, sent as given in the `tools` array of `scheme`'s requests. */
  of,
  /** OpenAI Responses `web_search`: results come back as `web_search_call` items and `url_citation` annotations. */
  openAiWebSearch: (options: { readonly searchContextSize?: "low" | "medium" | "high" } = {}): HostedTool =>
    of("openai-responses", defined({ type: "web_search", search_context_size: options.searchContextSize })),
  /** Anthropic `web_search_20250305`: `server_tool_use` + `web_search_tool_result` blocks, cited text. */
  anthropicWebSearch: (
    options: { readonly maxUses?: number; readonly allowedDomains?: ReadonlyArray<string>; readonly blockedDomains?: ReadonlyArray<string> } = {}
  ): HostedTool =>
    of(
      "anthropic",
      defined({
        type: "web_search_20250305",
        name: "web_search",
        max_uses: options.maxUses,
        allowed_domains: options.allowedDomains === undefined ? undefined : [...options.allowedDomains],
        blocked_domains: options.blockedDomains === undefined ? undefined : [...options.blockedDomains]
      })
    ),
  /**
   * Anthropic `web_fetch_20250910`. Anthropic requires the beta header `anthropic-beta: web-fetch-2025-09-10`
   * with it: pass it in `createLlmClient({ headers })`.
   */
  anthropicWebFetch: (options: { readonly maxUses?: number } = {}): HostedTool =>
    of("anthropic", defined({ type: "web_fetch_20250910", name: "web_fetch", max_uses: options.maxUses })),
  /**
   * Anthropic `code_execution_20250825` (bash and file tools in a sandbox). Anthropic requires the beta header
   * `anthropic-beta: code-execution-2025-08-25` with it: pass it in `createLlmClient({ headers })`.
   */
  anthropicCodeExecution: (): HostedTool => of("anthropic", { type: "code_execution_20250825", name: "code_execution" }),
  /** Gemini grounding with Google Search: sources come back as `groundingMetadata` citations. */
  geminiGoogleSearch: (): HostedTool => of("gemini", { googleSearch: {} }),
  /** Gemini code execution: `executableCode` and `codeExecutionResult` parts come back as provider items. */
  geminiCodeExecution: (): HostedTool => of("gemini", { codeExecution: {} }),
  /** Gemini URL context: the model reads URLs named in the prompt. */
  geminiUrlContext: (): HostedTool => of("gemini", { urlContext: {} })
} as const

/** A short name for messages: the entry's `name`, else its `type`, else its only key (Gemini's `googleSearch`). */
export const hostedToolLabel = (tool: HostedTool): string => {
  const { name, type } = tool.definition
  if (typeof name === "string") return name
  if (typeof type === "string") return type
  return Object.keys(tool.definition)[0] ?? "(empty)"
}

/**
 * What is wrong with sending these hosted tools to `scheme`: one `error` per tool declared for another wire
 * format (it would be refused or, worse, misread). The Worker refuses to start with any; `validate()` reports
 * the same as warnings and the encoders leave such tools out.
 */
export const lintHostedTools = (hosted: ReadonlyArray<HostedTool>, scheme: string): ReadonlyArray<SchemaLint> =>
  hosted
    .filter((tool) => tool.scheme !== scheme)
    .map((tool) => ({
      _tag: "SchemaLint",
      provider: scheme as SchemaLint["provider"],
      severity: "error",
      tool: hostedToolLabel(tool),
      path: "",
      message: `hosted tool ${hostedToolLabel(tool)} is declared for ${tool.scheme} and cannot be sent to ${scheme}`
    }))

/** Per hosted-tool array (frozen ones only, as the tool fragments): the joined entries for each scheme. */
const cache = new WeakMap<ReadonlyArray<HostedTool>, Map<string, string>>()

/**
 * The hosted tools for `scheme` as comma-separated JSON entries ("" for none): each in canonical key order, the
 * entries sorted by their text and duplicates dropped, so the same declaration is the same bytes whatever order
 * it was written in — the tool array is part of the cache-locked prefix.
 */
export const hostedToolEntries = (hosted: ReadonlyArray<HostedTool> | undefined, scheme: ProviderItemScheme): string => {
  if (hosted === undefined || hosted.length === 0) return ""
  const frozen = Object.isFrozen(hosted)
  const known = frozen ? cache.get(hosted)?.get(scheme) : undefined
  if (known !== undefined) return known
  const texts = [
    ...new Set(hosted.filter((tool) => tool.scheme === scheme).map((tool) => canonicalJson(tool.definition, { maxDepth: MAX_PROVIDER_JSON_DEPTH })))
  ].sort()
  const text = texts.join(",")
  if (frozen) {
    let perScheme = cache.get(hosted)
    if (perScheme === undefined) cache.set(hosted, (perScheme = new Map()))
    perScheme.set(scheme, text)
  }
  return text
}

/**
 * The whole `tools` array text: the function tools' cached fragment (`[…]`, or undefined when there are none)
 * with the hosted entries appended, or undefined when there is nothing to send.
 */
export const withHostedTools = (functionTools: string | undefined, hostedEntries: string): string | undefined => {
  if (hostedEntries === "") return functionTools
  if (functionTools === undefined || functionTools === "[]") return `[${hostedEntries}]`
  return `${functionTools.slice(0, -1)},${hostedEntries}]`
}
