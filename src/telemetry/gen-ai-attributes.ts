/**
 * Attribute names of the OpenTelemetry GenAI semantic conventions (spans for model calls, tool execution and agent
 * invocation). Written out here rather than imported: the GenAI names are experimental and live outside the
 * stable `@opentelemetry/semantic-conventions` exports, and this library depends on `@opentelemetry/api` only.
 */
export const GEN_AI = {
  operationName: "gen_ai.operation.name",
  providerName: "gen_ai.provider.name",
  agentName: "gen_ai.agent.name",
  requestModel: "gen_ai.request.model",
  requestMaxTokens: "gen_ai.request.max_tokens",
  requestTemperature: "gen_ai.request.temperature",
  requestTopP: "gen_ai.request.top_p",
  requestTopK: "gen_ai.request.top_k",
  requestStopSequences: "gen_ai.request.stop_sequences",
  responseModel: "gen_ai.response.model",
  responseId: "gen_ai.response.id",
  responseFinishReasons: "gen_ai.response.finish_reasons",
  usageInputTokens: "gen_ai.usage.input_tokens",
  usageOutputTokens: "gen_ai.usage.output_tokens",
  usageCacheReadInputTokens: "gen_ai.usage.cache_read.input_tokens",
  usageCacheCreationInputTokens: "gen_ai.usage.cache_creation.input_tokens",
  usageReasoningOutputTokens: "gen_ai.usage.reasoning.output_tokens",
  toolName: "gen_ai.tool.name",
  toolCallId: "gen_ai.tool.call.id",
  toolType: "gen_ai.tool.type",
  toolCallArguments: "gen_ai.tool.call.arguments",
  toolCallResult: "gen_ai.tool.call.result",
  inputMessages: "gen_ai.input.messages",
  outputMessages: "gen_ai.output.messages",
  systemInstructions: "gen_ai.system_instructions",
  errorType: "error.type"
} as const

/** Attributes of this library's own, for what the conventions have no name for. */
export const LLM_WORKER = {
  turn: "llm_worker.turn",
  runStatus: "llm_worker.run.status",
  toolStatus: "llm_worker.tool.status"
} as const

/**
 * `gen_ai.provider.name` for a client's provider: the conventions' well-known values where one applies (both
 * OpenAI formats are `openai`, Gemini's API is `gcp.gemini`), the provider's own name otherwise (ollama, vllm…).
 */
export const providerName = (provider: string): string => {
  switch (provider) {
    case "openai":
    case "openai-responses":
      return "openai"
    case "gemini":
      return "gcp.gemini"
    default:
      return provider
  }
}
