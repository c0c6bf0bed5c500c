import { TaggedError } from "../error/tagged-error.ts"
import type { JsonObject } from "../schema/json-schema.ts"
import type { ResponseLimitName } from "./limits.ts"

/** The provider answered with a non-success HTTP status (after retries, when the status was retryable). */
export class LlmHttpError extends TaggedError("LlmHttpError")<{
  readonly status: number
  readonly body: string
  readonly message: string
}> {}

/**
 * A deadline passed: waiting for response headers, for the first content, idle between two events, or the
 * whole request's optional `total` deadline (attempts and back-off included).
 */
export class LlmTimeout extends TaggedError("LlmTimeout")<{
  readonly phase: "headers" | "first_event" | "idle" | "total"
  readonly afterMs: number
  readonly message: string
}> {}

/**
 * The connection failed or broke (DNS, refused, reset, truncated body); `cause` is fetch's own error. A refused
 * connection to this machine names the local server to start ("is Ollama running there?").
 */
export class LlmNetworkError extends TaggedError("LlmNetworkError")<{ readonly message: string }> {}

/**
 * The provider reported an error inside the stream (e.g. Anthropic `overloaded_error`, Groq `tool_use_failed`).
 * `raw` is the provider's error object as it came, for fields `code` and `message` do not carry (Groq's
 * `failed_generation`: the tool call it refused); a bounded, frozen copy (`RAW_ERROR_BOUNDS`).
 */
export class LlmProviderError extends TaggedError("LlmProviderError")<{
  readonly code: string
  readonly message: string
  readonly raw?: JsonObject
}> {}

/** The stream broke the wire format (invalid JSON in an event, an impossible event order). */
export class LlmProtocolError extends TaggedError("LlmProtocolError")<{ readonly message: string }> {}

/**
 * The response passed one of the client's size bounds (`limits` in `createLlmClient`): `limit` names the
 * option, `max` is its value and `seen` how much had arrived when the bound was passed. Never retried.
 */
export class LlmLimitExceeded extends TaggedError("LlmLimitExceeded")<{
  readonly limit: ResponseLimitName
  readonly max: number
  readonly seen: number
  readonly message: string
}> {}

/** The caller's AbortSignal fired; `reason` (and `cause`) is the signal's reason. */
export class LlmCancelled extends TaggedError("LlmCancelled")<{
  readonly message: string
  readonly reason?: unknown
  readonly cause?: unknown
}> {}

/**
 * No credentials or an unusable configuration (unknown provider, missing model, a base URL that is not an
 * absolute http(s) URL). `option`: the option at fault, when one is; `suggestion`: a corrected value, when one can
 * be given (`"http://localhost:8080"` for `"localhost:8080"`).
 */
export class LlmConfigError extends TaggedError("LlmConfigError")<{
  readonly message: string
  readonly option?: string
  readonly suggestion?: string
}> {}

/** Every way an LLM call can fail, each a tagged error (`_tag`); narrow with `isLlmError` and a `switch` on `_tag`. */
export type LlmError =
  | LlmHttpError
  | LlmTimeout
  | LlmNetworkError
  | LlmProviderError
  | LlmProtocolError
  | LlmLimitExceeded
  | LlmCancelled
  | LlmConfigError

const TAGS: ReadonlySet<string> = new Set([
  "LlmHttpError",
  "LlmTimeout",
  "LlmNetworkError",
  "LlmProviderError",
  "LlmProtocolError",
  "LlmLimitExceeded",
  "LlmCancelled",
  "LlmConfigError"
])

/** Whether `u` is one of the `LlmError` classes (by tag). */
export const isLlmError = (u: unknown): u is LlmError =>
  typeof u === "object" && u !== null && "_tag" in u && TAGS.has((u as { _tag: string })._tag)
