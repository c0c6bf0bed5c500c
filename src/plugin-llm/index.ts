/**
 * `llm-worker/plugin-llm`: the Hermes `ctx.llm` contract. A host gives each plugin a lane to its models — one-shot
 * `complete` and `completeStructured`, as Promises and Effects — behind a closed-by-default trust gate decoded
 * from the operator's config, with auxiliary tasks, vision routing, fallback, audit lines, usage and cost, and
 * per-plugin budgets. `createPluginLlmHandler` is the same lane over the host's HTTP API for remote plugins.
 */
export { createPluginLlm } from "./plugin-llm.ts"
export type {
  CallOptions,
  CompleteCallOptions,
  CompleteResult,
  PluginLlm,
  PluginLaneOptions,
  PluginLlmHost,
  PluginLlmOptions,
  ParsedOutput,
  StructuredCallOptions,
  StructuredCallBase,
  StructuredSchemaOption,
  StructuredJsonSchemaOption,
  StructuredResult
} from "./plugin-llm.ts"
export { decodePluginLlmConfig, DEFAULT_MAX_IMAGE_BYTES, DEFAULT_MAX_CONCURRENT, DEFAULT_TIMEOUT_MS, DEFAULT_MAX_RETRIES } from "./config.ts"
export type {
  AuxiliaryTaskConfig,
  CredentialProfile,
  LlmSection,
  PluginEntry,
  PluginGrants,
  PluginLlmConfig,
  PriceEntry,
  ProviderEndpoint,
  RouteSpec
} from "./config.ts"
export {
  isPluginLlmError,
  PluginLlmBudgetExceeded,
  PluginLlmCancelled,
  PluginLlmConfigError,
  PluginLlmInputError,
  PluginLlmProviderUnavailable,
  PluginLlmRateLimited,
  PluginLlmSchemaError,
  PluginLlmTimeoutError,
  PluginLlmTrustError
} from "./errors.ts"
export type { ConfigIssue, FallbackHop, GatedOverride, PluginLlmError, TimeoutSource } from "./errors.ts"
export type { AuditRecord, AuditSink, PluginLlmUsage } from "./audit.ts"
export type { ChatContentPart, ChatMessage, InputBlock } from "./inputs.ts"
export { sniffImageType, DEFAULT_MAX_PARTS, DEFAULT_MAX_TEXT_CHARS } from "./inputs.ts"
export { DEFAULT_BUILTIN_TASKS, TaskRegistry } from "./tasks.ts"
export type { AuxiliaryTaskOptions, RegisteredTask } from "./tasks.ts"
export { DEFAULT_TEXT_ONLY_MODELS } from "./routes.ts"
export { CommandRegistry, createPluginContext } from "./plugin-context.ts"
export type { CommandContext, CommandHandler, CommandOptions, CommandOutcome, ContextOptions, PluginContext, PluginModule, RegisteredCommand } from "./plugin-context.ts"
export { createPluginRuntime } from "./plugin-runtime.ts"
export type { LoadedPlugin, PluginRuntime, PluginRuntimeOptions } from "./plugin-runtime.ts"
export { createPluginLlmHandler, parseSlashCommand, REGISTRANT_TOKEN_HEADER } from "./http-handler.ts"
export type { HandlerRequest, HandlerResponse, PluginLlmHandler, PluginLlmHandlerOptions } from "./http-handler.ts"
export { createRemotePluginLlm } from "./remote-client.ts"
export { MIN_SECRET_CHARS, REDACTED, SecretRedactor } from "../redact/secrets.ts"
export type { RemotePluginLlmOptions } from "./remote-client.ts"
