import { openAiChatScheme } from "../schemes/openai-chat.ts"
import { openAiResponsesScheme } from "../schemes/openai-responses.ts"
import { bearer } from "./provider.ts"
import type { Provider } from "./provider.ts"

// OPENAI_BASE_URL includes the API version (`…/v1`), as in OpenAI's own SDKs.
const common = {
  defaultBaseUrl: "https://api.openai.com/v1",
  baseUrlEnv: "OPENAI_BASE_URL",
  apiKeyEnv: ["OPENAI_API_KEY"],
  requiresApiKey: true,
  authHeaders: bearer
} as const

/** OpenAI Chat Completions: `POST {base}/chat/completions`. */
export const openAiChat: Provider = {
  ...common,
  name: "openai",
  scheme: openAiChatScheme,
  endpoint: (baseUrl) => `${baseUrl}/chat/completions`
}

/** OpenAI Responses: `POST {base}/responses`. */
export const openAiResponses: Provider = {
  ...common,
  name: "openai-responses",
  scheme: openAiResponsesScheme,
  endpoint: (baseUrl) => `${baseUrl}/responses`
}
