import type { Event, StopReason } from "../event.ts"
import type { StreamDecoder } from "../scheme.ts"
import type { ToolNameMap } from "../../schema/tool-names.ts"
import { defaultResponseLimits, heldOnlyTally, limitExceeded } from "../limits.ts"
import { utf8Length } from "../../tool/output-limit.ts"
import type { ArgumentTally, ResponseLimits } from "../limits.ts"
import { clip, quote } from "../../schema/quote.ts"
import { parsedJsonText } from "../json-text.ts"
import { providerJsonText } from "../provider-item.ts"
import { errorEvent } from "../raw-error.ts"
import { startedEvent } from "../response-meta.ts"
import { ResponseCallIds } from "./call-ids.ts"
import { BlockTracker } from "./openai-block-tracker.ts"
import { CHAT_USAGE, usageEvent } from "./openai-usage.ts"
import { asFiniteNumber, asString, codeField, isRecord, parseDataObject, stringField } from "./openai-wire.ts"
import type { JsonRecord } from "./openai-wire.ts"
import { randomUuid } from "../random-uuid.ts"

const FINISH_REASONS: Readonly<Record<string, StopReason>> = {
  stop: "end_turn",
  length: "max_tokens",
  tool_calls: "tool_use",
  function_call: "tool_use",
  content_filter: "content_filter"
}

/**
 * `data.trim()`, skipping the call when the data starts and ends with printable ASCII (every JSON chunk does):
 * nothing would be trimmed, and this runs on every chunk.
 */
const trimmed = (data: string): string => {
  const first = data.charCodeAt(0)
  const last = data.charCodeAt(data.length - 1)
  return first > 0x20 && first < 0x7f && last > 0x20 && last < 0x7f ? data : data.trim()
}

/** One tool call being streamed. Its block opens once the name is known (the first chunk, on every known server). */
interface ToolSlot {
  readonly key: string
  /** The id the server sent (undefined when none), which continuation chunks repeat on some servers. */
  readonly wireId: string | undefined
  /** The call's id in the response: the server's, unless missing or already taken by another call. */
  readonly id: string
  name: string
  /** Argument text that arrived before the name; flushed into the block when it opens. */
  pending: string
  pendingBytes: number
}

export interface ChatDecoderOptions {
  /**
   * Prefix for call ids made up when a compatible server sends a tool call without one. Unique per decoder by
   * default, so generated ids never collide with those of earlier turns in the same history.
   */
  readonly generatedIdPrefix?: string
  /** Bounds argument text held before its call's name arrives (`maxArgumentBytes`, `maxTotalArgumentBytes`). */
  readonly limits?: ResponseLimits
  /** The transport's count of what the response passed on, which held text is checked with (`DecoderOptions`). */
  readonly argumentTally?: ArgumentTally
}

/**
 * Chat Completions chunks → neutral events. Text, reasoning (`reasoning_content` / `reasoning`, sent by some
 * compatible servers) and every tool call get their own block; tool calls are keyed by (index, id) because some
 * servers reuse index 0 for each of several parallel calls. `finish_reason` closes every open block. Every call
 * of a response has its own id: a missing one is generated, a repeated one disambiguated (`ResponseCallIds`).
 */
