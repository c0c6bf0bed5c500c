import { Stream } from "effect"
import type { BlockDelta, BlockMeta, StopReason, Usage } from "../llm/event.ts"
import type { FunctionCallItem } from "../llm/item.ts"
import type { CacheReport } from "./cache-lock.ts"
import type { ToolOutcome } from "./tool-outcome.ts"
import type { WorkerError } from "./worker-error.ts"
import { describeThrown } from "../tool/tool-constructors.ts"

/**
 * The UI-facing view of a worker. Block events carry the block's index (its scope) and its ordinal (position in
 * the response), so parallel blocks can be rendered side by side. Nothing here can change the run: that is
 * what hooks are for.
 */
export type WorkerEvent =
  | { readonly type: "turn_start"; readonly turn: number }
  | { readonly type: "turn_end"; readonly turn: number; readonly toolCalls: number }
  | { readonly type: "block_start"; readonly turn: number; readonly index: number; readonly ordinal: number; readonly block: BlockMeta }
  | { readonly type: "block_delta"; readonly turn: number; readonly index: number; readonly delta: BlockDelta }
  | { readonly type: "block_stop"; readonly turn: number; readonly index: number; readonly stopReason: StopReason | undefined }
  | { readonly type: "block_abort"; readonly turn: number; readonly index: number; readonly reason: string }
  | { readonly type: "text_completed"; readonly turn: number; readonly index: number; readonly text: string }
  | { readonly type: "tool_call_completed"; readonly turn: number; readonly index: number; readonly call: FunctionCallItem }
  | { readonly type: "tool_result"; readonly outcome: ToolOutcome }
  | { readonly type: "usage"; readonly turn: number; readonly usage: Usage }
  | { readonly type: "status"; readonly status: "running" | "finished" | "paused" | "failed" }
  | { readonly type: "error"; readonly error: WorkerError }
  | { readonly type: "cache_report"; readonly report: CacheReport }
  | { readonly type: "warning"; readonly message: string }

export type WorkerEventOf<T extends WorkerEvent["type"]> = Extract<WorkerEvent, { readonly type: T }>

/** One optional callback per event kind, plus `onEvent` for everything. */
export interface Subscriber {
  readonly onEvent?: (event: WorkerEvent) => void
  readonly onTurnStart?: (event: WorkerEventOf<"turn_start">) => void
  readonly onTurnEnd?: (event: WorkerEventOf<"turn_end">) => void
  readonly onBlockStart?: (event: WorkerEventOf<"block_start">) => void
  readonly onBlockDelta?: (event: WorkerEventOf<"block_delta">) => void
  readonly onBlockStop?: (event: WorkerEventOf<"block_stop">) => void
  readonly onBlockAbort?: (event: WorkerEventOf<"block_abort">) => void
  /** Text deltas only (a convenience over `onBlockDelta`). */
  readonly onText?: (text: string, event: WorkerEventOf<"block_delta">) => void
  readonly onTextCompleted?: (event: WorkerEventOf<"text_completed">) => void
  readonly onToolCallCompleted?: (event: WorkerEventOf<"tool_call_completed">) => void
  readonly onToolResult?: (event: WorkerEventOf<"tool_result">) => void
  readonly onUsage?: (event: WorkerEventOf<"usage">) => void
  readonly onStatus?: (event: WorkerEventOf<"status">) => void
  readonly onError?: (event: WorkerEventOf<"error">) => void
  readonly onCacheReport?: (event: WorkerEventOf<"cache_report">) => void
  readonly onWarning?: (event: WorkerEventOf<"warning">) => void
}

type Handlers = { readonly [T in WorkerEvent["type"]]: (s: Subscriber, e: WorkerEventOf<T>) => void }

const HANDLERS: Handlers = {
  turn_start: (s, e) => s.onTurnStart?.(e),
  turn_end: (s, e) => s.onTurnEnd?.(e),
  block_start: (s, e) => s.onBlockStart?.(e),
  block_delta: (s, e) => {
    s.onBlockDelta?.(e)
    if (e.delta.kind === "text") s.onText?.(e.delta.text, e)
  },
  block_stop: (s, e) => s.onBlockStop?.(e),
  block_abort: (s, e) => s.onBlockAbort?.(e),
  text_completed: (s, e) => s.onTextCompleted?.(e),
  tool_call_completed: (s, e) => s.onToolCallCompleted?.(e),
  tool_result: (s, e) => s.onToolResult?.(e),
  usage: (s, e) => s.onUsage?.(e),
  status: (s, e) => s.onStatus?.(e),
  error: (s, e) => s.onError?.(e),
  cache_report: (s, e) => s.onCacheReport?.(e),
  warning: (s, e) => s.onWarning?.(e)
}

/**
 * Fans worker events out to subscribers. A subscriber that throws misses only that one delivery and the others
 * get a warning saying so: a UI bug must not break the run it is watching, nor go unnoticed.
 */
export class SubscriberHub {
  readonly #subscribers = new Set<{ readonly subscriber: Subscriber }>()

  subscribe(subscriber: Subscriber): () => void {
    // An entry per subscription, so the same object can be subscribed twice and unsubscribed independently; the
    // subscriber itself is kept (not copied), so methods of a class instance are called with their `this`.
    const entry = { subscriber }
    this.#subscribers.add(entry)
    return () => {
      this.#subscribers.delete(entry)
    }
  }

  emit(event: WorkerEvent): void {
    for (const { subscriber } of [...this.#subscribers]) {
      try {
        subscriber.onEvent?.(event)
        ;(HANDLERS[event.type] as (s: Subscriber, e: WorkerEvent) => void)(subscriber, event)
      } catch (thrown) {
        // The run goes on (see the class comment), but the failure is said once, to every subscriber.
        if (event.type !== "warning") {
          this.emit({ type: "warning", message: `a subscriber threw on "${event.type}": ${describeThrown(thrown)}` })
        }
      }
    }
  }

  /**
   * Events as an async iterable. Subscribes when iteration starts and unsubscribes when the loop exits (break,
   * return, throw). Events are buffered, so a slow consumer sees every event in order.
   */
  events(): AsyncIterable<WorkerEvent> {
    return { [Symbol.asyncIterator]: () => this.#iterator() }
  }

  /** Events as an Effect `Stream`; interrupting the stream unsubscribes. */
  stream(): Stream.Stream<WorkerEvent> {
    return Stream.fromAsyncIterable(this.events(), (thrown) => {
      throw thrown
    })
  }

  #iterator(): AsyncIterator<WorkerEvent> {
    const buffer: Array<WorkerEvent> = []
    let wake: ((result: IteratorResult<WorkerEvent>) => void) | undefined
    let done = false
    const unsubscribe = this.subscribe({
      onEvent: (event) => {
        if (wake === undefined) {
          buffer.push(event)
          return
        }
        const resolve = wake
        wake = undefined
        resolve({ value: event, done: false })
      }
    })
    const finish = (): Promise<IteratorResult<WorkerEvent>> => {
      done = true
      unsubscribe()
      buffer.length = 0
      const resolve = wake
      wake = undefined
      resolve?.({ value: undefined, done: true })
      return Promise.resolve({ value: undefined, done: true })
    }
    return {
      next: () => {
        const event = buffer.shift()
        if (event !== undefined) return Promise.resolve({ value: event, done: false })
        if (done) return Promise.resolve({ value: undefined, done: true })
        return new Promise((resolve) => {
          wake = resolve
        })
      },
      return: finish
    }
  }
}
