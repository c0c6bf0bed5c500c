import type { Event, StopReason, Usage } from "../event.ts"
import { parsedJsonText } from "../json-text.ts"
import { defaultResponseLimits, heldOnlyTally } from "../limits.ts"
import { LlmProtocolError } from "../llm-error.ts"
import { randomUuid } from "../random-uuid.ts"
import { startedEvent } from "../response-meta.ts"
import { boundedRawUsage } from "../raw-usage.ts"
import { errorEvent } from "../raw-error.ts"
import { providerItem, providerJsonText } from "../provider-item.ts"
import type { DecoderOptions, SseMessage, StreamDecoder } from "../scheme.ts"
import { neutralUsage } from "../usage.ts"
import { ResponseCallIds } from "./call-ids.ts"
import { GeminiPartialArgs } from "./gemini-partial-args.ts"
import { quote } from "../../schema/quote.ts"
import type { GeminiPart, GeminiStreamChunk, GeminiUsageMetadata } from "./gemini-wire.ts"

/**
 * Call ids this library made up for function calls Gemini sent without one. The request encoder recognises the
 * prefix and does not send such ids back to Gemini, which never issued them.
 */
export const GENERATED_CALL_ID_PREFIX = "llmw_gemini_"

export const isGeneratedCallId = (callId: string): boolean => callId.startsWith(GENERATED_CALL_ID_PREFIX)

export interface GeminiDecoderOptions {
  /**
   * Supplies an id for a function call that has none. Must never repeat, and must start with
   * `GENERATED_CALL_ID_PREFIX` (`llmw_gemini_`): that prefix is how requests know never to send a made-up id to
   * Gemini. The default uses random UUIDs.
   */
  readonly newCallId?: () => string
  /**
   * Whether a function call with this (wire) name is one the provider executes itself (a server-side MCP tool),
   * so it is kept as a provider item instead of being offered to the caller to run. Absent: none is.
   */
  readonly isServerCall?: (name: string) => boolean
}

/** Part fields the decoder models; a part with none of the payload ones is kept whole (decision 0025). */
const MODELLED_PART_KEYS: ReadonlySet<string> = new Set(["text", "thought", "thoughtSignature", "functionCall"])

/** A part that carries something besides text, thoughts and calls: executableCode, codeExecutionResult, a server call's functionResponse, inline data… */
const isUnmodelledPart = (part: GeminiPart): boolean =>
  part.text === undefined && part.functionCall === undefined && Object.keys(part).some((key) => !MODELLED_PART_KEYS.has(key))

/** The part's payload key (`executableCode`, …), its name as a provider item kind. */
const partKind = (part: GeminiPart): string => Object.keys(part).find((key) => !MODELLED_PART_KEYS.has(key)) ?? "part"

/** Appends `more` to `events` in place, without spreading. */
const append = (events: Array<Event>, more: ReadonlyArray<Event>): void => {
  for (let i = 0; i < more.length; i++) events.push(more[i] as Event)
}

const randomCallId = (): string => `${GENERATED_CALL_ID_PREFIX}${randomUuid()}`

const FINISH_REASONS: Readonly<Record<string, StopReason>> = {
  STOP: "end_turn",
  MAX_TOKENS: "max_tokens",
  SAFETY: "content_filter",
  RECITATION: "content_filter",
  BLOCKLIST: "content_filter",
  PROHIBITED_CONTENT: "content_filter",
  SPII: "content_filter",
  IMAGE_SAFETY: "content_filter"
}

/** Gemini reports STOP for a turn that ends in function calls; the neutral stream calls that tool_use. */
export const geminiStopReason = (finishReason: string, sawFunctionCall: boolean): StopReason => {
  const reason = FINISH_REASONS[finishReason] ?? "other"
  return reason === "end_turn" && sawFunctionCall ? "tool_use" : reason
}

/**
 * Neutral usage from Gemini's counters. Gemini counts thinking apart from the answer (`thoughtsTokenCount`);
 * the neutral `outputTokens` includes it, as OpenAI's and Anthropic's do (and `totalTokenCount` confirms the
 * reading by arithmetic). `promptTokenCount` already includes the cached part; the prompt of hosted tools
 * (`toolUsePromptTokenCount`) is input too.
 */
const neutralGeminiUsage = (usage: GeminiUsageMetadata): Usage => {
  const prompt = usage.promptTokenCount
  const toolUse = usage.toolUsePromptTokenCount
  const isCount = (value: unknown): value is number => typeof value === "number" && Number.isSafeInteger(value) && value >= 0
  return neutralUsage(
    {
      input: isCount(prompt) ? prompt + (isCount(toolUse) ? toolUse : 0) : undefined,
      output: usage.candidatesTokenCount,
      total: usage.totalTokenCount,
      reasoning: usage.thoughtsTokenCount,
      cacheRead: usage.cachedContentTokenCount
    },
    "output_excludes_reasoning"
  )
}

