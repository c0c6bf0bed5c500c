import type { LlmClient } from "../../llm/client.ts"
import { createLlmClient, type LlmClientOptions } from "../../llm/llm-client.ts"
import { DEFAULT_MODELS, KEY_TO_PROVIDER } from "../../llm/providers/defaults.ts"
import { providerNames, providers } from "../../llm/providers/registry.ts"
import type { RoleConfig } from "./config.ts"

type Env = Readonly<Record<string, string | undefined>>

/** A role's model client, or why it has none (the role still holds tools; its chat answers 503 with the reason). */
export type RoleClient = { readonly ok: true; readonly client: LlmClient } | { readonly ok: false; readonly problem: string }

const present = (env: Env, name: string): string | undefined => {
  const value = env[name]?.trim()
  return value === undefined || value === "" ? undefined : value
}

/** A role's client options (what the plugin-LLM lane routes with), or why it has none. */
export type RoleClientOptions = { readonly ok: true; readonly options: LlmClientOptions } | { readonly ok: false; readonly problem: string }

/**
 * The client options of one role: provider and model from the role's config, else LLM_WORKER_PROVIDER /
 * LLM_WORKER_MODEL, else the provider whose API key is set and that provider's default model (the ones
 * `llm-worker chat` starts with); keys and base URLs from the provider's usual variables (OPENAI_API_KEY,
 * OPENAI_BASE_URL, ANTHROPIC_API_KEY, …) unless the role sets `base_url`. A hosted provider without its key has
 * no client (see `roleClient`).
 */
export const roleClientOptions = (role: RoleConfig, env: Env): RoleClientOptions => {
  const name = role.provider ?? present(env, "LLM_WORKER_PROVIDER") ?? KEY_TO_PROVIDER.find(([key]) => present(env, key) !== undefined)?.[1]
  if (name === undefined) return { ok: false, problem: "no provider configured: set provider in the role, LLM_WORKER_PROVIDER, or an API key such as OPENAI_API_KEY" }
  const provider = providers.get(name)
  if (provider === undefined) return { ok: false, problem: `unknown provider "${name}"; choose one of: ${providerNames.join(", ")}` }
  const model = role.model ?? present(env, "LLM_WORKER_MODEL") ?? DEFAULT_MODELS[provider.name]
  if (model === undefined) return { ok: false, problem: `no model for provider "${name}": set model in the role or LLM_WORKER_MODEL` }
  return { ok: true, options: { provider, model, env, ...(role.base_url === undefined ? {} : { baseUrl: role.base_url }) } }
}

/**
 * The client for one role (see `roleClientOptions`), or why it has none: the host reports such a role when it
 * starts, in the operator's terms (which variable to set), instead of failing its first chat.
 */
export const roleClient = (role: RoleConfig, env: Env): RoleClient => {
  const options = roleClientOptions(role, env)
  if (!options.ok) return options
  const provider = options.options.provider
  if (typeof provider !== "string" && provider.requiresApiKey && !provider.apiKeyEnv.some((key) => present(env, key) !== undefined)) {
    return { ok: false, problem: `no API key for ${provider.name}: set ${provider.apiKeyEnv.join(" or ")}` }
  }
  try {
    return { ok: true, client: createLlmClient(options.options) }
  } catch (thrown) {
    return { ok: false, problem: thrown instanceof Error ? thrown.message : String(thrown) }
  }
}
