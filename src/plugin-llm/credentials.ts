import type { LlmClientOptions } from "../llm/llm-client.ts"
import type { Provider } from "../llm/providers/provider.ts"
import { providers } from "../llm/providers/registry.ts"
import { urlCredentials } from "../redact/redact-url.ts"

/**
 * Where the credentials of a host or a plugin lane are configured, by value, for the redactor (`SecretRedactor`):
 * whatever a provider echoes back, these never leave the process in text.
 */

type Env = Readonly<Record<string, string | undefined>>

/** Names of variables and headers that hold a credential (matched generously: a hidden harmless value costs nothing). */
const SECRET_NAME = /(?:key|token|secret|password|passwd|credentials?|authorization|auth)$/i

/** Variables holding a URL, whose userinfo and credential parameters are secrets (`OPENAI_BASE_URL`…). */
const URL_NAME = /(?:url|uri|endpoint|host)$/i

/**
 * The credentials an environment holds: every built-in provider's key variables, every variable named like a
 * credential (`*_API_KEY`, `*_TOKEN`, `*_SECRET`…), the extra names given (`api_key_env` of the config), and the
 * userinfo and key parameters of variables holding URLs.
 */
export const environmentSecrets = (env: Env, named: Iterable<string> = []): ReadonlyArray<string> => {
  const found: Array<string> = []
  const names = new Set(named)
  for (const provider of providers.values()) for (const name of provider.apiKeyEnv) names.add(name)
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) continue
    if (names.has(name) || SECRET_NAME.test(name)) found.push(value)
    else if (URL_NAME.test(name)) found.push(...urlCredentials(value))
  }
  for (const name of names) {
    const value = env[name]
    if (value !== undefined) found.push(value)
  }
  return found
}

/** The credentials one client is built with: its key, the key variables its provider reads, base URL and header secrets. */
export const clientSecrets = (options: LlmClientOptions): ReadonlyArray<string> => {
  const found: Array<string> = []
  if (options.apiKey !== undefined) found.push(options.apiKey)
  if (options.baseUrl !== undefined) found.push(...urlCredentials(options.baseUrl))
  const provider: Provider | undefined = typeof options.provider === "string" ? providers.get(options.provider) : options.provider
  const env = options.env ?? {}
  for (const name of provider?.apiKeyEnv ?? []) {
    const value = env[name]
    if (value !== undefined) found.push(value)
  }
  for (const [name, value] of Object.entries(options.headers ?? {})) {
    if (!SECRET_NAME.test(name)) continue
    found.push(value)
    // `Bearer <token>`: the token alone is what a provider would echo.
    const token = /^\s*\S+\s+(\S+)\s*$/.exec(value)?.[1]
    if (token !== undefined) found.push(token)
  }
  return found
}
