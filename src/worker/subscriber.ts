import { Stream } from "effect"
import type { BlockDelta, BlockMeta, Citation, ProviderMeta, RawUsage, StopReason, Usage } from "../llm/event.ts"
import type { FunctionCallItem, ProviderItem } from "../llm/item.ts"
import type { CacheReport } from "./cache-lock.ts"
import type { ToolOutcome } from "./tool-outcome.ts"
import { EventBufferOverflow, type WorkerError } from "./worker-error.ts"
import { describeSafely } from "./describe-safely.ts"

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
  /**
   * Output of a kind the library does not model (a hosted tool's call or result, a custom-tool call, a code
   * part; decision 0025), whole. It enters history as it is; the Worker never executes it.
   */
  | { readonly type: "provider_output"; readonly turn: number; readonly index: number; readonly ordinal: number; readonly item: ProviderItem }
  /** A source the provider cites for the answer; `index` is the text block it annotates when known. */
  | { readonly type: "citation"; readonly turn: number; readonly index?: number; readonly citation: Citation }
  /** A report about the response that is not output (OpenAI's moderation results), as the provider's object. */
  | { readonly type: "provider_meta"; readonly turn: number; readonly meta: ProviderMeta }
  | { readonly type: "usage"; readonly turn: number; readonly usage: Usage; readonly raw?: RawUsage }
  | { readonly type: "status"; readonly status: "running" | "finished" | "paused" | "failed" }
  | { readonly type: "error"; readonly error: WorkerError }
  | { readonly type: "cache_report"; readonly report: CacheReport }
  | { readonly type: "warning"; readonly message: string }

/** The `WorkerEvent` of type `T`. */
export type WorkerEventOf<T extends WorkerEvent["type"]> = Extract<WorkerEvent, { readonly type: T }>

/** One optional callback per event kind, plus `onEvent` for everything. */
export interface Subscriber {
  /** Every event, before the callback for its kind. */
  readonly onEvent?: (event: WorkerEvent) => void
  /** A model request starts (`turn` counts from 1 within the run). */
  readonly onTurnStart?: (event: WorkerEventOf<"turn_start">) => void
  /** A model request ended, with how many tool calls it made. */
  readonly onTurnEnd?: (event: WorkerEventOf<"turn_end">) => void
  /** A text, thinking or tool-call block of the response starts. */
  readonly onBlockStart?: (event: WorkerEventOf<"block_start">) => void
  /** A piece of a block's content arrived. */
  readonly onBlockDelta?: (event: WorkerEventOf<"block_delta">) => void
  /** A block ended normally. */
  readonly onBlockStop?: (event: WorkerEventOf<"block_stop">) => void
  /** A block was cut off (the response failed or was cancelled first). */
  readonly onBlockAbort?: (event: WorkerEventOf<"block_abort">) => void
  /** Text deltas only (a convenience over `onBlockDelta`). */
  readonly onText?: (text: string, event: WorkerEventOf<"block_delta">) => void
  /** A text block's whole text. */
  readonly onTextCompleted?: (event: WorkerEventOf<"text_completed">) => void
  /** A tool call the model finished, before it runs. */
  readonly onToolCallCompleted?: (event: WorkerEventOf<"tool_call_completed">) => void
  /** The outcome of one tool call, as it enters history. */
  readonly onToolResult?: (event: WorkerEventOf<"tool_result">) => void
  /** An output kind the library does not model, whole (decision 0025). */
  readonly onProviderOutput?: (event: WorkerEventOf<"provider_output">) => void
  /** A source the provider cites for the answer. */
  readonly onCitation?: (event: WorkerEventOf<"citation">) => void
  /** A report about the response that is not output (moderation results). */
  readonly onProviderMeta?: (event: WorkerEventOf<"provider_meta">) => void
  /** Token usage of one response. */
  readonly onUsage?: (event: WorkerEventOf<"usage">) => void
  /** The run's status changed (`running`, `finished`, `paused`, `failed`). */
  readonly onStatus?: (event: WorkerEventOf<"status">) => void
  /** The run failed with this error (also thrown by `run()`). */
  readonly onError?: (event: WorkerEventOf<"error">) => void
  /** Per request: how much of the body repeated the previous one, and whether the locked prefix held. */
  readonly onCacheReport?: (event: WorkerEventOf<"cache_report">) => void
  /** Something non-fatal the run reports (a cache-lock violation with `onViolation: "warn"`, dropped calls…). */
  readonly onWarning?: (event: WorkerEventOf<"warning">) => void
}

/** `track` receives what a callback returned, so a promise from an async subscriber can be caught. */
type Handlers = {
  readonly [T in WorkerEvent["type"]]: (s: Subscriber, e: WorkerEventOf<T>, track: (returned: unknown) => void) => void
}