export const makeOpenAiChatDecoder = (names?: ToolNameMap, options: ChatDecoderOptions = {}): StreamDecoder => {
  const blocks = new BlockTracker()
  /** The call currently streaming at each wire index, and every call of the response in order of appearance. */
  const slots = new Map<number, ToolSlot>()
  const calls: Array<ToolSlot> = []
  const idPrefix = options.generatedIdPrefix ?? `call_${randomUuid().slice(0, 8)}_`
  let generated = 0
  const ids = new ResponseCallIds(() => `${idPrefix}${generated++}`)
  const limits = options.limits ?? defaultResponseLimits
  const maxArgumentBytes = limits.maxArgumentBytes
  const tally = options.argumentTally ?? heldOnlyTally(limits)
  /** Argument text held back by all calls whose names have not arrived yet. */
  let heldBytes = 0
  let started = false
  let sawToolCall = false
  let stopReason: StopReason | undefined
  let lastUsage: JsonRecord | undefined
  let done = false

  const fail = (code: string, message: string, out: Array<Event>, error?: unknown) => {
    blocks.abortAll(message, out)
    if (lastUsage !== undefined) out.push(usageEvent(lastUsage, CHAT_USAGE))
    out.push(errorEvent(code, message, error), { type: "status", status: "failed" })
    done = true
  }

  const complete = (out: Array<Event>) => {
    if (stopReason === undefined) finish(undefined, out)
    if (lastUsage !== undefined) out.push(usageEvent(lastUsage, CHAT_USAGE))
    out.push({ type: "status", status: "completed", ...(stopReason === undefined ? {} : { stopReason }) })
    done = true
  }

  /** The reasoning is over once the answer or a call begins. */
  const endThinking = (out: Array<Event>) => blocks.stop("thinking", out)

  const openTool = (slot: ToolSlot, out: Array<Event>) => {
    endThinking(out)
    const name = names === undefined ? slot.name : names.fromWire(slot.name)
    const index = blocks.start(slot.key, { kind: "tool_use", id: slot.id, name }, out)
    if (slot.pending !== "") out.push({ type: "block_delta", index, delta: { kind: "input_json", json: slot.pending } })
    slot.pending = ""
    heldBytes -= slot.pendingBytes
    slot.pendingBytes = 0
  }

  const toolDelta = (call: JsonRecord, position: number, out: Array<Event>) => {
    // Fields read by name, as in `choiceDelta`.
    const wireIndex = asFiniteNumber(call["index"]) ?? position
    const id = asString(call["id"]) || undefined
    const fn = call["function"]
    const name = isRecord(fn) ? asString(fn["name"]) : undefined
    const args = isRecord(fn) ? asString(fn["arguments"]) : undefined
    let slot = slots.get(wireIndex)
    // A new id, or a second name without an id, at an index already in use: a server reusing index 0 per call.
    const anotherCall = slot !== undefined && (id !== undefined ? id !== slot.wireId : name !== undefined && name !== "" && slot.name !== "")
    if (slot === undefined || anotherCall) {
      const callId = ids.take(id)
      slot = { key: `tool:${wireIndex}:${callId}`, wireId: id, id: callId, name: "", pending: "", pendingBytes: 0 }
      slots.set(wireIndex, slot)
      calls.push(slot)
      sawToolCall = true
    }
    if (name !== undefined && name !== "" && slot.name === "") slot.name = name
    const index = blocks.indexOf(slot.key)
    if (index === undefined && slot.name !== "") openTool(slot, out)
    if (args === undefined || args === "") return
    const open = blocks.indexOf(slot.key)
    if (open === undefined) {
      // Only a server that sends arguments before the name gets here; what it holds back is still one call's.
      const bytes = utf8Length(args)
      slot.pendingBytes += bytes
      if (slot.pendingBytes > maxArgumentBytes) {
        throw limitExceeded("maxArgumentBytes", maxArgumentBytes, slot.pendingBytes, ` (call ${quote(slot.id)}, before its name)`)
      }
      // Many calls without names each under the per-call bound must not add up past the response's.
      heldBytes += bytes
      tally.checkHeld(heldBytes, " (held before the calls' names)")
      slot.pending += args
    } else out.push({ type: "block_delta", index: open, delta: { kind: "input_json", json: args } })
  }

  const textDelta = (key: "text" | "thinking", text: string, out: Array<Event>) => {
    if (key === "text") endThinking(out)
    let index = blocks.indexOf(key)
    if (index === undefined) index = blocks.start(key, { kind: key }, out)
    out.push({ type: "block_delta", index, delta: { kind: key, text } })
  }

  function finish(reason: string | undefined, out: Array<Event>) {
    // A call whose name never arrived still gets a block: the worker answers it with an error result.
    for (const slot of calls) if (!blocks.isOpen(slot.key) && slot.name === "") openTool(slot, out)
    slots.clear()
    calls.length = 0
    const mapped = reason === undefined ? "end_turn" : (FINISH_REASONS[reason] ?? "other")
    // Several compatible servers say "stop" after tool calls; the calls are what the worker must act on.
    stopReason = mapped === "end_turn" && sawToolCall ? "tool_use" : mapped
    blocks.stopAll(out, stopReason)
  }

  /**
   * One choice's delta. Its fields are read by name here, not through `stringField`: a helper reading every key
   * of every chunk is one megamorphic lookup per field, and this runs on every chunk (decision 0088).
   */
  const choiceDelta = (delta: JsonRecord, out: Array<Event>) => {
    const reasoningContent = delta["reasoning_content"]
    const reasoning = typeof reasoningContent === "string" ? reasoningContent : delta["reasoning"]
    if (typeof reasoning === "string" && reasoning !== "") textDelta("thinking", reasoning, out)
    const content = delta["content"]
    if (typeof content === "string" && content !== "") textDelta("text", content, out)
    const refusal = delta["refusal"]
    if (typeof refusal === "string" && refusal !== "") textDelta("text", refusal, out)
    const calls = delta["tool_calls"]
    if (Array.isArray(calls)) {
      for (let i = 0; i < calls.length; i++) {
        const call: unknown = calls[i]
        if (isRecord(call)) toolDelta(call, i, out)
      }
    }
  }

  const chunk = (record: JsonRecord, out: Array<Event>) => {
    // Read before the error branch: OpenRouter sends the failure and the usage it billed in one chunk.
    const usage = record["usage"]
    if (isRecord(usage)) lastUsage = usage
    const error = record["error"]
    if (error !== undefined) {
      const detail = isRecord(error) ? error : {}
      const code = codeField(detail, "code") ?? stringField(detail, "type") ?? "provider_error"
      fail(code, stringField(detail, "message") ?? clip(parsedJsonText(error), 2000), out, error)
      return
    }
    if (!started) {
      started = true
      out.push(startedEvent(record["model"], record["id"]))
    }
    // Moderated completions: the results ride on a chunk of their own (null on every other chunk).
    const moderation = record["moderation"]
    if (isRecord(moderation)) out.push({ type: "provider_meta", meta: { scheme: "openai-chat", kind: "moderation", json: providerJsonText(moderation, "Chat moderation") } })
    const choices = record["choices"]
    if (Array.isArray(choices)) {
      for (let c = 0; c < choices.length; c++) {
        const choice: unknown = choices[c]
        if (!isRecord(choice)) continue
        const delta = choice["delta"]
        if (isRecord(delta)) choiceDelta(delta, out)
        const reason = choice["finish_reason"]
        if (typeof reason === "string") finish(reason, out)
      }
    }
  }

  return {
    push(message) {
      if (done) return []
      const out: Array<Event> = []
      const data = trimmed(message.data)
      if (data === "[DONE]") {
        complete(out)
        return out
      }
      const record = parseDataObject(data)
      if (record === undefined) fail("invalid_response", `chat chunk is not a JSON object: ${data.slice(0, 200)}`, out)
      else chunk(record, out)
      return out
    },
    isComplete: () => !done && stopReason !== undefined,
    end() {
      if (done) return []
      const out: Array<Event> = []
      // OpenAI always ends with [DONE]; a server that stops after finish_reason has still finished the response.
      if (stopReason !== undefined) complete(out)
      else fail("incomplete_stream", "the stream ended before the response finished", out)
      return out
    }
  }
}
