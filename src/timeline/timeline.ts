import { TaggedError } from "../error/tagged-error.ts"
import type { Event } from "../llm/event.ts"
import {
  type BlockKind,
  type BlockScope,
  type BlockStart,
  DELTA_KIND_OF,
  type BlockPosition,
  type MetaEvent,
  type MetaEventOf,
  type ProviderOutput
} from "./block-scope.ts"
import type { ProtocolIssue } from "./protocol-issue.ts"

/**
 * A timeline was used out of turn: fed or extended after `finish()` / `abort()` (each response needs a timeline
 * of its own), or its response read before it was done.
 */
export class TimelineMisuse extends TaggedError("TimelineMisuse")<{ readonly message: string }> {}

/** A timeline is `open` while events arrive, then `finished` (the response ended) or `aborted`. */
export type TimelineState = "open" | "finished" | "aborted"

interface OpenBlock {
  readonly kind: BlockKind
  readonly deltaKind: string
  readonly scopes: ReadonlyArray<BlockScope<BlockKind>>
  /**
   * The deltas' text so far, to hold against a final value on the block's stop. References to the delta
   * strings, not copies; joined only when a final value arrives.
   */
  readonly chunks: string[]
  /** Set when the block ends, so a handler that aborts the timeline mid-dispatch stops the remaining scopes. */
  closed: boolean
}

type MetaListeners = { [T in MetaEvent["type"]]: Array<(event: MetaEventOf<T>) => void> }
type BlockStarts = { [K in BlockKind]: Array<BlockStart<K>> }

/** The reason given to open blocks when the response ends without stopping them. */
export const UNCLOSED_BLOCK_REASON = "response ended before the block was stopped"

/**
 * Dispatches the neutral events of ONE response to handlers. Meta events go straight to their listeners; each
 * block gets one fresh scope per registered handler of its kind, keyed by the block's index, so parallel blocks
 * never share state. A malformed stream is recorded as protocol issues instead of throwing. A block stop with a
 * final value is the authority over the block's deltas: handlers take the final value, and deltas that do not
 * add up to it are reported (`final_mismatch`). `finish()` or
 * `abort()` closes every open block as aborted and ends the timeline; using it afterwards throws
 * `TimelineMisuse`, which keeps anything of an aborted response from leaking into the next one.
 */
export class Timeline {
  readonly #open = new Map<number, OpenBlock>()
  readonly #starts: BlockStarts = { text: [], thinking: [], tool_use: [] }
  readonly #meta: MetaListeners = { ping: [], usage: [], status: [], error: [], citation: [], provider_meta: [] }
  readonly #providerOutputListeners: Array<(event: ProviderOutput, at: BlockPosition) => void> = []
  readonly #issueListeners: Array<(issue: ProtocolIssue) => void> = []
  readonly #issues: ProtocolIssue[] = []
  #state: TimelineState = "open"
  #ordinal = 0

  get state(): TimelineState {
    return this.#state
  }

  get done(): boolean {
    return this.#state !== "open"
  }

  get issues(): ReadonlyArray<ProtocolIssue> {
    return this.#issues
  }