const NO_FIELDS: object = Object.freeze({})

/** Whether plain objects inherit an enumerable property (a polluted `Object.prototype`), which for…in would list. */
const inheritsEnumerable = (): boolean => {
  for (const _key in NO_FIELDS) return true
  return false
}

/**
 * Each chunk's usageMetadata is a snapshot of the counts so far; some chunks carry only `trafficType`. Later
 * non-null fields win, so such a chunk does not erase the counts. Gemini sends usage with every chunk, so the
 * fields are gathered in a map as they come (the keys are the provider's, "__proto__" included: a map, not
 * assignment) and made into one object when usage is reported; rebuilding the object per chunk was half the
 * decoder's time (decision 0075).
 */
const mergeUsage = (fields: Map<string, unknown> | undefined, next: unknown): Map<string, unknown> | undefined => {
  if (typeof next !== "object" || next === null || Array.isArray(next)) return fields
  const merged = fields ?? new Map<string, unknown>()
  const source = next as Record<string, unknown>
  if (inheritsEnumerable()) {
    for (const key of Object.keys(source)) {
      const value = source[key]
      if (value !== null && value !== undefined) merged.set(key, value)
    }
    return merged
  }
  // for…in reads a parsed object's own keys in Object.keys order from V8's enum cache: no key array, and no
  // keyed lookup per field by a key that differs from field to field (this runs on every chunk, decision 0088).
  for (const key in source) {
    const value = source[key]
    if (value !== null && value !== undefined) merged.set(key, value)
  }
  return merged
}

const parseChunk = (message: SseMessage): GeminiStreamChunk => {
  try {
    const parsed: unknown = JSON.parse(message.data)
    if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)) return parsed as GeminiStreamChunk
  } catch {
    // reported below with the offending text
  }
  throw new LlmProtocolError({ message: `Gemini stream: data is not a JSON object: ${message.data.slice(0, 200)}` })
}

interface OpenBlock {
  readonly index: number
  readonly kind: "text" | "thinking"
  signature: string | undefined
}

/** A function call whose arguments are still streaming (`willContinue`); its tool_use block is open. */
interface StreamedCall {
  readonly index: number
  /** The id Gemini sent with the call's name, if any; a continuation naming another id is not this call's. */
  readonly wireId: string | undefined
  readonly args: GeminiPartialArgs
  /** Where its held text is, for `maxTotalArgumentBytes`'s message. */
  readonly where: string
}

/**
 * Decodes one `streamGenerateContent?alt=sse` response (first candidate). Text parts run together into one text
 * block until another kind of part arrives; thought parts likewise into one thinking block. A function call
 * usually arrives whole and becomes a complete tool_use block at once; with streamed arguments (decision 0022) its
 * block opens at the part with the name and `willContinue`, the `partialArgs` of the following parts rebuild the
 * arguments, and the first part without `willContinue` ends it with the arguments as one delta. A streamed call
 * that something else interrupts (text, another call, `finishReason`, the end) is aborted, never run on half its
 * arguments. `finishReason` closes whatever is open; parts after it still count (the server may go on, e.g. after
 * a server-side tool) and the last `finishReason` wins; usage and `completed` follow at `end()`, since Gemini may
 * send a last usage-only chunk after it. Every call has its own id: a missing one gets a generated id, a repeated
 * one is renamed behind the same prefix (never sent back to Gemini, see decision 0010).
 */
