import type { Scheme } from "../scheme.ts"

/**
 * Where and how to reach one provider: a wire format (scheme) plus endpoint, authentication and the environment
 * variables it reads. Providers hold no state; `createLlmClient` resolves key and base URL once, at creation.
 */
export interface Provider {
  readonly name: string
  readonly scheme: Scheme
  readonly defaultBaseUrl: string
  /** Environment variable that overrides the base URL, if the provider has one by convention. */
  readonly baseUrlEnv?: string
  /** Environment variables read for the key, in order of preference. */
  readonly apiKeyEnv: ReadonlyArray<string>
  /** Local servers run without a key; hosted ones fail at client creation when none is found. */
  readonly requiresApiKey: boolean
  /** The streaming endpoint for `model`, under `baseUrl` (no trailing slash). */
  endpoint(baseUrl: string, model: string): string
  /** Authentication headers; called only with a key (absent keys mean no auth header at all). */
  authHeaders(apiKey: string): Readonly<Record<string, string>>
}

export const bearer = (apiKey: string): Readonly<Record<string, string>> => ({ authorization: `Bearer ${apiKey}` })
