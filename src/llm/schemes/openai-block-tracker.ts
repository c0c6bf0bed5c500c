import type { BlockMeta, Event, StopReason } from "../event.ts"
import type { ReasoningData } from "../item.ts"

/**
 * The open blocks of one streamed response, keyed by whatever identifies a span on the wire (choice + tool index
 * + call id for Chat, output index for Responses). Indices are handed out once per response and never reused,
 * so two parallel tool calls can never land in the same block, and closing "everything still open" is one call.
 */
export class BlockTracker {
  private nextIndex = 0
  /** Insertion order is opening order, which is the order blocks are closed in. */
  private readonly open = new Map<string, { readonly index: number; readonly kind: BlockMeta["kind"] }>()

  isOpen(key: string): boolean {
    return this.open.has(key)
  }

  indexOf(key: string): number | undefined {
    return this.open.get(key)?.index
  }

  /** An index from the same sequence for something that is not a block (a provider output, decision 0025). */
  reserve(): number {
    return this.nextIndex++
  }

  start(key: string, block: BlockMeta, out: Array<Event>): number {
    const index = this.nextIndex++
    this.open.set(key, { index, kind: block.kind })
    out.push({ type: "block_start", index, block })
    return index
  }

  /** `final`: the block's whole value from the provider's closing event (see `block_stop.final`). */
  stop(key: string, out: Array<Event>, stopReason?: StopReason, reasoning?: ReasoningData, final?: string): void {
    const entry = this.open.get(key)
    if (entry === undefined) return
    this.open.delete(key)
    out.push({
      type: "block_stop",
      index: entry.index,
      ...(stopReason === undefined ? {} : { stopReason }),
      ...(reasoning === undefined ? {} : { reasoning }),
      ...(final === undefined ? {} : { final })
    })
  }

  stopAll(out: Array<Event>, stopReason?: StopReason): void {
    for (const key of [...this.open.keys()]) this.stop(key, out, stopReason)
  }

  abortAll(reason: string, out: Array<Event>): void {
    for (const { index } of this.open.values()) out.push({ type: "block_abort", index, reason })
    this.open.clear()
  }
}
