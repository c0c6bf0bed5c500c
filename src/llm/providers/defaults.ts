/**
 * What a client built from the environment starts with when nothing names a provider or a model: shared by
 * `llm-worker chat` and the tool host's roles, so the same environment gives both the same model.
 */

/** A model to start with when none is given; any model the provider serves can be named instead. */
export const DEFAULT_MODELS: Readonly<Record<string, string>> = {
  openai: "gpt-4.1-mini",
  "openai-responses": "gpt-5-mini",
  anthropic: "claude-sonnet-4-5",
  gemini: "gemini-2.5-flash",
  ollama: "qwen3",
  "llama.cpp": "default",
  vllm: "default",
  openrouter: "openai/gpt-4.1-mini",
  glm: "glm-4.6",
  qwen: "qwen-plus",
  stepfun: "step-2-mini"
}

/** Which hosted provider a key in the environment selects, in order of preference. */
export const KEY_TO_PROVIDER: ReadonlyArray<readonly [string, string]> = [
  ["OPENAI_API_KEY", "openai"],
  ["ANTHROPIC_API_KEY", "anthropic"],
  ["GEMINI_API_KEY", "gemini"],
  ["GOOGLE_API_KEY", "gemini"]
]