  /** Indices of the blocks that are open right now, in start order. */
  get openBlocks(): ReadonlyArray<number> {
    return [...this.#open.keys()]
  }

  /** Calls `start` for every block of this kind started from now on; the returned scope receives that block. */
  onBlock<K extends BlockKind>(kind: K, start: BlockStart<K>): this {
    this.#ensureOpen("register a block handler")
    this.#starts[kind].push(start)
    return this
  }

  /** Calls `listener` for every meta event of `type` (`usage`, `status`, `error`, `ping`, `citation`) from now on. */
  onMeta<T extends MetaEvent["type"]>(type: T, listener: (event: MetaEventOf<T>) => void): this {
    this.#ensureOpen("register a meta listener")
    this.#meta[type].push(listener)
    return this
  }

  /**
   * Calls `listener` for every provider output (an unmodelled output kind, whole) from now on, with its position:
   * it takes the next ordinal, so it sorts between the blocks around it.
   */
  onProviderOutput(listener: (event: ProviderOutput, at: BlockPosition) => void): this {
    this.#ensureOpen("register a provider output listener")
    this.#providerOutputListeners.push(listener)
    return this
  }

  /** Calls `listener` for every protocol issue (an event that does not fit the block protocol), instead of throwing. */
  onIssue(listener: (issue: ProtocolIssue) => void): this {
    this.#ensureOpen("register an issue listener")
    this.#issueListeners.push(listener)
    return this
  }

  /** Feeds one event: routes block events to their block's scope and the rest to their listeners. */
  dispatch(event: Event): void {
    this.#ensureOpen(`dispatch a ${event.type} event`)
    switch (event.type) {
      case "block_delta": {
        const block = this.#open.get(event.index)
        if (block === undefined) return this.#report({ kind: "unknown_block", index: event.index, event: event.type })
        if (event.delta.kind !== block.deltaKind) {
          return this.#report({ kind: "delta_mismatch", index: event.index, block: block.kind, delta: event.delta.kind })
        }
        block.chunks.push(event.delta.kind === "input_json" ? event.delta.json : event.delta.text)
        for (const scope of block.scopes) {
          if (block.closed) return
          scope.onDelta?.(event.delta)
        }
        return
      }
      case "block_start": {
        const previous = this.#open.get(event.index)
        if (previous !== undefined) {
          this.#report({ kind: "duplicate_start", index: event.index, open: previous.kind, next: event.block.kind })
          this.#close(event.index, previous, `block ${event.index} started again while open`)
          if (this.done) return
        }
        this.#start(event.index, event.block)
        return
      }
      case "block_stop": {
        const block = this.#open.get(event.index)
        if (block === undefined) return this.#report({ kind: "unknown_block", index: event.index, event: event.type })
        this.#open.delete(event.index)
        block.closed = true
        if (event.final !== undefined) {
          const streamed = block.chunks.join("")
          if (streamed !== event.final) {
            this.#report({
              kind: "final_mismatch",
              index: event.index,
              block: block.kind,
              streamedLength: streamed.length,
              finalLength: event.final.length
            })
          }
        }
        for (const scope of block.scopes) scope.onStop?.(event)
        return
      }
      case "block_abort": {
        const block = this.#open.get(event.index)
        if (block === undefined) return this.#report({ kind: "unknown_block", index: event.index, event: event.type })
        this.#close(event.index, block, event.reason)
        return
      }
      case "provider_output": {
        const at = { index: event.index, ordinal: this.#ordinal++ }
        for (const listener of this.#providerOutputListeners) listener(event, at)
        return
      }
      default: {
        const listeners = this.#meta[event.type] as Array<(event: MetaEvent) => void>
        for (const listener of listeners) listener(event)
      }
    }
  }

  /** The response ended: blocks still open are aborted (and reported), and the timeline is finished. */
  finish(): void {
    this.#ensureOpen("finish")
    this.#state = "finished"
    // Usually every block has stopped: no copy of an empty map to walk.
    if (this.#open.size === 0) return
    for (const [index, block] of [...this.#open]) {
      this.#report({ kind: "unclosed_block", index, block: block.kind })
      this.#close(index, block, UNCLOSED_BLOCK_REASON)
    }
  }

  /**
   * Cancel: every open block is aborted with `reason`. A no-op once the timeline is done, because a cancel can
   * race the natural end of the stream and losing that race is not a mistake.
   */
  abort(reason: string): void {
    if (this.done) return
    this.#state = "aborted"
    for (const [index, block] of [...this.#open]) this.#close(index, block, reason)
  }

  #start(index: number, meta: Parameters<BlockStart<BlockKind>>[0]): void {
    const at = { index, ordinal: this.#ordinal++ }
    const starts = this.#starts[meta.kind] as Array<BlockStart<BlockKind>>
    const scopes = starts.map((start) => start(meta, at))
    this.#open.set(index, { kind: meta.kind, deltaKind: DELTA_KIND_OF[meta.kind], scopes, chunks: [], closed: false })
  }

  #close(index: number, block: OpenBlock, reason: string): void {
    this.#open.delete(index)
    block.closed = true
    for (const scope of block.scopes) scope.onAbort?.(reason)
  }

  #report(issue: ProtocolIssue): void {
    this.#issues.push(issue)
    for (const listener of this.#issueListeners) listener(issue)
  }

  #ensureOpen(action: string): void {
    if (this.#state !== "open") {
      throw new TimelineMisuse({
        message: `cannot ${action}: this timeline is ${this.#state}; start a new Timeline for each response`
      })
    }
  }
}
