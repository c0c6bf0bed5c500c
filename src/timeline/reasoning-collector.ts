import type { ReasoningItem } from "../llm/item.ts"
import type { BlockPosition } from "./block-scope.ts"
import { insertByOrdinal } from "./ordered.ts"
import type { Timeline } from "./timeline.ts"

export interface ReasoningBlock extends BlockPosition {
  readonly item: ReasoningItem
}

export interface AbortedReasoningBlock extends BlockPosition {
  readonly reason: string
  /** What had arrived before the abort: for display only, never sent back (it has no closing data). */
  readonly partialText: string
}

/**
 * Turns every stopped thinking block into a `ReasoningItem`: its text plus the opaque data the provider sent
 * with the block stop (signature, encrypted content), which it needs to accept the reasoning back. An aborted
 * thinking block is dropped — without its closing data no provider would take it back.
 */
export class ReasoningCollector {
  readonly #blocks: ReasoningBlock[] = []
  readonly #aborted: AbortedReasoningBlock[] = []

  constructor(timeline: Timeline) {
    timeline.onBlock("thinking", (_meta, at) => {
      const chunks: string[] = []
      return {
        onDelta: (delta) => {
          chunks.push(delta.text)
        },
        onStop: (stop) => {
          const text = stop.final ?? chunks.join("")
          const item: ReasoningItem =
            stop.reasoning === undefined
              ? { type: "reasoning", text }
              : { type: "reasoning", text, data: stop.reasoning }
          insertByOrdinal(this.#blocks, { index: at.index, ordinal: at.ordinal, item })
        },
        onAbort: (reason) =>
          insertByOrdinal(this.#aborted, { index: at.index, ordinal: at.ordinal, reason, partialText: chunks.join("") })
      }
    })
  }

  get blocks(): ReadonlyArray<ReasoningBlock> {
    return this.#blocks
  }

  get items(): ReadonlyArray<ReasoningItem> {
    return this.#blocks.map((block) => block.item)
  }

  get aborted(): ReadonlyArray<AbortedReasoningBlock> {
    return this.#aborted
  }
}
