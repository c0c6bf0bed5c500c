import { anchorShapes } from "../llm/shape-anchor.ts"
import type { RawUsage, StopReason, Usage } from "../llm/event.ts"
import type { ContentPart, Item } from "../llm/item.ts"
import type { BlockPosition } from "./block-scope.ts"
import type { ProtocolIssue } from "./protocol-issue.ts"
import { type CitationEntry, type ProviderItemBlock, ProviderItemCollector } from "./provider-item-collector.ts"
import { type ReasoningBlock, ReasoningCollector } from "./reasoning-collector.ts"
import { type TextBlock, TextCollector } from "./text-collector.ts"
import { Timeline, TimelineMisuse, type TimelineState } from "./timeline.ts"
import { type AbortedToolCall, type ToolCallBlock, ToolCallCollector } from "./tool-call-collector.ts"
import { UsageCollector } from "./usage-collector.ts"

type OutputText = Extract<ContentPart, { readonly type: "output_text" }>

/**
 * The assistant's history items in model order. Consecutive text blocks form one assistant message with one
 * `output_text` part per block; a reasoning or tool-call item in between starts a new message. Empty text blocks
 * are left out (providers reject empty text parts sent back), as is reasoning with neither text nor data.
 */
export const assistantItems = (parts: {
  readonly text: ReadonlyArray<TextBlock>
  readonly reasoning: ReadonlyArray<ReasoningBlock>
  readonly toolCalls: ReadonlyArray<ToolCallBlock>
  /** Provider outputs (decision 0025); each is an item of its own between the messages around it. */
  readonly providerItems?: ReadonlyArray<ProviderItemBlock>
}): Array<Item> => {
  type Entry = BlockPosition & { readonly item: Item | OutputText }
  // One pass per kind into one array (no spread, filter or map chains): this runs once per model response.
  const entries: Entry[] = []
  for (const block of parts.reasoning) {
    if (block.item.text !== "" || block.item.data !== undefined) entries.push({ ordinal: block.ordinal, index: block.index, item: block.item })
  }
  for (const block of parts.text) {
    if (block.text !== "") entries.push({ ordinal: block.ordinal, index: block.index, item: { type: "output_text", text: block.text } satisfies OutputText })
  }
  for (const block of parts.toolCalls) entries.push({ ordinal: block.ordinal, index: block.index, item: block.call })
  for (const block of parts.providerItems ?? []) entries.push({ ordinal: block.ordinal, index: block.index, item: block.item })
  if (entries.length > 1) entries.sort((a, b) => a.ordinal - b.ordinal)

  const items: Item[] = []
  let message: OutputText[] | undefined
  for (const { item } of entries) {
    if (item.type === "output_text") {
      if (message === undefined) {
        message = []
        items.push({ type: "message", role: "assistant", content: message })
      }
      message.push(item)
    } else {
      message = undefined
      items.push(item)
    }
  }
  return items
}

/**
 * One whole response as history items (text, reasoning, tool calls and provider items in model order), with why
 * it stopped, its usage, its citations, the tool calls it left unfinished and any protocol issues.
 */
export interface AssistantResponse {
  readonly state: Exclude<TimelineState, "open">
  readonly items: ReadonlyArray<Item>
  /** From a `completed` status when it carries one, else the last block stop that named a reason. */
  readonly stopReason: StopReason | undefined
  readonly usage: Usage
  /** The provider's own usage object (bounded copy), for counters `usage` has no field for. */
  readonly rawUsage?: RawUsage
  readonly abortedToolCalls: ReadonlyArray<AbortedToolCall>
  /** Citations for the answer (decision 0025), in arrival order; not part of `items`. */
  readonly citations: ReadonlyArray<CitationEntry>
  readonly issues: ReadonlyArray<ProtocolIssue>
  /** The model that answered, as the provider named it at the response's start (`started` status), if it did. */
  readonly model?: string | undefined
  /** The provider's id of this response, from the `started` status, if it stated one. */
  readonly responseId?: string | undefined
}

/**
 * What a response had produced by the time it ended, whether it completed or not: for a failed or cancelled
 * response, the part the caller saw streaming but that never enters history. Text and reasoning join every
 * block in model order, the stopped ones and the cut-off remainder of the aborted ones; the client's response
 * limits (`maxTextBytes`, `maxReasoningBytes`) bound both, since no event past them reaches the timeline.
 */
