import { readFileSync, statSync } from "node:fs"
import { isAbsolute, resolve } from "node:path"
import type { LlmClientOptions } from "../llm/llm-client.ts"
import { isProviderName } from "../llm/providers/registry.ts"
import type { PluginLlmConfig, RouteSpec } from "./config.ts"
import { PluginLlmInputError } from "./errors.ts"
import type { GrantedRouting } from "./gate.ts"
import type { TaskRegistry } from "./tasks.ts"

/**
 * One place a call can go: the names reported to the plugin, and the client options the host keeps to itself
 * (keys and base URLs never leave this module's callers' hands: results carry `provider` and `model` only).
 */
export interface Route {
  /** The provider name as the operator wrote it (a built-in name or a key of `llm.providers`). */
  readonly provider: string
  readonly model: string
  /** The agent (host role) whose credentials are used. */
  readonly agentId: string
  readonly profile?: string
  /** @internal */
  readonly client: LlmClientOptions
}

/** Models known not to take images; the operator adds more with `llm.text_only_models`. */
export const DEFAULT_TEXT_ONLY_MODELS: ReadonlyArray<string> = ["gpt-3.5-turbo*", "o1-mini*", "o3-mini*", "deepseek-chat", "deepseek-reasoner"]

const matches = (pattern: string, model: string): boolean =>
  pattern.endsWith("*") ? model.startsWith(pattern.slice(0, -1)) : pattern === model

export const isTextOnly = (model: string, extra: ReadonlyArray<string>): boolean =>
  [...DEFAULT_TEXT_ONLY_MODELS, ...extra].some((pattern) => matches(pattern, model))

export interface RouteContext {
  readonly config: PluginLlmConfig
  readonly tasks: TaskRegistry
  readonly activeAgent: string
  readonly agents: ReadonlyMap<string, LlmClientOptions>
  readonly env: Readonly<Record<string, string | undefined>>
  readonly fetch?: typeof globalThis.fetch
  /** Where relative `api_key_file` paths are resolved (the config file's folder). */
  readonly configDir: string
}

/** A key file holds one key; more than 4 KiB is not a key. An unreadable file leaves no key (a hop, named "config"). */
const MAX_KEY_FILE_BYTES = 4096
const readKeyFile = (context: RouteContext, file: string): string | undefined => {
  try {
    const path = isAbsolute(file) ? file : resolve(context.configDir, file)
    if (statSync(path).size > MAX_KEY_FILE_BYTES) return undefined
    const key = readFileSync(path, "utf8").trim()
    return key === "" ? undefined : key
  } catch {
    return undefined
  }
}

const providerName = (options: LlmClientOptions): string => (typeof options.provider === "string" ? options.provider : options.provider.name)

/** Where an operator-named provider points; the agent's own options when it is the agent's provider. */
const endpointFor = (context: RouteContext, base: LlmClientOptions, provider: string, model: string, profile: string | undefined): LlmClientOptions => {
  const shared = {
    env: context.env,
    retry: { maxRetries: context.config.llm.maxRetries },
    ...(context.fetch === undefined ? {} : { fetch: context.fetch })
  }
  let options: LlmClientOptions
  const named = context.config.llm.providers[provider]
  if (named !== undefined) {
    const apiKey = named.apiKeyEnv !== undefined ? context.env[named.apiKeyEnv] : named.apiKeyFile !== undefined ? readKeyFile(context, named.apiKeyFile) : undefined
    options = { provider: named.type, model, ...(named.baseUrl === undefined ? {} : { baseUrl: named.baseUrl }), ...(apiKey === undefined ? {} : { apiKey }) }
  } else if (provider === providerName(base)) {
    options = { ...base, model }
  } else if (isProviderName(provider)) {
    options = { provider, model }
  } else {
    throw new PluginLlmInputError({ field: "provider", message: `unknown provider "${provider}"; the operator names providers under llm.providers` })
  }
  if (profile !== undefined) {
    const stored = context.config.llm.profiles[profile]
    if (stored === undefined) throw new PluginLlmInputError({ field: "profile", message: `unknown profile "${profile}"` })
    const type = typeof options.provider === "string" ? options.provider : options.provider.name
    if (stored.provider !== undefined && stored.provider !== provider && stored.provider !== type) {
      throw new PluginLlmInputError({ field: "profile", message: `profile "${profile}" holds a credential for provider "${stored.provider}", not "${provider}"` })
    }
    // A missing variable leaves no key: the client refuses at creation, which is a hop, not a silent default key.
    const key = stored.apiKeyEnv !== undefined ? context.env[stored.apiKeyEnv] : stored.apiKeyFile !== undefined ? readKeyFile(context, stored.apiKeyFile) : undefined
    options = { ...options, apiKey: key ?? "" }
  }
  return { ...options, ...shared, retry: { ...options.retry, ...shared.retry } }
}

