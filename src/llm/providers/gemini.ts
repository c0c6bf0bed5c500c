import { geminiScheme } from "../schemes/gemini.ts"
import type { Provider } from "./provider.ts"

/**
 * Gemini API: `POST {base}/v1beta/models/{model}:streamGenerateContent?alt=sse` (without `alt=sse` the stream is
 * one JSON array, not SSE). The key goes in a header rather than the URL so it never lands in access logs.
 * GEMINI_BASE_URL excludes the API version, as in Google's SDK.
 */
export const gemini: Provider = {
  name: "gemini",
  scheme: geminiScheme,
  defaultBaseUrl: "https://generativelanguage.googleapis.com",
  baseUrlEnv: "GEMINI_BASE_URL",
  apiKeyEnv: ["GEMINI_API_KEY", "GOOGLE_API_KEY"],
  requiresApiKey: true,
  endpoint: (baseUrl, model) => `${baseUrl}/v1beta/models/${encodeURIComponent(model)}:streamGenerateContent?alt=sse`,
  authHeaders: (apiKey) => ({ "x-goog-api-key": apiKey })
}
