import type { Event } from "./event.ts"
import type { Request } from "./request.ts"
import type { LintTarget } from "../schema/lint.ts"
import type { ConfigWarning, SchemeName } from "./scheme.ts"

/** Options of one `LlmClient.stream` call. */
export interface StreamOptions {
  /** Cancels the request at any point: before headers, between events, during retries' back-off. */
  readonly signal?: AbortSignal
  /**
   * The body `encodeRequest(request)` produced for this very request, when the caller already has it (the
   * Worker encodes each request once to verify its cache lock); saves encoding it twice.
   */
  readonly body?: string
}

/**
 * What the Worker talks to: one provider + model behind one wire format. `stream` yields neutral events and
 * throws an `LlmError` (see `llm-error.ts`) when the call fails after its retries; `LlmCancelled` when the signal
 * fires. `encodeRequest` is the exact body `stream` would send, used for cache-prefix verification.
 */
export interface LlmClient {
  readonly scheme: SchemeName
  /** The provider rules tool schemas are linted against at registration; `scheme` when absent. */
  readonly toolLintTarget?: LintTarget
  /** The provider's name as resolved at creation (`"anthropic"`, `"ollama"`…). */
  readonly provider: string
  /** The model every request of this client names. */
  readonly model: string
  /**
   * Sends `request` and yields the response as neutral events, retrying as the client's retry policy allows.
   * Rejects with an `LlmError` when the call fails for good, `LlmCancelled` when `options.signal` fires.
   */
  stream(request: Request, options?: StreamOptions): AsyncIterable<Event>
  /** The exact body `stream` sends for `request`, byte-identical for the same request. */
  encodeRequest(request: Request): string
  /** The settings of `request` this client's provider cannot honour, as warnings. */
  validate(request: Request): ReadonlyArray<ConfigWarning>
}
