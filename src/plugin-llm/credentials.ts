import type { LlmClientOptions } from "../llm/llm-client.ts"
import type { Provider } from "../llm/providers/provider.ts"
import { providers } from "../llm/providers/registry.ts"
import { environmentSecrets as anyEnvironmentSecrets, headerSecrets } from "../redact/environment.ts"
import { urlCredentials } from "../redact/redact-url.ts"

/**
 * Where the credentials of a host or a plugin lane are configured, by value, for the redactor (`SecretRedactor`):
 * whatever a provider echoes back, these never leave the process in text.
 */

type Env = Readonly<Record<string, string | undefined>>

/** `environmentSecrets` of the leaf, with every built-in provider's key variables named whatever they are called. */
export const environmentSecrets = (env: Env, named: Iterable<string> = []): ReadonlyArray<string> =>
  anyEnvironmentSecrets(env, [...named, ...[...providers.values()].flatMap((provider) => provider.apiKeyEnv)])

/** The credentials one client is built with: its key, the key variables its provider reads, base URL and header secrets. */
export const clientSecrets = (options: LlmClientOptions): ReadonlyArray<string> => {
  const found: Array<string> = []
  if (options.apiKey !== undefined) found.push(options.apiKey)
  if (options.baseUrl !== undefined) found.push(...urlCredentials(options.baseUrl))
  const provider: Provider | undefined = typeof options.provider === "string" ? providers.get(options.provider) : options.provider
  const env = options.env ?? (globalThis as { readonly process?: { readonly env?: Env } }).process?.env ?? {}
  for (const name of provider?.apiKeyEnv ?? []) {
    const value = env[name]
    if (value !== undefined) found.push(value)
  }
  found.push(...headerSecrets(options.headers ?? {}))
  return found
}
