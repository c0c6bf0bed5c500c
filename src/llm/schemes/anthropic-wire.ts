/**
 * The Anthropic Messages streaming events this library reads, as the API documents them. Every field is optional
 * because the decoder must survive a provider omitting fields; it checks what it uses. The unions list the types
 * we model — the API has more (server tools and their results), which the decoder keeps whole as provider items by
 * their `type` at run time (decision 0025).
 */

/** Read as untrusted: any field may hold another type; the decoder checks each value it uses. */
export interface AnthropicUsage {
  readonly input_tokens?: number | null
  readonly output_tokens?: number | null
  readonly cache_creation_input_tokens?: number | null
  readonly cache_read_input_tokens?: number | null
  /** Sent with extended thinking: the part of `output_tokens` spent thinking. */
  readonly output_tokens_details?: { readonly thinking_tokens?: number | null } | null
  /** Everything else (`cache_creation`, `server_tool_use`, `service_tier`, …), kept only in the raw usage. */
  readonly [field: string]: unknown
}

export type AnthropicContentBlock =
  | { readonly type: "text"; readonly text?: string }
  | { readonly type: "thinking"; readonly thinking?: string; readonly signature?: string }
  | { readonly type: "redacted_thinking"; readonly data?: string }
  | { readonly type: "tool_use"; readonly id?: string; readonly name?: string; readonly input?: unknown }

export type AnthropicDelta =
  | { readonly type: "text_delta"; readonly text?: string }
  | { readonly type: "thinking_delta"; readonly thinking?: string }
  | { readonly type: "signature_delta"; readonly signature?: string }
  | { readonly type: "input_json_delta"; readonly partial_json?: string }
  | { readonly type: "citations_delta"; readonly citation?: unknown }

export type AnthropicStreamEvent =
  | {
      readonly type: "message_start"
      readonly message?: { readonly id?: unknown; readonly model?: unknown; readonly usage?: AnthropicUsage }
    }
  | { readonly type: "content_block_start"; readonly index: number; readonly content_block: AnthropicContentBlock }
  | { readonly type: "content_block_delta"; readonly index: number; readonly delta: AnthropicDelta }
  | { readonly type: "content_block_stop"; readonly index: number }
  | {
      readonly type: "message_delta"
      readonly delta?: { readonly stop_reason?: string | null }
      readonly usage?: AnthropicUsage
    }
  | { readonly type: "message_stop" }
  | { readonly type: "ping" }
  | { readonly type: "error"; readonly error?: { readonly type?: string; readonly message?: string } }
