import { anchorShapes } from "../llm/shape-anchor.ts"
import { SubscriberHub } from "./subscriber.ts"
import type { BlockDelta, BlockMeta, Event } from "../llm/event.ts"
import type { BlockPosition, BlockStop } from "../timeline/block-scope.ts"
import type { Item } from "../llm/item.ts"
import type { Request } from "../llm/request.ts"
import { type AssistantResponse, type PartialResponse, ResponseCollector } from "../timeline/assistant-response.ts"
import { describeIssue } from "../timeline/protocol-issue.ts"
import { Timeline } from "../timeline/timeline.ts"
import { takenCallIds, uniqueCallIds } from "./call-ids.ts"
import { type AbortWatch, joinAbort, unwatchAbort, type WatchList } from "../tool/abort-watch.ts"
import { AbortRace } from "./cancellation.ts"
import { ownItem } from "./owned-items.ts"
import type { StreamHookResult } from "./hooks.ts"
import type { WorkerCore } from "./worker-core.ts"
import { toWorkerError } from "./to-worker-error.ts"
import { type Cancelled, ClientFailed, HookAborted, type WorkerError, cancelledBy, cancelledFor } from "./worker-error.ts"

export interface StreamedResponse {
  readonly response: AssistantResponse
  /** The response's items as they enter history: owned (frozen) and with every call id unique in the history. */
  readonly items: ReadonlyArray<Item>
  readonly eventCount: number
}

/**
 * The signal a run's model requests are sent with: a child of the run's signal, so abandoning one response's
 * stream (a stream hook's abort, a client failure) stops its HTTP request without cancelling the run. One child
 * serves every request of a run (decision 0079): an `AbortController` costs microseconds in Node, and a stream is
 * only abandoned on the way to the run's failure, after which the next request (if any) gets a fresh child. It
 * hears the run's signal as its own abort watch (`joinAbort`), on the list the stream's race already put on that
 * signal, rather than through an event listener of its own: Node's `addEventListener` / `removeEventListener`
 * pair costs microseconds per run (decision 0085).
 */
export class RequestSignals implements AbortWatch {
  prev: AbortWatch | undefined = undefined
  next: AbortWatch | undefined = undefined
  list: WatchList | undefined = undefined
  #child: AbortController | undefined = undefined

  constructor(readonly runSignal: AbortSignal) {}

  get signal(): AbortSignal {
    let child = this.#child
    if (child === undefined) {
      child = new AbortController()
      this.#child = child
      if (this.runSignal.aborted) child.abort(this.runSignal.reason)
      else joinAbort(this.runSignal, this)
    }
    return child.signal
  }

  /** The run's signal aborted (called once by its watch list): so does the current request's. */
  run(): void {
    this.#child?.abort(this.runSignal.reason)
  }

  /** Aborts the signal handed to the current request; later requests get a new one. */
  abandon(): void {
    const child = this.#child
    this.#child = undefined
    unwatchAbort(this)
    child?.abort()
  }

  /** The run is over: stop forwarding its cancellation. */
  release(): void {
    unwatchAbort(this)
    this.#child = undefined
  }
}

/**
 * One block's events for subscribers. A class rather than three closures per block; events are built only while
 * someone is subscribed, but a text block's deltas are kept regardless, for a `text_completed` a subscriber that
 * joins mid-block still gets whole.
 */
