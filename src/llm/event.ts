import type { ReasoningData } from "./item.ts"

/**
 * The provider-neutral stream. Meta events (ping, usage, status, error) stand alone; block events open, fill and
 * close one span of output. `index` is unique within one response and assigned by the scheme's decoder (it keys
 * blocks by provider index and call id, so parallel tool calls never share a block).
 */

export type StopReason = "end_turn" | "max_tokens" | "stop_sequence" | "tool_use" | "content_filter" | "other"

export type BlockMeta =
  | { readonly kind: "text" }
  | { readonly kind: "thinking" }
  | { readonly kind: "tool_use"; readonly id: string; readonly name: string; readonly thoughtSignature?: string }

export type BlockDelta =
  | { readonly kind: "text"; readonly text: string }
  | { readonly kind: "thinking"; readonly text: string }
  | { readonly kind: "input_json"; readonly json: string }

export interface Usage {
  readonly inputTokens?: number
  readonly outputTokens?: number
  readonly totalTokens?: number
  readonly cacheReadTokens?: number
  readonly cacheWriteTokens?: number
}

export type Event =
  | { readonly type: "ping" }
  | ({ readonly type: "usage" } & Usage)
  | {
      readonly type: "status"
      readonly status: "started" | "completed" | "cancelled" | "failed"
      /** On `completed`: why the response ended, as the provider reported it for the whole response. */
      readonly stopReason?: StopReason
    }
  | { readonly type: "error"; readonly code: string; readonly message: string }
  | { readonly type: "block_start"; readonly index: number; readonly block: BlockMeta }
  | { readonly type: "block_delta"; readonly index: number; readonly delta: BlockDelta }
  | {
      readonly type: "block_stop"
      readonly index: number
      readonly stopReason?: StopReason
      /** For thinking blocks: what the provider needs to accept this reasoning back. */
      readonly reasoning?: ReasoningData
      /**
       * The block's whole value as the provider's closing event states it: the text of a text block, the
       * reasoning text of a thinking block, the argument JSON of a tool_use block. When present it is the
       * authority and the deltas were a preview: consumers take this value, and the timeline reports a
       * `final_mismatch` issue when the deltas do not add up to it. Absent: the deltas are the value.
       */
      readonly final?: string
    }
  | { readonly type: "block_abort"; readonly index: number; readonly reason: string }
