import type { Event, StopReason, Usage } from "../event.ts"
import type { ReasoningData } from "../item.ts"
import { parsedJsonText } from "../json-text.ts"
import { defaultResponseLimits, limitExceeded } from "../limits.ts"
import { utf8Length } from "../../tool/output-limit.ts"
import { LlmProtocolError } from "../llm-error.ts"
import { MAX_PROVIDER_JSON_DEPTH, providerItem, providerJsonText } from "../provider-item.ts"
import { jsonTextDepth, tooDeepMessage } from "../../schema/json-depth.ts"
import type { DecoderOptions, SseMessage, StreamDecoder } from "../scheme.ts"
import { boundedRawUsage } from "../raw-usage.ts"
import { errorEvent } from "../raw-error.ts"
import { startedEvent } from "../response-meta.ts"
import { neutralUsage } from "../usage.ts"
import { quote } from "../../schema/quote.ts"
import { ResponseCallIds } from "./call-ids.ts"
import type { AnthropicContentBlock, AnthropicStreamEvent, AnthropicUsage } from "./anthropic-wire.ts"
import { randomUuid } from "../random-uuid.ts"

/** What the decoder remembers about one open content block, keyed by Anthropic's block index. */
interface OpenBlock {
  readonly index: number
  readonly kind: "text" | "thinking" | "redacted_thinking" | "tool_use"
  signature: string
  redactedData: string
  /** Tool input as sent in content_block_start; used only if no input_json_delta carries any text. */
  readonly initialInput: string
  sawInputJson: boolean
}

const STOP_REASONS: Readonly<Record<string, StopReason>> = {
  end_turn: "end_turn",
  max_tokens: "max_tokens",
  stop_sequence: "stop_sequence",
  tool_use: "tool_use",
  refusal: "content_filter"
}

/**
 * A content block of a kind this library does not model (server_tool_use, web_search_tool_result,
 * code_execution results, …), kept until its stop to become a provider item (decision 0025).
 */
interface KeptBlock {
  /** The block from content_block_start: typed as a modelled block, but of any type at run time. */
  readonly content: AnthropicContentBlock
  /** Input streamed as input_json_delta (server_tool_use), joined at the stop. */
  readonly input: Array<string>
}

const MODELLED_BLOCKS: ReadonlySet<string> = new Set(["text", "thinking", "redacted_thinking", "tool_use"])

export const anthropicStopReason = (reason: string): StopReason => STOP_REASONS[reason] ?? "other"

/**
 * Neutral usage from Anthropic's counters. `input_tokens` excludes cached prompt tokens; the neutral
 * `inputTokens` is the whole prompt (as OpenAI and Gemini count it), so the cache counters are added back in.
 * `output_tokens` includes thinking, which `output_tokens_details.thinking_tokens` breaks out. No total is sent.
 */
const neutralAnthropicUsage = (usage: AnthropicUsage): Usage => {
  const isCount = (value: unknown): value is number => typeof value === "number" && Number.isSafeInteger(value) && value >= 0
  const part = (value: unknown): number => (isCount(value) ? value : 0)
  const input = usage.input_tokens
  const details = usage.output_tokens_details
  return neutralUsage(
    {
      input: isCount(input) ? input + part(usage.cache_read_input_tokens) + part(usage.cache_creation_input_tokens) : undefined,
      output: usage.output_tokens,
      reasoning: typeof details === "object" && details !== null ? details.thinking_tokens : undefined,
      cacheRead: usage.cache_read_input_tokens,
      cacheWrite: usage.cache_creation_input_tokens
    },
    "output_includes_reasoning"
  )
}

/**
 * message_delta usage is cumulative and may repeat or extend message_start's; later non-null values win. Whole
 * fields are kept (not only the counters), so the merged object is also the raw usage of the response.
 */
const mergeUsage = (base: AnthropicUsage, next: unknown): AnthropicUsage => {
  if (typeof next !== "object" || next === null || Array.isArray(next)) return base
  // fromEntries (later entries win) rather than assignment: the keys are the provider's, "__proto__" included.
  return Object.fromEntries([...Object.entries(base), ...Object.entries(next)].filter((entry) => entry[1] !== null && entry[1] !== undefined))
}

