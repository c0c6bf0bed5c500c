import { anthropic } from "./anthropic.ts"
import { gemini } from "./gemini.ts"
import { openAiChat, openAiResponses } from "./openai.ts"
import { glm, llamaCpp, ollama, openRouter, qwen, stepFun, vllm } from "./openai-compatible.ts"
import type { Provider } from "./provider.ts"

/**
 * The name of a built-in provider: what `createLlmClient({ provider })` accepts besides a `Provider` value (a
 * preset such as `ollama`, or your own `openAiCompatible({ … })`). Check a string from outside (an environment
 * variable, a flag) with `isProviderName`.
 *
 * Spelled out rather than derived from the table below so the public declaration names no internal value; the
 * table's `satisfies` keeps the two equal (a missing or extra name does not compile).
 */
export type ProviderName =
  | "openai"
  | "openai-responses"
  | "anthropic"
  | "gemini"
  | "ollama"
  | "llama.cpp"
  | "vllm"
  | "openrouter"
  | "glm"
  | "qwen"
  | "stepfun"

/** The built-in providers by name, in the fixed order shown in `--help` texts and error messages. */
const BUILT_IN = {
  openai: openAiChat,
  "openai-responses": openAiResponses,
  anthropic,
  gemini,
  ollama,
  "llama.cpp": llamaCpp,
  vllm,
  openrouter: openRouter,
  glm,
  qwen,
  stepfun: stepFun
} as const satisfies Readonly<Record<ProviderName, Provider>>

/** Every built-in provider by name, in a fixed order (shown in `--help` texts and error messages). */
export const providers: ReadonlyMap<string, Provider> = new Map(Object.entries(BUILT_IN))

/** The names `createLlmClient({ provider })` accepts, in the order of `providers`. */
export const providerNames: ReadonlyArray<ProviderName> = Object.keys(BUILT_IN) as Array<ProviderName>

/** True when `name` is a built-in provider's name (narrows a string from the environment or the command line). */
export const isProviderName = (name: unknown): name is ProviderName => typeof name === "string" && providers.has(name)
