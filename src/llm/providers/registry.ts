import { anthropic } from "./anthropic.ts"
import { gemini } from "./gemini.ts"
import { openAiChat, openAiResponses } from "./openai.ts"
import { glm, llamaCpp, ollama, openRouter, qwen, stepFun, vllm } from "./openai-compatible.ts"
import type { Provider } from "./provider.ts"

/** Every built-in provider by name, in a fixed order (shown in `--help` texts and error messages). */
export const providers: ReadonlyMap<string, Provider> = new Map(
  [openAiChat, openAiResponses, anthropic, gemini, ollama, llamaCpp, vllm, openRouter, glm, qwen, stepFun].map(
    (provider) => [provider.name, provider] as const
  )
)

/** The names `createLlmClient({ provider })` accepts, in the order of `providers`. */
export const providerNames: ReadonlyArray<string> = [...providers.keys()]