/** How a refused second message_start is described: both ids, bounded (they are the provider's text). */
const secondStart = (first: string | undefined, second: string | undefined): string =>
  first === second
    ? `(${second === undefined ? "no id" : quote(second)}, after content)`
    : `(${second === undefined ? "no id" : quote(second)} after ${first === undefined ? "one without an id" : quote(first)})`

const parseEvent = (message: SseMessage): AnthropicStreamEvent => {
  try {
    const parsed: unknown = JSON.parse(message.data)
    if (typeof parsed === "object" && parsed !== null && typeof (parsed as { type?: unknown }).type === "string") {
      return parsed as AnthropicStreamEvent
    }
  } catch {
    // reported below with the offending text
  }
  throw new LlmProtocolError({ message: `Anthropic stream: event "${message.event}" is not a JSON event object: ${message.data.slice(0, 200)}` })
}

/**
 * Decodes one Anthropic Messages stream. Each Anthropic content block becomes one neutral block; usage is
 * reported once per response (merged from message_start and message_delta); a stream that stops without
 * message_stop aborts its open blocks and fails. Every tool_use block has its own id: a repeated id becomes
 * `<id>_2`… (`ResponseCallIds`), an empty one a generated `toolu_llmw_…` (both fit the id pattern the API
 * accepts back). Signatures are bounded by `maxReasoningBytes` as they accumulate.
 */
