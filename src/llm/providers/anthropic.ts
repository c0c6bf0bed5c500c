import { anthropicScheme } from "../schemes/anthropic.ts"
import type { Provider } from "./provider.ts"

/** The Messages API version this library's scheme speaks; sent on every request as Anthropic requires. */
export const ANTHROPIC_VERSION = "2023-06-01"

/** Anthropic Messages: `POST {base}/v1/messages`. ANTHROPIC_BASE_URL excludes `/v1`, as in Anthropic's SDKs. */
export const anthropic: Provider = {
  name: "anthropic",
  scheme: anthropicScheme,
  defaultBaseUrl: "https://api.anthropic.com",
  baseUrlEnv: "ANTHROPIC_BASE_URL",
  apiKeyEnv: ["ANTHROPIC_API_KEY"],
  requiresApiKey: true,
  endpoint: (baseUrl) => `${baseUrl}/v1/messages`,
  authHeaders: (apiKey) => ({ "x-api-key": apiKey, "anthropic-version": ANTHROPIC_VERSION })
}
