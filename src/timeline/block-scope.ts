import type { BlockDelta, BlockMeta, Event } from "../llm/event.ts"

/**
 * The types a block handler works with, narrowed per block kind so a text handler can only ever be given text
 * deltas and a tool handler only input-JSON fragments.
 */

export type BlockKind = BlockMeta["kind"]

/** The `BlockMeta` of block kind `K`. */
export type BlockMetaOf<K extends BlockKind> = Extract<BlockMeta, { readonly kind: K }>

/** The delta kind each block kind accepts; anything else is a protocol issue, never handed to a scope. */
export const DELTA_KIND_OF = {
  text: "text",
  thinking: "thinking",
  tool_use: "input_json"
} as const satisfies Record<BlockKind, BlockDelta["kind"]>

/** The `BlockDelta` that blocks of kind `K` receive. */
export type BlockDeltaOf<K extends BlockKind> = Extract<BlockDelta, { readonly kind: (typeof DELTA_KIND_OF)[K] }>

/** The `block_stop` event. */
export type BlockStop = Extract<Event, { readonly type: "block_stop" }>

/** The events that belong to no block: `ping`, `usage`, `status`, `error`, `citation` and `provider_meta`. */
export type MetaEvent = Extract<Event, { readonly type: "ping" | "usage" | "status" | "error" | "citation" | "provider_meta" }>

/** Output of a kind the library does not model, whole (decision 0025); it has a place in model order like a block. */
export type ProviderOutput = Extract<Event, { readonly type: "provider_output" }>

/** The meta event of type `T`. */
export type MetaEventOf<T extends MetaEvent["type"]> = Extract<MetaEvent, { readonly type: T }>

/** Where a block sits in its response: the provider-assigned index and its position in block start order. */
export interface BlockPosition {
  readonly index: number
  /** 0 for the first block started in the response, 1 for the next…; model order across all block kinds. */
  readonly ordinal: number
}

/**
 * The state of one handler for one block. A fresh scope is made for every block, so whatever it accumulates
 * belongs to that block alone. Exactly one of `onStop` / `onAbort` is called, once, and nothing after it.
 */
export interface BlockScope<K extends BlockKind> {
  /** Each piece of the block's content, in order. */
  onDelta?(delta: BlockDeltaOf<K>): void
  /** The block ended normally; `stop.final` is the provider's whole value when it sent one. */
  onStop?(stop: BlockStop): void
  /** The block will never stop: the response ended, failed or was cancelled first. */
  onAbort?(reason: string): void
}

/** Called when a block of kind `K` starts; returns the scope that receives the rest of that block. */
export type BlockStart<K extends BlockKind> = (meta: BlockMetaOf<K>, at: BlockPosition) => BlockScope<K>