export const createGeminiDecoder = (options: GeminiDecoderOptions = {}, transport: DecoderOptions = {}): StreamDecoder => {
  const newCallId = options.newCallId ?? randomCallId
  const limits = transport.limits ?? defaultResponseLimits
  const maxArgumentBytes = limits.maxArgumentBytes
  const tally = transport.argumentTally ?? heldOnlyTally(limits)
  // A repeated id is renamed behind the generated-id prefix: an id Gemini did not issue must never be sent back.
  const ids = new ResponseCallIds(newCallId, { prefix: GENERATED_CALL_ID_PREFIX })
  let current: OpenBlock | undefined
  let streamed: StreamedCall | undefined
  let nextIndex = 0
  let started = false
  /** Set by finishReason; completion is reported at `end()` because a usage-only chunk may still follow. */
  let stopReason: StopReason | undefined
  let finished = false
  let sawFunctionCall = false
  let usage: Map<string, unknown> | undefined

  const close = (stopReason?: StopReason): Array<Event> => {
    if (current === undefined) return []
    const { index, kind, signature } = current
    current = undefined
    return [
      {
        type: "block_stop",
        index,
        ...(stopReason === undefined ? {} : { stopReason }),
        ...(kind === "thinking" && signature !== undefined
          ? { reasoning: { provider: "gemini", thoughtSignature: signature } as const }
          : {})
      }
    ]
  }

  const ensureOpen = (kind: OpenBlock["kind"], events: Array<Event>): OpenBlock => {
    if (current?.kind === kind) return current
    events.push(...close())
    const opened: OpenBlock = { index: nextIndex++, kind, signature: undefined }
    current = opened
    events.push({ type: "block_start", index: opened.index, block: { kind } })
    return opened
  }

  const takeUsage = (): Array<Event> => {
    if (usage === undefined) return []
    const whole: GeminiUsageMetadata = Object.fromEntries(usage)
    const raw = boundedRawUsage(whole)
    const event: Event = { type: "usage", ...neutralGeminiUsage(whole), ...(raw === undefined ? {} : { raw }) }
    usage = undefined
    return [event]
  }

  /** A streamed call cut short: aborted, so nobody runs a tool on the arguments it had so far. */
  const abortStreamed = (reason: string): Array<Event> => {
    if (streamed === undefined) return []
    const { index } = streamed
    streamed = undefined
    return [{ type: "block_abort", index, reason }]
  }

  const fail = (code: string, message: string, abortReason: string, error?: unknown): Array<Event> => {
    finished = true
    const events: Array<Event> = [errorEvent(code, message, error)]
    if (current !== undefined) events.push({ type: "block_abort", index: current.index, reason: abortReason })
    current = undefined
    events.push(...abortStreamed(abortReason))
    return [...events, ...takeUsage(), { type: "status", status: "failed" }]
  }

  /** Applies a streamed call's `partialArgs`; a part without `willContinue` ends the call. */
  const continueStreamed = (open: StreamedCall, call: NonNullable<GeminiPart["functionCall"]>): Array<Event> => {
    const pieces = call.partialArgs
    // The call's arguments are held until its last part: with the calls before it, within the response's bound.
    tally.checkHeld(open.args.heldBytes, open.where)
    if (pieces !== undefined) {
      if (!Array.isArray(pieces)) throw new LlmProtocolError({ message: "Gemini stream: functionCall partialArgs is not a list" })
      for (const piece of pieces) {
        open.args.apply(piece)
        tally.checkHeld(open.args.heldBytes, open.where)
      }
    }
    if (call.willContinue === true) return []
    streamed = undefined
    sawFunctionCall = true
    return [
      { type: "block_delta", index: open.index, delta: { kind: "input_json", json: open.args.text() } },
      { type: "block_stop", index: open.index }
    ]
  }

  const functionCall = (part: GeminiPart, call: NonNullable<GeminiPart["functionCall"]>): Array<Event> => {
    if (call.name === undefined) {
      // Without a name a part can only continue a streamed call (an empty `{}` ends it).
      if (streamed === undefined) throw new LlmProtocolError({ message: "Gemini stream: functionCall part without a name" })
      if (call.id !== undefined && streamed.wireId !== undefined && call.id !== streamed.wireId) {
        throw new LlmProtocolError({ message: `Gemini stream: a streamed functionCall part for ${quote(call.id)} while ${quote(streamed.wireId)} is open` })
      }
      const events: Array<Event> = []
      if (part.thoughtSignature !== undefined) signature(part.thoughtSignature, events)
      return [...events, ...continueStreamed(streamed, call)]
    }
    const events = [...abortStreamed("another function call began before this one's arguments were complete"), ...close()]
    const index = nextIndex++
    const id = ids.take(call.id)
    events.push({
      type: "block_start",
      index,
      block: {
        kind: "tool_use",
        id,
        name: call.name,
        ...(part.thoughtSignature === undefined ? {} : { thoughtSignature: part.thoughtSignature })
      }
    })
    if (call.willContinue === true || call.partialArgs !== undefined) {
      const open: StreamedCall = {
        index,
        wireId: call.id,
        args: new GeminiPartialArgs(id, maxArgumentBytes, call.args),
        where: ` (call ${quote(id)}, streamed arguments)`
      }
      streamed = open
      return [...events, ...continueStreamed(open, call)]
    }
    sawFunctionCall = true
    events.push(
      { type: "block_delta", index, delta: { kind: "input_json", json: parsedJsonText(call.args ?? {}) } },
      { type: "block_stop", index }
    )
    return events
  }

  /**
   * A signature on a non-thought part vouches for the thinking before it: it goes on the open thinking block,
   * or — when thoughts were not requested — on an empty thinking block of its own, so it can be sent back.
   */
  const signature = (thoughtSignature: string, events: Array<Event>): void => {
    if (current?.kind === "thinking" && current.signature === undefined) {
      current.signature = thoughtSignature
      return
    }
    // An open thinking block that already carries a signature keeps it: this one starts a block of its own.
    if (current?.kind === "thinking") events.push(...close())
    ensureOpen("thinking", events).signature = thoughtSignature
    events.push(...close())
  }

  /** A whole part kept as a provider item, in its place between the blocks around it. */
  const providerPart = (part: GeminiPart, kind: string): Array<Event> => {
    const events = close()
    events.push({ type: "provider_output", index: nextIndex++, item: providerItem("gemini", kind, part, `Gemini ${kind} part`) })
    return events
  }

  /** One part's events, appended to the chunk's (no array per part: this runs on every chunk). */
  const part = (part: GeminiPart, events: Array<Event>): void => {
    if (isUnmodelledPart(part)) return append(events, providerPart(part, partKind(part)))
    const call = part.functionCall
    const callName = call?.name
    if (callName !== undefined && options.isServerCall?.(callName) === true) return append(events, providerPart(part, "functionCall"))
    if (call !== undefined) return append(events, functionCall(part, call))
    const text = part.text
    // Content of another kind ends a streamed call before its last part came; an empty part is no content.
    if (text && streamed !== undefined) append(events, abortStreamed("the function call's arguments were interrupted by other content"))
    if (part.thought === true) {
      const block = ensureOpen("thinking", events)
      if (text) events.push({ type: "block_delta", index: block.index, delta: { kind: "thinking", text } })
      if (part.thoughtSignature !== undefined) block.signature = part.thoughtSignature
      return
    }
    if (part.thoughtSignature !== undefined) signature(part.thoughtSignature, events)
    if (text) {
      const block = ensureOpen("text", events)
      events.push({ type: "block_delta", index: block.index, delta: { kind: "text", text } })
    }
  }

  /** Grounding belongs to the candidate's answer: it is tied to the text block still open, if any. */
  const citation = (kind: "groundingMetadata" | "urlContextMetadata", metadata: object, events: Array<Event>): void => {
    const citation = { scheme: "gemini", kind, json: providerJsonText(metadata, `Gemini ${kind}`) } as const
    events.push(current?.kind === "text" ? { type: "citation", index: current.index, citation } : { type: "citation", citation })
  }

  const decode = (chunk: GeminiStreamChunk): Array<Event> => {
    const error = chunk.error
    if (typeof error === "object" && error !== null) {
      // The status name (UNAVAILABLE, RESOURCE_EXHAUSTED…) is what the transport's retry policy recognises.
      const code = error.status ?? (error.code === undefined ? "provider_error" : String(error.code))
      return fail(code, error.message ?? `Gemini reported ${code}`, "the provider reported an error", error)
    }
    if (chunk.usageMetadata !== undefined) usage = mergeUsage(usage, chunk.usageMetadata)
    const events: Array<Event> = []
    if (!started) {
      started = true
      events.push(startedEvent(chunk.modelVersion, chunk.responseId))
    }
    const candidate = chunk.candidates?.[0]
    if (candidate === undefined) {
      const blockReason = chunk.promptFeedback?.blockReason
      return blockReason === undefined
        ? events
        : [...events, ...fail("prompt_blocked", `Gemini blocked the prompt (${blockReason})`, "prompt blocked")]
    }
    const parts = candidate.content?.parts ?? []
    // Indexed, without spreading each part's events: this runs on every chunk. Anything else a hostile server
    // sends as `parts` is iterated (or refused) as before.
    if (Array.isArray(parts)) {
      for (let i = 0; i < parts.length; i++) part(parts[i] as GeminiPart, events)
    } else for (const each of parts) part(each, events)
    // A candidate's metadata that becomes citations of its answer. Read by name: a lookup by a key from a list is
    // a keyed (megamorphic) load on every chunk, and it was a sixth of this function's time (decision 0088).
    const grounding = candidate.groundingMetadata
    if (typeof grounding === "object" && grounding !== null) citation("groundingMetadata", grounding, events)
    const urlContext = candidate.urlContextMetadata
    if (typeof urlContext === "object" && urlContext !== null) citation("urlContextMetadata", urlContext, events)
    if (candidate.finishReason !== undefined) {
      // Not final: parts may follow (the last finishReason wins), each opening a block of its own.
      stopReason = geminiStopReason(candidate.finishReason, sawFunctionCall)
      events.push(...abortStreamed("finishReason before the function call's arguments were complete"), ...close(stopReason))
    }
    return events
  }

  return {
    push(message) {
      if (finished) return []
      return decode(parseChunk(message))
    },
    isComplete: () => !finished && stopReason !== undefined,
    end() {
      if (finished) return []
      if (stopReason !== undefined) {
        finished = true
        return [...abortStreamed("the stream ended before the function call's arguments were complete"), ...takeUsage(), { type: "status", status: "completed", stopReason }]
      }
      return fail("incomplete_stream", "the Gemini stream ended without a finishReason", "stream ended before the block was complete")
    }
  }
}