export interface PartialResponse {
  readonly text: string
  readonly reasoning: string
  readonly usage: Usage
  readonly rawUsage?: RawUsage
}

const joinByOrdinal = (parts: ReadonlyArray<{ readonly ordinal: number; readonly text: string }>): string =>
  [...parts].sort((a, b) => a.ordinal - b.ordinal).map((part) => part.text).join("")

/** Attaches every built-in collector to a timeline and, once it is done, assembles the assistant's response. */
export class ResponseCollector {
  readonly text: TextCollector
  readonly reasoning: ReasoningCollector
  readonly toolCalls: ToolCallCollector
  readonly usage: UsageCollector
  readonly providerItems: ProviderItemCollector
  readonly #timeline: Timeline
  #completedStop: StopReason | undefined
  #lastBlockStop: StopReason | undefined
  #model: string | undefined
  #responseId: string | undefined

  constructor(timeline: Timeline) {
    this.#timeline = timeline
    this.text = new TextCollector(timeline)
    this.reasoning = new ReasoningCollector(timeline)
    this.toolCalls = new ToolCallCollector(timeline)
    this.usage = new UsageCollector(timeline)
    this.providerItems = new ProviderItemCollector(timeline)
    timeline.onMeta("status", (event) => {
      if (event.status === "completed" && event.stopReason !== undefined) this.#completedStop = event.stopReason
      else if (event.status === "started") {
        this.#model = event.model
        this.#responseId = event.responseId
      }
    })
    const scope = {
      onStop: (stop: { readonly stopReason?: StopReason }) => {
        if (stop.stopReason !== undefined) this.#lastBlockStop = stop.stopReason
      }
    }
    timeline.onBlock("text", () => scope).onBlock("thinking", () => scope).onBlock("tool_use", () => scope)
  }

  /** Throws `TimelineMisuse` while the timeline is still open: a response read mid-stream would be partial. */
  result(): AssistantResponse {
    const state = this.#timeline.state
    if (state === "open") {
      throw new TimelineMisuse({ message: "cannot read the response: its timeline is still open; call finish() first" })
    }
    const items = assistantItems({
      text: this.text.blocks,
      reasoning: this.reasoning.blocks,
      toolCalls: this.toolCalls.blocks,
      providerItems: this.providerItems.blocks
    })
    const stopReason = this.#completedStop ?? this.#lastBlockStop
    const usage = this.usage.usage
    const rawUsage = this.usage.raw
    const abortedToolCalls = this.toolCalls.aborted
    const citations = this.providerItems.citations
    const issues = this.#timeline.issues
    const model = this.#model
    const responseId = this.#responseId
    // Two literals rather than a spread of the optional `rawUsage`: a literal's shape outlives the last response
    // at a full collection, the fields a spread is followed by do not (decision 0085). `model` and `responseId`
    // are always keys, undefined when unknown, for the same reason.
    return rawUsage === undefined
      ? { state, items, stopReason, usage, abortedToolCalls, citations, issues, model, responseId }
      : { state, items, stopReason, usage, rawUsage, abortedToolCalls, citations, issues, model, responseId }
  }

  /**
   * The text, reasoning and usage so far, aborted blocks included (see `PartialResponse`). Like `result()`, it
   * throws `TimelineMisuse` while the timeline is open: blocks still streaming are not collected yet.
   */
  partial(): PartialResponse {
    const state = this.#timeline.state
    if (state === "open") {
      throw new TimelineMisuse({ message: "cannot read the partial response: its timeline is still open; call finish() or abort() first" })
    }
    return {
      text: joinByOrdinal([
        ...this.text.blocks,
        ...this.text.aborted.map((block) => ({ ordinal: block.ordinal, text: block.partialText }))
      ]),
      reasoning: joinByOrdinal([
        ...this.reasoning.blocks.map((block) => ({ ordinal: block.ordinal, text: block.item.text })),
        ...this.reasoning.aborted.map((block) => ({ ordinal: block.ordinal, text: block.partialText }))
      ]),
      usage: this.usage.usage,
      ...this.#rawUsage()
    }
  }

  #rawUsage(): { readonly rawUsage?: RawUsage } {
    const raw = this.usage.raw
    return raw === undefined ? {} : { rawUsage: raw }
  }
}

// A response's timeline and collectors are made per response and all die between runs: keep one of each (empty)
// so that V8 keeps their shapes and the code optimised for them (`shape-anchor.ts`).
anchorShapes(new ResponseCollector(new Timeline()))