const HANDLERS: Handlers = {
  turn_start: (s, e, track) => track(s.onTurnStart?.(e)),
  turn_end: (s, e, track) => track(s.onTurnEnd?.(e)),
  block_start: (s, e, track) => track(s.onBlockStart?.(e)),
  block_delta: (s, e, track) => {
    track(s.onBlockDelta?.(e))
    if (e.delta.kind === "text") track(s.onText?.(e.delta.text, e))
  },
  block_stop: (s, e, track) => track(s.onBlockStop?.(e)),
  block_abort: (s, e, track) => track(s.onBlockAbort?.(e)),
  text_completed: (s, e, track) => track(s.onTextCompleted?.(e)),
  tool_call_completed: (s, e, track) => track(s.onToolCallCompleted?.(e)),
  tool_result: (s, e, track) => track(s.onToolResult?.(e)),
  provider_output: (s, e, track) => track(s.onProviderOutput?.(e)),
  citation: (s, e, track) => track(s.onCitation?.(e)),
  provider_meta: (s, e, track) => track(s.onProviderMeta?.(e)),
  usage: (s, e, track) => track(s.onUsage?.(e)),
  status: (s, e, track) => track(s.onStatus?.(e)),
  error: (s, e, track) => track(s.onError?.(e)),
  cache_report: (s, e, track) => track(s.onCacheReport?.(e)),
  warning: (s, e, track) => track(s.onWarning?.(e))
}

/** Bounds of one `events()` iterator's buffer of unread events. */
export interface EventsOptions {
  /** Unread events held before the iterator overflows (default 10,000). */
  readonly maxBufferedEvents?: number
  /** Unread characters of block deltas (text, reasoning, argument fragments) held before it overflows (default 1 Mi). */
  readonly maxBufferedChars?: number
}

/** Unread events an `events()` iterator holds before it overflows, unless `EventsOptions` says otherwise. */
export const DEFAULT_MAX_BUFFERED_EVENTS = 10_000
/**
 * Unread delta characters an `events()` iterator holds before it overflows (1 Mi), unless `EventsOptions` says otherwise.
 */
export const DEFAULT_MAX_BUFFERED_CHARS = 1024 * 1024

type Entry = { readonly subscriber: Subscriber }

/** A thenable's `then`, read without trusting the value (a Proxy or getter may throw; the caller catches). */
const thenOf = (value: unknown): ((onFulfilled: undefined, onRejected: (reason: unknown) => void) => unknown) | undefined => {
  if ((typeof value !== "object" && typeof value !== "function") || value === null) return undefined
  const then: unknown = (value as { then?: unknown }).then
  return typeof then === "function" ? (then.bind(value) as never) : undefined
}

/** The characters an event holds that a consumer has not seen elsewhere: only deltas are new text. */
const deltaChars = (event: WorkerEvent): number =>
  event.type === "block_delta" ? (event.delta.kind === "input_json" ? event.delta.json.length : event.delta.text.length) : 0

/**
 * Fans worker events out to subscribers. A subscriber that throws, or whose returned promise rejects, misses
 * only that one delivery and the other subscribers get a warning saying so: a UI bug must not break the run it
 * is watching, nor go unnoticed, nor surface later as an unhandled rejection that ends the process.
 */
export class SubscriberHub {
  readonly #subscribers = new Set<Entry>()

  subscribe(subscriber: Subscriber): () => void {
    // An entry per subscription, so the same object can be subscribed twice and unsubscribed independently; the
    // subscriber itself is kept (not copied), so methods of a class instance are called with their `this`.
    const entry = { subscriber }
    this.#subscribers.add(entry)
    return () => {
      this.#subscribers.delete(entry)
    }
  }

  /** Whether anyone listens: callers skip building events nobody would receive. */
  get active(): boolean {
    return this.#subscribers.size > 0
  }

