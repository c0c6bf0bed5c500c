import { makeOpenAiChatScheme } from "../schemes/openai-chat.ts"
import { bearer } from "./provider.ts"
import type { Provider } from "./provider.ts"

/** What `openAiCompatible` needs to know about a server: its name, default base URL and key variables. */
export interface Preset {
  readonly name: string
  readonly baseUrl: string
  readonly apiKeyEnv: ReadonlyArray<string>
  readonly requiresApiKey: boolean
  readonly scheme?: Provider["scheme"]
}

/**
 * Every compatible server documents the older `max_tokens` field, while `max_completion_tokens` (OpenAI's current
 * name) is read by only some of them, so the presets send the one they all honour.
 */
const compatibleChatScheme = makeOpenAiChatScheme({ maxTokensField: "max_tokens" })

/** A server that speaks OpenAI Chat Completions at `{base}/chat/completions` with an optional bearer key. */
export const openAiCompatible = (preset: Preset): Provider => ({
  name: preset.name,
  scheme: preset.scheme ?? compatibleChatScheme,
  defaultBaseUrl: preset.baseUrl,
  apiKeyEnv: preset.apiKeyEnv,
  requiresApiKey: preset.requiresApiKey,
  endpoint: (baseUrl) => `${baseUrl}/chat/completions`,
  authHeaders: bearer
})

/** Ollama's OpenAI-compatible server on its default port 11434; no key. */
export const ollama = openAiCompatible({ name: "ollama", baseUrl: "http://localhost:11434/v1", apiKeyEnv: [], requiresApiKey: false })

/** llama.cpp's `llama-server` listens on 8080; a key is needed only when it was started with `--api-key`. */
export const llamaCpp = openAiCompatible({
  name: "llama.cpp",
  baseUrl: "http://localhost:8080/v1",
  apiKeyEnv: ["LLAMA_API_KEY"],
  requiresApiKey: false
})

/** vLLM's OpenAI server listens on 8000; a key is needed only when it was started with `--api-key`. */
export const vllm = openAiCompatible({ name: "vllm", baseUrl: "http://localhost:8000/v1", apiKeyEnv: ["VLLM_API_KEY"], requiresApiKey: false })

/** OpenRouter (`OPENROUTER_API_KEY`). */
export const openRouter = openAiCompatible({
  name: "openrouter",
  baseUrl: "https://openrouter.ai/api/v1",
  apiKeyEnv: ["OPENROUTER_API_KEY"],
  requiresApiKey: true
})

/** Zhipu GLM (mainland endpoint; pass `baseUrl: "https://api.z.ai/api/paas/v4"` for Z.ai). */
export const glm = openAiCompatible({
  name: "glm",
  baseUrl: "https://open.bigmodel.cn/api/paas/v4",
  apiKeyEnv: ["ZHIPUAI_API_KEY", "GLM_API_KEY", "ZAI_API_KEY"],
  requiresApiKey: true
})

/** Qwen through DashScope's compatible mode (Beijing region; the international one is `dashscope-intl`). */
export const qwen = openAiCompatible({
  name: "qwen",
  baseUrl: "https://dashscope.aliyuncs.com/compatible-mode/v1",
  apiKeyEnv: ["DASHSCOPE_API_KEY"],
  requiresApiKey: true
})

/** StepFun (`STEPFUN_API_KEY`). */
export const stepFun = openAiCompatible({
  name: "stepfun",
  baseUrl: "https://api.stepfun.com/v1",
  apiKeyEnv: ["STEPFUN_API_KEY"],
  requiresApiKey: true
})
