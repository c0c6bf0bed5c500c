/**
 * The parts of Gemini's `GenerateContentResponse` this library reads, as the API reference documents them.
 * Fields are optional because a stream chunk carries only what changed.
 */

export interface GeminiPart {
  readonly text?: string
  /** True on thought-summary parts (only sent when `includeThoughts` is on); never visible text. */
  readonly thought?: boolean
  readonly thoughtSignature?: string
  readonly functionCall?: {
    readonly id?: string
    readonly name?: string
    readonly args?: unknown
    /**
     * Streamed arguments (only when the request sets `streamFunctionCallArguments`; Vertex AI, not in the Gemini
     * API's v1beta reference): pieces `{jsonPath, stringValue | numberValue | boolValue | nullValue, willContinue}`.
     */
    readonly partialArgs?: unknown
    /** True while more parts of this streamed call follow; a part without it ends the call. */
    readonly willContinue?: boolean
  }
}

export interface GeminiUsageMetadata {
  readonly promptTokenCount?: number
  readonly candidatesTokenCount?: number
  readonly totalTokenCount?: number
  readonly cachedContentTokenCount?: number
  readonly thoughtsTokenCount?: number
  readonly toolUsePromptTokenCount?: number
}

export interface GeminiStreamChunk {
  readonly candidates?: ReadonlyArray<{
    readonly content?: { readonly parts?: ReadonlyArray<GeminiPart>; readonly role?: string }
    readonly finishReason?: string
    readonly index?: number
    /** Sources for a grounded answer (Google Search, URL context); kept as a citation. */
    readonly groundingMetadata?: unknown
    readonly urlContextMetadata?: unknown
  }>
  readonly promptFeedback?: { readonly blockReason?: string }
  readonly usageMetadata?: GeminiUsageMetadata
  /** The model version that answers and the response's id; every chunk repeats them. Untrusted: checked on use. */
  readonly modelVersion?: unknown
  readonly responseId?: unknown
  /** A failure reported inside the stream (google.rpc.Status), e.g. `UNAVAILABLE` when the model is overloaded. */
  readonly error?: { readonly code?: number; readonly status?: string; readonly message?: string }
}