  emit(event: WorkerEvent): void {
    if (this.#subscribers.size === 0) return
    for (const entry of [...this.#subscribers]) {
      const { subscriber } = entry
      const failed = (thrown: unknown): void => {
        // Warnings are not re-reported: a subscriber failing on every warning would otherwise loop forever.
        if (event.type !== "warning") this.#warn(`a subscriber threw on "${event.type}": ${describeSafely(thrown)}`, entry)
      }
      try {
        // Subscribers are typed as returning nothing, but an async function is assignable to that type: its
        // promise is caught here, and its rejection reported like a synchronous throw.
        const track = (returned: unknown): void => void thenOf(returned)?.(undefined, failed)
        track(subscriber.onEvent?.(event))
        ;(HANDLERS[event.type] as (s: Subscriber, e: WorkerEvent, t: typeof track) => void)(subscriber, event, track)
      } catch (thrown) {
        failed(thrown)
      }
    }
  }

  /** A warning to every subscriber except the one it is about. */
  #warn(message: string, except: Entry): void {
    const event: WorkerEvent = { type: "warning", message }
    for (const entry of [...this.#subscribers]) {
      if (entry === except) continue
      try {
        const a: unknown = entry.subscriber.onEvent?.(event)
        const b: unknown = entry.subscriber.onWarning?.(event)
        // A rejection of a warning delivery is swallowed: reporting it would be another warning.
        for (const returned of [a, b]) thenOf(returned)?.(undefined, () => undefined)
      } catch {
        // As above: a subscriber that fails on a warning is not reported again.
      }
    }
  }

  /**
   * Events as an async iterable. Subscribes when iteration starts and unsubscribes when the loop exits (break,
   * return, throw). Unread events are buffered so a slow consumer sees every event in order — up to a bound:
   * past it the iterator stops collecting, yields what it holds, then throws `EventBufferOverflow` where the
   * loss begins. Memory stays bounded for a consumer that never reads, and no event is silently missing.
   */
  events(options?: EventsOptions): AsyncIterable<WorkerEvent> {
    const bounds = {
      events: positive(options?.maxBufferedEvents, DEFAULT_MAX_BUFFERED_EVENTS, "maxBufferedEvents"),
      chars: positive(options?.maxBufferedChars, DEFAULT_MAX_BUFFERED_CHARS, "maxBufferedChars")
    }
    return { [Symbol.asyncIterator]: () => this.#iterator(bounds) }
  }

  /** Events as an Effect `Stream`; interrupting the stream unsubscribes. Fails with the iterator's overflow. */
  stream(options?: EventsOptions): Stream.Stream<WorkerEvent, EventBufferOverflow> {
    return Stream.fromAsyncIterable(this.events(options), (thrown) => {
      if (thrown instanceof EventBufferOverflow) return thrown
      throw thrown
    })
  }

  #iterator(bounds: { readonly events: number; readonly chars: number }): AsyncIterator<WorkerEvent> {
    const buffer: Array<WorkerEvent> = []
    let head = 0
    let chars = 0
    let wake: ((result: IteratorResult<WorkerEvent>) => void) | undefined
    let done = false
    // Only the facts of the loss are kept, not an error: an error made here would capture the emitting stack, and
    // V8 keeps each frame's function and receiver until `.stack` is read, so the overflow would pin the response's
    // timeline and block accumulators (megabytes of a long answer) for as long as the iterator lives.
    let overflow: { readonly limit: "events" | "chars"; readonly max: number } | undefined
    const unsubscribe = this.subscribe({
      onEvent: (event) => {
        if (wake !== undefined) {
          const resolve = wake
          wake = undefined
          resolve({ value: event, done: false })
          return
        }
        const size = deltaChars(event)
        const limit = buffer.length - head >= bounds.events ? "events" : chars + size > bounds.chars ? "chars" : undefined
        if (limit !== undefined) {
          // Stop listening at the point of loss: nothing after it is kept, so memory stays bounded.
          overflow = { limit, max: limit === "events" ? bounds.events : bounds.chars }
          unsubscribe()
          return
        }
        buffer.push(event)
        chars += size
      }
    })
    const finish = (): Promise<IteratorResult<WorkerEvent>> => {
      done = true
      unsubscribe()
      buffer.length = 0
      head = 0
      const resolve = wake
      wake = undefined
      resolve?.({ value: undefined, done: true })
      return Promise.resolve({ value: undefined, done: true })
    }
    return {
      next: () => {
        if (head < buffer.length) {
          const event = buffer[head++] as WorkerEvent
          chars -= deltaChars(event)
          // Compact now and then, so a long-lived iterator's array does not keep every event it ever held.
          if (head > 1024 && head * 2 > buffer.length) {
            buffer.splice(0, head)
            head = 0
          }
          return Promise.resolve({ value: event, done: false })
        }
        if (done) return Promise.resolve({ value: undefined, done: true })
        if (overflow !== undefined) {
          const { limit, max } = overflow
          done = true
          buffer.length = 0
          return Promise.reject(
            new EventBufferOverflow({
              limit,
              max,
              message: `events() was not read fast enough: more than ${max} unread ${limit === "events" ? "events" : "delta characters"} (later events were dropped)`
            })
          )
        }
        return new Promise((resolve) => {
          wake = resolve
        })
      },
      return: finish
    }
  }
}

const positive = (value: number | undefined, fallback: number, name: string): number => {
  if (value === undefined) return fallback
  if (!Number.isInteger(value) || value < 1) throw new RangeError(`${name} must be a positive integer, got ${String(value)}`)
  return value
}
