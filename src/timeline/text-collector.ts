import type { BlockPosition } from "./block-scope.ts"
import { insertByOrdinal } from "./ordered.ts"
import type { Timeline } from "./timeline.ts"

export interface TextBlock extends BlockPosition {
  readonly text: string
}

export interface AbortedTextBlock extends BlockPosition {
  readonly reason: string
  /** What had arrived before the abort: for display only, never part of the committed response. */
  readonly partialText: string
}

/** Gathers the whole text of every stopped text block, in block start order. */
export class TextCollector {
  readonly #blocks: TextBlock[] = []
  readonly #aborted: AbortedTextBlock[] = []

  constructor(timeline: Timeline) {
    timeline.onBlock("text", (_meta, at) => {
      // Chunks are joined once at the end: concatenating per delta copies a long text over and over.
      const chunks: string[] = []
      return {
        onDelta: (delta) => {
          chunks.push(delta.text)
        },
        // A final value from the provider's closing event is the authority; the deltas were its preview.
        onStop: (stop) =>
          insertByOrdinal(this.#blocks, { index: at.index, ordinal: at.ordinal, text: stop.final ?? chunks.join("") }),
        onAbort: (reason) =>
          insertByOrdinal(this.#aborted, { index: at.index, ordinal: at.ordinal, reason, partialText: chunks.join("") })
      }
    })
  }

  get blocks(): ReadonlyArray<TextBlock> {
    return this.#blocks
  }

  get aborted(): ReadonlyArray<AbortedTextBlock> {
    return this.#aborted
  }

  /** The text of all stopped blocks joined together. */
  get text(): string {
    return this.#blocks.map((block) => block.text).join("")
  }
}