/** The route of one call: agent, then task (operator config over the plugin's defaults), then explicit overrides. */
export const primaryRoute = (context: RouteContext, pluginId: string, granted: GrantedRouting, checkDefault: (field: "provider" | "model", value: string) => void): Route => {
  const agentId = granted.agentId ?? context.activeAgent
  const base = context.agents.get(agentId) as LlmClientOptions
  let provider = providerName(base)
  let model = base.model
  if (granted.task !== undefined) {
    const operator = context.config.auxiliary[granted.task.name]
    const defaults = granted.task.builtin ? undefined : context.tasks.get(granted.task.name)?.defaults
    // A plugin's own defaults choose a route, so they pass the gate like explicit overrides; the operator's
    // auxiliary.<task> needs no grant.
    if (operator?.provider !== undefined) provider = operator.provider
    else if (defaults?.provider !== undefined) {
      checkDefault("provider", defaults.provider)
      provider = defaults.provider
    }
    if (operator?.model !== undefined) model = operator.model
    else if (defaults?.model !== undefined) {
      checkDefault("model", defaults.model)
      model = defaults.model
    }
  }
  if (granted.provider !== undefined) provider = granted.provider
  if (granted.model !== undefined) model = granted.model
  void pluginId
  return {
    provider,
    model,
    agentId,
    ...(granted.profile === undefined ? {} : { profile: granted.profile }),
    client: endpointFor(context, base, provider, model, granted.profile)
  }
}

/** A configured route (`llm.fallback[]`, `llm.vision`), on the active agent's credentials where it is its provider. */
export const configuredRoute = (context: RouteContext, spec: RouteSpec): Route => {
  const base = context.agents.get(context.activeAgent) as LlmClientOptions
  return { provider: spec.provider, model: spec.model, agentId: context.activeAgent, client: endpointFor(context, base, spec.provider, spec.model, undefined) }
}

/**
 * The routes to try in order: the primary (or, with images on a text-only model, the configured vision model),
 * then the fallback chain without duplicates (and without text-only models when the input has images).
 */
export const routeChain = (context: RouteContext, primary: Route, images: number): { readonly routes: ReadonlyArray<Route>; readonly visionRouted: boolean } => {
  const textOnly = context.config.llm.textOnlyModels
  let first = primary
  let visionRouted = false
  if (images > 0 && isTextOnly(primary.model, textOnly)) {
    const vision = context.config.llm.vision
    if (vision === undefined) {
      throw new PluginLlmInputError({ field: "input", message: `model "${primary.model}" cannot take images and no vision model is configured (llm.vision)` })
    }
    first = configuredRoute(context, vision)
    visionRouted = true
  }
  const routes = [first]
  for (const spec of context.config.llm.fallback) {
    if (routes.some((r) => r.provider === spec.provider && r.model === spec.model)) continue
    if (images > 0 && isTextOnly(spec.model, textOnly)) continue
    try {
      routes.push(configuredRoute(context, spec))
    } catch {
      // An unusable fallback entry is skipped; the config decoder cannot know the provider names in use.
    }
  }
  return { routes, visionRouted }
}