export const createAnthropicDecoder = (options: DecoderOptions = {}): StreamDecoder => {
  const maxReasoningBytes = (options.limits ?? defaultResponseLimits).maxReasoningBytes
  const maxProviderBytes = (options.limits ?? defaultResponseLimits).maxProviderBytes
  /** Bytes of unmodelled blocks' streamed input held here before their provider_output event is counted. */
  let providerBytes = 0
  const kept = new Map<number, KeptBlock>()
  const idPrefix = `toolu_llmw_${randomUuid().slice(0, 8)}_`
  let generated = 0
  const ids = new ResponseCallIds(() => `${idPrefix}${generated++}`)
  let signatureBytes = 0
  let messageStarted = false
  /** The id of the message this response carries; a message_start with another one is a second message. */
  let messageId: string | undefined
  const open = new Map<number, OpenBlock>()
  /** Anthropic indices of blocks this library does not model (server tools, …): their events are skipped. */
  const skipped = new Set<number>()
  let nextIndex = 0
  let usage: AnthropicUsage | undefined
  let stopReason: StopReason | undefined
  let finished = false

  const takeUsage = (): Array<Event> => {
    if (usage === undefined) return []
    const raw = boundedRawUsage(usage)
    const event: Event = { type: "usage", ...neutralAnthropicUsage(usage), ...(raw === undefined ? {} : { raw }) }
    usage = undefined
    return [event]
  }

  const fail = (code: string, message: string, abortReason: string, error?: unknown): Array<Event> => {
    finished = true
    const events: Array<Event> = [errorEvent(code, message, error)]
    for (const block of open.values()) events.push({ type: "block_abort", index: block.index, reason: abortReason })
    open.clear()
    return [...events, ...takeUsage(), { type: "status", status: "failed" }]
  }

  /** Signatures are reasoning the provider needs back; they accumulate here, not as events, so they are bounded here. */
  const countSignature = (piece: string): void => {
    signatureBytes += utf8Length(piece)
    if (signatureBytes > maxReasoningBytes) throw limitExceeded("maxReasoningBytes", maxReasoningBytes, signatureBytes, " (signatures)")
  }

  const blockFor = (anthropicIndex: number, eventType: string): OpenBlock | undefined => {
    const block = open.get(anthropicIndex)
    if (block !== undefined || skipped.has(anthropicIndex)) return block
    throw new LlmProtocolError({ message: `Anthropic stream: ${eventType} for block ${anthropicIndex}, which is not open` })
  }

  const start = (anthropicIndex: number, content: AnthropicContentBlock): Array<Event> => {
    // Opening a block twice would leave the first one's neutral block dangling, never stopped.
    if (open.has(anthropicIndex) || skipped.has(anthropicIndex)) {
      throw new LlmProtocolError({ message: `Anthropic stream: content_block_start for block ${anthropicIndex}, which is already open` })
    }
    if (!MODELLED_BLOCKS.has(content.type)) {
      skipped.add(anthropicIndex)
      kept.set(anthropicIndex, { content, input: [] })
      return []
    }
    const index = nextIndex++
    const block = (kind: OpenBlock["kind"], initialInput = ""): OpenBlock => ({
      index,
      kind,
      signature: "",
      redactedData: "",
      initialInput,
      sawInputJson: false
    })
    switch (content.type) {
      case "text": {
        open.set(anthropicIndex, block("text"))
        const text = content.text ?? ""
        return [
          { type: "block_start", index, block: { kind: "text" } },
          ...(text === "" ? [] : [{ type: "block_delta", index, delta: { kind: "text", text } } as const])
        ]
      }
      case "thinking": {
        const opened = block("thinking")
        opened.signature = content.signature ?? ""
        open.set(anthropicIndex, opened)
        const text = content.thinking ?? ""
        return [
          { type: "block_start", index, block: { kind: "thinking" } },
          ...(text === "" ? [] : [{ type: "block_delta", index, delta: { kind: "thinking", text } } as const])
        ]
      }
      case "redacted_thinking": {
        const opened = block("redacted_thinking")
        opened.redactedData = content.data ?? ""
        countSignature(opened.redactedData)
        open.set(anthropicIndex, opened)
        return [{ type: "block_start", index, block: { kind: "thinking" } }]
      }
      case "tool_use": {
        if (content.id === undefined || content.name === undefined) {
          throw new LlmProtocolError({ message: `Anthropic stream: tool_use block ${anthropicIndex} without id or name` })
        }
        open.set(anthropicIndex, block("tool_use", parsedJsonText(content.input ?? {})))
        return [{ type: "block_start", index, block: { kind: "tool_use", id: ids.take(content.id), name: content.name } }]
      }
    }
  }

  /** Streamed input of an unmodelled block, bounded like every other piece the decoder holds. */
  const keepInput = (block: KeptBlock, piece: string): void => {
    providerBytes += utf8Length(piece)
    if (providerBytes > maxProviderBytes) throw limitExceeded("maxProviderBytes", maxProviderBytes, providerBytes, " (server tool input)")
    block.input.push(piece)
  }

  /** The block as the API would return it whole: its streamed input parsed into `input` (depth-checked first). */
  const keptOutput = (block: KeptBlock): Event => {
    const kind: string = block.content.type
    let value: unknown = block.content
    if (block.input.length > 0) {
      const text = block.input.join("")
      if (jsonTextDepth(text, MAX_PROVIDER_JSON_DEPTH) > MAX_PROVIDER_JSON_DEPTH) {
        throw new LlmProtocolError({ message: `Anthropic stream: ${kind} input ${tooDeepMessage("is", MAX_PROVIDER_JSON_DEPTH)}` })
      }
      let input: unknown
      try {
        input = JSON.parse(text)
      } catch {
        throw new LlmProtocolError({ message: `Anthropic stream: ${kind} block ${JSON.stringify(text.slice(0, 200))} is not valid JSON input` })
      }
      value = { ...block.content, input }
    }
    return { type: "provider_output", index: nextIndex++, item: providerItem("anthropic", kind, value, `Anthropic ${kind} block`) }
  }

  const stop = (anthropicIndex: number): Array<Event> => {
    const keptBlock = kept.get(anthropicIndex)
    if (keptBlock !== undefined) {
      kept.delete(anthropicIndex)
      return [keptOutput(keptBlock)]
    }
    const block = blockFor(anthropicIndex, "content_block_stop")
    if (block === undefined) return []
    open.delete(anthropicIndex)
    const events: Array<Event> = []
    // A tool with no parameters may stream no input at all; its input is then what content_block_start carried.
    if (block.kind === "tool_use" && !block.sawInputJson) {
      events.push({ type: "block_delta", index: block.index, delta: { kind: "input_json", json: block.initialInput } })
    }
    // Without its signature (or redacted data) thinking cannot be sent back, so no reasoning data is claimed.
    const reasoning: ReasoningData | undefined =
      block.kind === "thinking" && block.signature !== ""
        ? { provider: "anthropic", signature: block.signature }
        : block.kind === "redacted_thinking" && block.redactedData !== ""
          ? { provider: "anthropic", redacted: block.redactedData }
          : undefined
    events.push(
      reasoning === undefined ? { type: "block_stop", index: block.index } : { type: "block_stop", index: block.index, reasoning }
    )
    return events
  }

  const decode = (event: AnthropicStreamEvent): Array<Event> => {
    switch (event.type) {
      case "message_start": {
        const id = typeof event.message?.id === "string" ? event.message.id : undefined
        if (messageStarted) {
          // The same message announced again before any content (a proxy repeating the start) changes nothing.
          if (id === messageId && nextIndex === 0 && skipped.size === 0) return []
          // Anything else starts a second message inside this response: merging the two would mix their
          // reasoning and leave the first one's open blocks dangling (the official SDK refuses it too).
          throw new LlmProtocolError({ message: `Anthropic stream: a second message_start ${secondStart(messageId, id)} inside one response` })
        }
        messageStarted = true
        messageId = id
        usage = event.message?.usage === undefined ? undefined : mergeUsage({}, event.message.usage)
        return [startedEvent(event.message?.model, id)]
      }
      case "content_block_start":
        return start(event.index, event.content_block)
      case "content_block_delta": {
        const keptBlock = kept.get(event.index)
        if (keptBlock !== undefined) {
          if (event.delta.type === "input_json_delta" && event.delta.partial_json) keepInput(keptBlock, event.delta.partial_json)
          return []
        }
        const block = blockFor(event.index, "content_block_delta")
        if (block === undefined) return []
        const delta = event.delta
        switch (delta.type) {
          case "text_delta":
            return delta.text ? [{ type: "block_delta", index: block.index, delta: { kind: "text", text: delta.text } }] : []
          case "thinking_delta":
            return delta.thinking
              ? [{ type: "block_delta", index: block.index, delta: { kind: "thinking", text: delta.thinking } }]
              : []
          case "signature_delta":
            countSignature(delta.signature ?? "")
            block.signature += delta.signature ?? ""
            return []
          case "input_json_delta":
            if (!delta.partial_json) return []
            block.sawInputJson = true
            return [{ type: "block_delta", index: block.index, delta: { kind: "input_json", json: delta.partial_json } }]
          case "citations_delta": {
            // A source for the text block's answer (web search, web fetch, documents), kept as sent.
            const citation: unknown = delta.citation
            if (typeof citation !== "object" || citation === null) return []
            const kind = typeof (citation as { type?: unknown }).type === "string" ? (citation as { type: string }).type : "citation"
            return [
              { type: "citation", index: block.index, citation: { scheme: "anthropic", kind, json: providerJsonText(citation, `Anthropic citation ${kind}`) } }
            ]
          }
          default:
            return []
        }
      }
      case "content_block_stop":
        return stop(event.index)
      case "message_delta":
        if (event.delta?.stop_reason) stopReason = anthropicStopReason(event.delta.stop_reason)
        if (event.usage !== undefined) usage = mergeUsage(usage ?? {}, event.usage)
        return []
      case "message_stop": {
        finished = true
        const events: Array<Event> = []
        for (const block of open.values()) {
          events.push({ type: "block_abort", index: block.index, reason: "message_stop before content_block_stop" })
        }
        open.clear()
        events.push(...takeUsage())
        events.push(stopReason === undefined ? { type: "status", status: "completed" } : { type: "status", status: "completed", stopReason })
        return events
      }
      case "ping":
        return [{ type: "ping" }]
      case "error":
        return fail(event.error?.type ?? "error", event.error?.message ?? "Anthropic reported an error", event.error?.message ?? "provider error", event.error)
      default:
        return []
    }
  }

  return {
    push(message) {
      if (finished) return []
      return decode(parseEvent(message))
    },
    end() {
      if (finished) return []
      return fail("incomplete_stream", "the Anthropic stream ended before message_stop", "stream ended before the block was complete")
    }
  }
}