class SubscriberBlock {
  // Only a text block's deltas are kept (for `text_completed`): a reasoning or tool block's would be a second copy
  // of the whole block, held for the response's lifetime, for nothing.
  readonly #chunks: Array<string> | undefined
  constructor(
    readonly hub: WorkerCore["hub"],
    readonly turn: number,
    readonly index: number,
    kind: BlockMeta["kind"]
  ) {
    this.#chunks = kind === "text" ? [] : undefined
  }
  onDelta(delta: BlockDelta): void {
    if (delta.kind === "text") this.#chunks?.push(delta.text)
    if (this.hub.active) this.hub.emit({ type: "block_delta", turn: this.turn, index: this.index, delta })
  }
  onStop(stop: BlockStop): void {
    if (!this.hub.active) return
    this.hub.emit({ type: "block_stop", turn: this.turn, index: this.index, stopReason: stop.stopReason })
    // The provider's final value, when its closing event stated one, is the text that enters history.
    if (this.#chunks !== undefined) this.hub.emit({ type: "text_completed", turn: this.turn, index: this.index, text: stop.final ?? this.#chunks.join("") })
  }
  onAbort(reason: string): void {
    if (this.hub.active) this.hub.emit({ type: "block_abort", turn: this.turn, index: this.index, reason })
  }
}

/** Forwards block events of one response to subscribers, each block in its own scope. */
const attachSubscribers = (core: WorkerCore, timeline: Timeline, turn: number): void => {
  const hub = core.hub
  const start = (block: BlockMeta, at: BlockPosition): SubscriberBlock => {
    if (hub.active) hub.emit({ type: "block_start", turn, index: at.index, ordinal: at.ordinal, block })
    return new SubscriberBlock(hub, turn, at.index, block.kind)
  }
  timeline.onBlock("text", start).onBlock("thinking", start).onBlock("tool_use", start)
  timeline.onMeta("usage", ({ type: _, raw, ...usage }) => hub.emit({ type: "usage", turn, usage, ...(raw === undefined ? {} : { raw }) }))
  // Unmodelled output (decision 0025) is shown as it arrives; the item that enters history is the same object.
  timeline.onProviderOutput((event, at) => hub.emit({ type: "provider_output", turn, index: at.index, ordinal: at.ordinal, item: event.item }))
  timeline.onMeta("citation", (event) =>
    hub.emit(event.index === undefined ? { type: "citation", turn, citation: event.citation } : { type: "citation", turn, index: event.index, citation: event.citation })
  )
  timeline.onMeta("provider_meta", (event) => hub.emit({ type: "provider_meta", turn, meta: event.meta }))
}

/**
 * Sends one request and consumes its stream: every event goes to the timeline, then OnStreamChunk, then
 * OnTextDelta / OnToolCallDelta; at the end OnStreamComplete. On cancel, hook abort or client failure the
 * timeline is aborted (open blocks closed) and nothing of the response is returned, so nothing enters history;
 * what it had produced rides on the error as `partial` (`Cancelled`, `HookAborted`, `ClientFailed`).
 */
export const streamResponse = async (
  core: WorkerCore,
  request: Request,
  body: string,
  turn: number,
  requests: RequestSignals
): Promise<StreamedResponse> => {
  const runSignal = requests.runSignal
  const timeline = new Timeline()
  const collector = new ResponseCollector(timeline)
  attachSubscribers(core, timeline, turn)
  const toolBlocks = new Map<number, { readonly id: string; readonly name: string }>()
  const cancelled = (): Cancelled => cancelledBy(runSignal)
  let iterator: AsyncIterator<Event> | undefined
  let eventCount = 0

  const decide = (point: string, result: StreamHookResult | undefined): void => {
    if (result === undefined || result._tag === "Continue") return
    // A stream hook's "Pause" (plain JS) is an abort too: a half-read response cannot be resumed.
    const reason = result._tag === "Abort" ? result.reason : "a stream hook asked to pause, which is treated as an abort"
    throw new HookAborted({ point, reason, message: `aborted by an ${point} hook: ${reason}` })
  }

  const trace = core.trace.request(request, turn)
  // One abort watch for the whole stream: a client that ignores its signal cannot hold the run past a cancel.
  const race = new AbortRace(runSignal, cancelled)
  try {
    iterator = core.client.stream(request, { signal: requests.signal, body })[Symbol.asyncIterator]()
    for (;;) {
      const next = await race.next(iterator.next())
      if (next.done === true) break
      const event = next.value
      eventCount++
      if (event.type === "block_start" && event.block.kind === "tool_use") {
        toolBlocks.set(event.index, { id: event.block.id, name: event.block.name })
      }
      timeline.dispatch(event)
      if (core.hooks.has("OnStreamChunk")) {
        decide("OnStreamChunk", await core.hooks.run("OnStreamChunk", () => ({ turn, event }), runSignal))
      }
      if (event.type === "block_delta") {
        if (event.delta.kind === "text" && core.hooks.has("OnTextDelta")) {
          const input = { turn, index: event.index, text: event.delta.text }
          decide("OnTextDelta", await core.hooks.run("OnTextDelta", () => input, runSignal))
        } else if (event.delta.kind === "input_json" && core.hooks.has("OnToolCallDelta")) {
          const block = toolBlocks.get(event.index)
          const input = { turn, index: event.index, callId: block?.id ?? "", name: block?.name ?? "", json: event.delta.json }
          decide("OnToolCallDelta", await core.hooks.run("OnToolCallDelta", () => input, runSignal))
        }
      }
    }
    runSignal.throwIfAborted()
  } catch (thrown) {
    requests.abandon()
    timeline.abort(runSignal.aborted ? "Cancelled" : "the response was abandoned")
    // Not awaited: a client that ignores `return()` must not hold the run.
    iterator?.return?.()?.catch(() => undefined)
    const error = withPartial(runSignal.aborted ? cancelled() : toWorkerError(thrown), collector.partial())
    trace.failed(error)
    throw error
  } finally {
    race.stop()
  }
  timeline.finish()
  const response = collector.result()
  trace.succeeded(response)
  // A malformed stream costs only the broken event or block; the UI is told what was dropped.
  for (const issue of response.issues) core.hub.emit({ type: "warning", message: `stream protocol issue: ${describeIssue(issue)}` })
  const raw = response.items
  // The ids in use are gathered (a walk over the history) only when the response made calls that need them.
  const unique = raw.some((item) => item.type === "function_call") ? uniqueCallIds(raw, takenCallIds(core.history), core.client.scheme) : raw
  const items = unique.map((item) => ownItem(item))
  if (core.hub.active) {
    // Subscribers see each call under the id it has in history (and in its tool_result), not the wire id.
    const asStored = new Map<Item, Item>(raw.map((item, at) => [item, items[at] as Item]))
    for (const block of collector.toolCalls.blocks) {
      const call = asStored.get(block.call)
      core.hub.emit({ type: "tool_call_completed", turn, index: block.index, call: call?.type === "function_call" ? call : block.call })
    }
  }
  if (core.hooks.has("OnStreamComplete")) {
    const input = { turn, eventCount, usage: response.usage, ...(response.rawUsage === undefined ? {} : { rawUsage: response.rawUsage }) }
    const verdict = await core.hooks.run("OnStreamComplete", () => input, runSignal)
    try {
      decide("OnStreamComplete", verdict)
    } catch (thrown) {
      // The whole response was read, but it does not enter history: the caller still gets it on the error.
      throw thrown instanceof HookAborted ? withPartial(thrown, collector.partial()) : thrown
    }
  }
  return { response, items, eventCount }
}

/** The failure of a response with what the response had produced; other failures are not about the response. */
const withPartial = (error: WorkerError, partial: PartialResponse): WorkerError => {
  switch (error._tag) {
    case "Cancelled":
      return cancelledFor(error.reason, partial)
    case "HookAborted":
      return new HookAborted({ point: error.point, reason: error.reason, message: error.message, partial })
    case "ClientFailed":
      return new ClientFailed({ error: error.error, message: error.message, partial })
    default:
      return error
  }
}

// Per response, dead between runs: kept once so V8 keeps their shapes (`shape-anchor.ts`).
const anchoredSignals = new RequestSignals(new AbortController().signal)
void anchoredSignals.signal
anchorShapes(new SubscriberBlock(new SubscriberHub(), 0, 0, "text"), anchoredSignals)
