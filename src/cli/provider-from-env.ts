import type { LlmClient } from "../llm/client.ts"
import { createLlmClient, type LlmClientOptions } from "../llm/llm-client.ts"
import { isLlmError } from "../llm/llm-error.ts"
import type { Provider } from "../llm/providers/provider.ts"
import { providerNames, providers } from "../llm/providers/registry.ts"
import type { ConnectionFlags } from "./args.ts"
import { configError } from "./cli-error.ts"
import { redactUrl } from "../redact/redact-url.ts"
import { DEFAULT_MODELS, KEY_TO_PROVIDER } from "../llm/providers/defaults.ts"

type Env = Readonly<Record<string, string | undefined>>

const present = (env: Env, name: string): boolean => (env[name] ?? "").trim() !== ""

const pickProvider = (flags: ConnectionFlags, env: Env): Provider => {
  const named = flags.provider ?? (present(env, "LLM_WORKER_PROVIDER") ? env.LLM_WORKER_PROVIDER?.trim() : undefined)
  const name = named ?? KEY_TO_PROVIDER.find(([key]) => present(env, key))?.[1]
  if (name === undefined) {
    throw configError(
      "no provider configured: set OPENAI_API_KEY, ANTHROPIC_API_KEY or GEMINI_API_KEY, or pass --provider (e.g. --provider ollama); `llm-worker demo` runs offline"
    )
  }
  const provider = providers.get(name)
  if (provider === undefined) throw configError(`unknown provider "${name}"; choose one of: ${providerNames.join(", ")}`)
  return provider
}

/**
 * The library quotes a base URL it cannot use exactly as given, which may not parse as a URL at all, so the generic
 * redaction of URLs in text could miss part of it; each base URL the CLI passed on is replaced whole instead.
 */
const withoutBaseUrlSecrets = (message: string, flags: ConnectionFlags, provider: Provider, env: Env): string => {
  const given = [flags.baseUrl, provider.baseUrlEnv === undefined ? undefined : env[provider.baseUrlEnv]]
  return given.reduce<string>((text, url) => (url === undefined || url.trim() === "" ? text : text.split(url.trim()).join(redactUrl(url.trim()))), message)
}

/**
 * `fetch` refuses a URL with userinfo, and each attempt would only be retried and then reported with the secret in
 * it, so such a base URL is refused at once (redacted). Keys belong in the provider's key variable.
 */
const refuseCredentialsInBaseUrl = (flags: ConnectionFlags, provider: Provider, env: Env): void => {
  const [source, value] =
    flags.baseUrl !== undefined ? ["--base-url", flags.baseUrl] : provider.baseUrlEnv === undefined ? ["", undefined] : [provider.baseUrlEnv, env[provider.baseUrlEnv]]
  if (value === undefined || value.trim() === "") return
  let parsed: URL
  try {
    parsed = new URL(value.trim())
  } catch {
    return // createLlmClient names the unusable URL, and withoutBaseUrlSecrets redacts it.
  }
  if (parsed.username !== "" || parsed.password !== "") {
    throw configError(`${source} ${redactUrl(value.trim())} contains credentials, which are never sent; pass the key in ${provider.apiKeyEnv.join(" or ") || "the provider's key variable"}`)
  }
}

/**
 * The chat client's options from flags, then environment (the plugin-LLM lane routes with them too). Every
 * configuration problem becomes a one-line `CliError` (exit 2) that names the variable or flag to set.
 */
export const clientOptionsFromEnv = (flags: ConnectionFlags, env: Env = process.env): LlmClientOptions => {
  const provider = pickProvider(flags, env)
  const model = flags.model ?? (present(env, "LLM_WORKER_MODEL") ? env.LLM_WORKER_MODEL?.trim() : undefined) ?? DEFAULT_MODELS[provider.name]
  if (model === undefined) throw configError(`no model for provider "${provider.name}": pass --model or set LLM_WORKER_MODEL`)
  if (provider.requiresApiKey && !provider.apiKeyEnv.some((name) => present(env, name))) {
    throw configError(`no API key for ${provider.name}: set ${provider.apiKeyEnv.join(" or ")}`)
  }
  refuseCredentialsInBaseUrl(flags, provider, env)
  return { provider, model, env, ...(flags.baseUrl === undefined ? {} : { baseUrl: flags.baseUrl }) }
}

/** The chat client from flags, then environment (see `clientOptionsFromEnv`). */
export const clientFromEnv = (flags: ConnectionFlags, env: Env = process.env): LlmClient => {
  const options = clientOptionsFromEnv(flags, env)
  try {
    return createLlmClient(options)
  } catch (thrown) {
    if (isLlmError(thrown) && thrown._tag === "LlmConfigError") throw configError(withoutBaseUrlSecrets(thrown.message, flags, options.provider as Provider, env))
    throw thrown
  }
}
