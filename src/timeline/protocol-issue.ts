import type { BlockDelta } from "../llm/event.ts"
import type { BlockKind } from "./block-scope.ts"

/**
 * A way the event stream broke the block protocol. The timeline records it and carries on, so one bad event
 * from a provider costs that event (or that block), never the whole response.
 */
export type ProtocolIssue =
  /** A delta, stop or abort named an index with no open block; the event was dropped. */
  | { readonly kind: "unknown_block"; readonly index: number; readonly event: "block_delta" | "block_stop" | "block_abort" }
  /** A block started on an index that was still open; the open block was aborted first. */
  | { readonly kind: "duplicate_start"; readonly index: number; readonly open: BlockKind; readonly next: BlockKind }
  /** A delta of the wrong kind for its block (e.g. input JSON inside a text block); the delta was dropped. */
  | { readonly kind: "delta_mismatch"; readonly index: number; readonly block: BlockKind; readonly delta: BlockDelta["kind"] }
  /** The response ended while this block was still open; it was aborted. */
  | { readonly kind: "unclosed_block"; readonly index: number; readonly block: BlockKind }
  /**
   * The block's stop carried a final value (`block_stop.final`) that its deltas do not add up to. The final
   * value was kept: the provider's closing event is the authority, the deltas only a preview. Lengths are in
   * UTF-16 code units; the texts themselves are not repeated here.
   */
  | {
      readonly kind: "final_mismatch"
      readonly index: number
      readonly block: BlockKind
      readonly streamedLength: number
      readonly finalLength: number
    }

export const describeIssue = (issue: ProtocolIssue): string => {
  switch (issue.kind) {
    case "unknown_block":
      return `${issue.event} for block ${issue.index}, which is not open`
    case "duplicate_start":
      return `block ${issue.index} (${issue.next}) started while block ${issue.index} (${issue.open}) was open`
    case "delta_mismatch":
      return `${issue.delta} delta inside ${issue.block} block ${issue.index}`
    case "unclosed_block":
      return `${issue.block} block ${issue.index} was never stopped`
    case "final_mismatch":
      return `${issue.block} block ${issue.index}: the deltas (${issue.streamedLength} characters) disagree with the final value (${issue.finalLength} characters); the final value was kept`
  }
}
