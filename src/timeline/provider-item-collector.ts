import type { Citation } from "../llm/event.ts"
import type { ProviderItem } from "../llm/item.ts"
import type { BlockPosition } from "./block-scope.ts"
import { insertByOrdinal } from "./ordered.ts"
import type { Timeline } from "./timeline.ts"

export interface ProviderItemBlock extends BlockPosition {
  readonly item: ProviderItem
}

/** A citation and, when known, the index of the text block it annotates. */
export interface CitationEntry {
  /** The text block the citation annotates, when the provider said which. */
  readonly index?: number
  readonly citation: Citation
}

/**
 * Keeps every provider output (decision 0025) with its position in model order, so `assistantItems` can put it
 * between the text and calls around it, and every citation in arrival order.
 */
export class ProviderItemCollector {
  readonly #blocks: ProviderItemBlock[] = []
  readonly #citations: CitationEntry[] = []

  constructor(timeline: Timeline) {
    timeline.onProviderOutput((event, at) => insertByOrdinal(this.#blocks, { index: at.index, ordinal: at.ordinal, item: event.item }))
    timeline.onMeta("citation", (event) =>
      this.#citations.push(event.index === undefined ? { citation: event.citation } : { index: event.index, citation: event.citation })
    )
  }

  get blocks(): ReadonlyArray<ProviderItemBlock> {
    return this.#blocks
  }

  get items(): ReadonlyArray<ProviderItem> {
    return this.#blocks.map((block) => block.item)
  }

  get citations(): ReadonlyArray<CitationEntry> {
    return this.#citations
  }
}
