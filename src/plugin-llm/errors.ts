import { Data } from "effect"

/** One problem in the operator's config, at a dotted path (`plugins.entries.tldr.llm.allowed_models`). */
export interface ConfigIssue {
  readonly path: string
  readonly message: string
}

/** The operator's `plugins` / `auxiliary` / `llm` sections do not decode; every problem is listed. */
export class PluginLlmConfigError extends Data.TaggedError("PluginLlmConfigError")<{
  readonly issues: ReadonlyArray<ConfigIssue>
  readonly message: string
}> {}

/** The overrides the trust gate decides on, each granted independently. */
export type GatedOverride = "provider" | "model" | "agentId" | "profile" | "task"

/**
 * The trust gate refused an override, before any provider call. `configKey` is the full key that would allow it
 * (`plugins.entries.<id>.llm.allow_model_override`, or `...allowed_models` when the flag is on and the value is
 * not listed).
 */
export class PluginLlmTrustError extends Data.TaggedError("PluginLlmTrustError")<{
  readonly pluginId: string
  readonly override: GatedOverride
  readonly configKey: string
  readonly message: string
}> {}

/** The call's arguments are unusable: empty instructions, no input blocks, an unknown or empty block, a bad image. */
export class PluginLlmInputError extends Data.TaggedError("PluginLlmInputError")<{
  readonly field: string
  readonly message: string
}> {}

/** The JSON schema given cannot be used (recursive, not an object, too large). */
export class PluginLlmSchemaError extends Data.TaggedError("PluginLlmSchemaError")<{
  readonly message: string
  readonly cause?: unknown
}> {}

/** The call's deadline passed; `source` says which timeout applied (explicit, task config or global default). */
export class PluginLlmTimeoutError extends Data.TaggedError("PluginLlmTimeoutError")<{
  readonly timeoutMs: number
  readonly source: TimeoutSource
  readonly message: string
}> {}

/** Every route answered 429 (after its retries and the fallback chain). */
export class PluginLlmRateLimited extends Data.TaggedError("PluginLlmRateLimited")<{
  readonly hops: ReadonlyArray<FallbackHop>
  readonly message: string
}> {}

/** No route could answer: 5xx, connection failures, a provider error, or a route with no credentials. */
export class PluginLlmProviderUnavailable extends Data.TaggedError("PluginLlmProviderUnavailable")<{
  readonly hops: ReadonlyArray<FallbackHop>
  readonly message: string
}> {}

/** The caller's AbortSignal fired (or the Effect was interrupted). */
export class PluginLlmCancelled extends Data.TaggedError("PluginLlmCancelled")<{ readonly message: string }> {}

/** The plugin spent its configured call budget (`plugins.entries.<id>.llm.max_calls`). */
export class PluginLlmBudgetExceeded extends Data.TaggedError("PluginLlmBudgetExceeded")<{
  readonly pluginId: string
  readonly limit: number
  readonly message: string
}> {}

/** Which deadline ended a call: the call's own `timeout`, its task's (`auxiliary.<task>.timeout` or the plugin's default), or `llm.timeout` / 60 s. */
export type TimeoutSource = "explicit" | "task" | "default"

/** One route tried and left for the next: which, and why (no credential or body text, ever). */
export interface FallbackHop {
  readonly provider: string
  readonly model: string
  /** `http_429`, `http_503`, `network`, `provider_error`, `config`. */
  readonly reason: string
  readonly message: string
}

/** Every error a `ctx.llm` call fails with (the Promise's rejection, the Effect's failure); tell them apart by `_tag`. */
export type PluginLlmError =
  | PluginLlmTrustError
  | PluginLlmInputError
  | PluginLlmSchemaError
  | PluginLlmTimeoutError
  | PluginLlmRateLimited
  | PluginLlmProviderUnavailable
  | PluginLlmCancelled
  | PluginLlmBudgetExceeded

const TAGS: ReadonlySet<string> = new Set([
  "PluginLlmTrustError",
  "PluginLlmInputError",
  "PluginLlmSchemaError",
  "PluginLlmTimeoutError",
  "PluginLlmRateLimited",
  "PluginLlmProviderUnavailable",
  "PluginLlmCancelled",
  "PluginLlmBudgetExceeded"
])

/** Whether a value is one of the errors a `ctx.llm` call fails with. */
export const isPluginLlmError = (u: unknown): u is PluginLlmError =>
  typeof u === "object" && u !== null && "_tag" in u && TAGS.has((u as { _tag: string })._tag)
