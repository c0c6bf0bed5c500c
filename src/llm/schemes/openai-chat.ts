import { anchorShapes } from "../shape-anchor.ts"
import { buildToolNameMap } from "../../schema/tool-names.ts"
import { toolNames, toolsFragment } from "../../schema/provider-tools.ts"
import { FragmentCache, flat } from "../fragment-cache.ts"
import { type HistoryFold, PrefixSnapshots, ResumableContext, resumedPieces, type SealedCalls } from "../prefix-snapshots.ts"
import { EnvelopeCache } from "../envelope-cache.ts"
import { jsonBody, rawJson } from "../json-body.ts"
import type { JsonBodyValue, RawJson } from "../json-body.ts"
import type { ContentPart, FunctionCallItem, Item } from "../item.ts"
import type { Request, ToolChoice } from "../request.ts"
import type { ConfigWarning, Scheme } from "../scheme.ts"
import { makeOpenAiChatDecoder } from "./openai-chat-decoder.ts"
import { foreignOutputWarnings } from "./foreign-output.ts"
import { configWarning, toolOutputText } from "./openai-wire.ts"
import { chatResponseFormat } from "./response-format.ts"

/**
 * OpenAI Chat Completions (`POST /v1/chat/completions`), also spoken by most OpenAI-compatible servers (Ollama,
 * llama.cpp, vLLM, OpenRouter). Their differences are the options below; everything else is the same format.
 */
export interface OpenAiChatOptions {
  /**
   * Ask for the final usage chunk with `stream_options.include_usage` (default true). Turn off for a server that
   * rejects the field.
   */
  readonly streamUsage?: boolean
  /**
   * The output-token limit field: OpenAI's `max_completion_tokens` (default), or the older `max_tokens` that some
   * compatible servers still read exclusively.
   */
  readonly maxTokensField?: "max_completion_tokens" | "max_tokens"
  /**
   * Send the reasoning a server streamed (`reasoning_content`) back on the assistant message it belongs to.
   * Off by default (OpenAI itself returns no reasoning on Chat); on for servers whose thinking mode requires it
   * in tool loops (DeepSeek's, for one) — they refuse a follow-up request without it.
   */
  readonly echoReasoning?: boolean
}

type Names = { toWire(name: string): string }

/** The reference's limit on `stop` (an array of 1 to 4 strings). */
const MAX_STOP_SEQUENCES = 4

const text = (value: string): JsonBodyValue => ({ type: "text", text: value })

const userContent = (content: ReadonlyArray<ContentPart>): JsonBodyValue => {
  const only = content[0]
  if (content.length === 1 && only !== undefined && only.type === "input_text") return only.text
  return content.map((part): JsonBodyValue =>
    part.type === "input_image"
      ? { type: "image_url", image_url: { url: `data:${part.mediaType};base64,${part.data}` } }
      : part.type === "input_image_url"
        ? { type: "image_url", image_url: { url: part.url } }
        : text(part.text)
  )
}

interface AssistantTurn {
  readonly reasoning: Array<string>
  readonly texts: Array<string>
  readonly refusals: Array<string>
  readonly calls: Array<FunctionCallItem>
}

/**
 * Whether a turn holds more than the reasoning that opens it (a later message or reasoning starts a new one).
 * `ChatFold` follows the same rule with a flag, so the grouping of the two agrees.
 */
const hasOutput = (turn: AssistantTurn): boolean => turn.texts.length > 0 || turn.refusals.length > 0 || turn.calls.length > 0

const assistantMessage = (turn: AssistantTurn, names: Names): JsonBodyValue => ({
  role: "assistant",
  reasoning_content: turn.reasoning.length > 0 ? turn.reasoning.join("") : undefined,
  // Chat requires content (null allowed) next to tool_calls; an empty string would be a visible empty reply.
  content: turn.texts.length > 0 ? turn.texts.join("") : null,
  refusal: turn.refusals.length > 0 ? turn.refusals.join("") : undefined,
  tool_calls:
    turn.calls.length > 0
      ? turn.calls.map((call) => ({
          id: call.callId,
          type: "function",
          function: { name: names.toWire(call.name), arguments: call.arguments }
        }))
      : undefined
})

/**
 * Chat has no item list: an assistant message owns its tool calls. The model's text and the calls that follow it
 * become one assistant message. Reasoning is never sent as text (that would leak hidden reasoning into the visible
 * conversation); with `echoReasoning` it goes back in the message's own `reasoning_content` field.
 */
const messages = (items: ReadonlyArray<Item>, echoReasoning: boolean, names: Names): Array<JsonBodyValue> => {
  const out: Array<JsonBodyValue> = []
  let turn: AssistantTurn | undefined
  const flush = () => {
    if (turn !== undefined) out.push(assistantMessage(turn, names))
    turn = undefined
  }
  const assistant = (): AssistantTurn => (turn ??= { reasoning: [], texts: [], refusals: [], calls: [] })
  for (const item of items) {
    switch (item.type) {
      case "message":
        if (item.role === "user") {
          flush()
          out.push({ role: "user", content: userContent(item.content) })
        } else {
          if (turn !== undefined && hasOutput(turn)) flush()
          const current = assistant()
          for (const part of item.content) {
            if (part.type === "refusal") current.refusals.push(part.text)
            else if (part.type !== "input_image" && part.type !== "input_image_url") current.texts.push(part.text)
          }
        }
        break
      case "function_call":
        assistant().calls.push(item)
        break
      case "function_call_output":
        flush()
        out.push({ role: "tool", tool_call_id: item.callId, content: toolOutputText(item.output, item.isError) })
        break
      case "provider_item":
        // Another wire format's output (decision 0025); validate() reports it left out.
        break
      case "reasoning":
        // Reasoning precedes what it led to: it opens the assistant turn it belongs to.
        if (echoReasoning && item.data === undefined && item.text !== "") {
          if (turn !== undefined && hasOutput(turn)) flush()
          assistant().reasoning.push(item.text)
        }
        break
    }
  }
  flush()
  return out
}

const toolChoice = (choice: ToolChoice, names: Names): JsonBodyValue =>
  choice.type === "tool" ? { type: "function", function: { name: names.toWire(choice.name) } } : choice.type

type History = (request: Request, names: Names, echoReasoning: boolean) => JsonBodyValue

const systemMessage = (request: Request): JsonBodyValue | undefined =>
  request.systemPrompt === undefined ? undefined : { role: "system", content: request.systemPrompt }

/** The `messages` array printed whole, message by message: the reference the cached form must equal. */
const uncachedMessages: History = (request, names, echoReasoning) => {
  const system = systemMessage(request)
  const out = messages(request.items, echoReasoning, names)
  return system === undefined ? out : [system, ...out]
}

/** One message's text: the items it spans, made into that one message. */
const messageText = (names: Names, echoReasoning: boolean, items: ReadonlyArray<Item>, start: number, end: number): string =>
  flat(jsonBody(messages(items.slice(start, end), echoReasoning, names)[0] as JsonBodyValue))

interface ChatState {
  readonly calls: SealedCalls
  readonly closed: string
  readonly appended: number
  /** The assistant turn still open at the end of the prefix (later items may join it), as `[start, end)`. */
  readonly turn: { readonly start: number; readonly end: number; readonly output: boolean } | undefined
}

/**
 * The `messages` array (without the system message) as a fold over the items (`prefix-snapshots.ts`): the
 * grouping rules of `messages()` walked item by item, each closed message's text from the fragment cache, keyed
 * by its first item. The assistant turn open at the end is printed by `text` and stays open for later items.
 */
class ChatFold implements HistoryFold<ChatState> {
  readonly #context: ResumableContext
  #closed: string
  #appended: number
  #open = false
  #start = 0
  #end = 0
  /** Whether the open turn holds more than the reasoning that opens it (see `hasOutput`). */
  #output = false
  constructor(
    readonly fragments: FragmentCache<string>,
    readonly echoReasoning: boolean,
    readonly system: string | undefined,
    names: Names,
    state?: ChatState
  ) {
    this.#context = new ResumableContext(names, state?.calls)
    this.#closed = state?.closed ?? ""
    this.#appended = state === undefined ? 0 : resumedPieces(state.closed, state.appended)
    if (state?.turn !== undefined) {
      this.#open = true
      this.#start = state.turn.start
      this.#end = state.turn.end
      this.#output = state.turn.output
    }
  }
  #message(items: ReadonlyArray<Item>, start: number, end: number): string {
    return this.fragments.fragment(items, start, end, this.#context, messageText, this.echoReasoning)
  }
  #emit(items: ReadonlyArray<Item>, start: number, end: number): void {
    const text = this.#message(items, start, end)
    this.#closed = this.#closed === "" ? text : `${this.#closed},${text}`
    this.#appended++
  }
  #flush(items: ReadonlyArray<Item>): void {
    if (this.#open) this.#emit(items, this.#start, this.#end)
    this.#open = false
  }
  /** `assistant(position)` of `messages()`: opens the turn if none is open, and extends it to `position`. */
  #assistant(position: number): void {
    if (!this.#open) {
      this.#open = true
      this.#start = position
      this.#output = false
    }
    this.#end = position + 1
  }
  add(items: ReadonlyArray<Item>, position: number): void {
    const item = items[position] as Item
    switch (item.type) {
      case "message":
        if (item.role === "user") {
          this.#flush(items)
          this.#emit(items, position, position + 1)
        } else {
          if (this.#open && this.#output) this.#flush(items)
          this.#assistant(position)
          for (const part of item.content) if (part.type !== "input_image") this.#output = true
        }
        return
      case "function_call":
        this.#assistant(position)
        this.#output = true
        return
      case "function_call_output":
        this.#flush(items)
        this.#emit(items, position, position + 1)
        return
      case "provider_item":
        return
      case "reasoning":
        if (this.echoReasoning && item.data === undefined && item.text !== "") {
          if (this.#open && this.#output) this.#flush(items)
          this.#assistant(position)
        }
        return
    }
  }
  capture(): ChatState {
    return {
      calls: this.#context.seal(),
      closed: this.#closed,
      appended: this.#appended,
      turn: this.#open ? { start: this.#start, end: this.#end, output: this.#output } : undefined
    }
  }
  text(items: ReadonlyArray<Item>): string {
    let out = this.system ?? ""
    if (this.#closed !== "") out = out === "" ? this.#closed : `${out},${this.#closed}`
    if (this.#open) {
      const open = this.#message(items, this.#start, this.#end)
      out = out === "" ? open : `${out},${open}`
    }
    return `[${out}]`
  }
}

/** The `messages` array from each message's cached text, resumed from the longest prefix an earlier request folded. */
const cachedMessages = (fragments: FragmentCache<string>): History => {
  const snapshots = new PrefixSnapshots<ChatState>()
  return (request, names, echoReasoning) => {
    const system = systemMessage(request)
    const systemText = system === undefined ? undefined : jsonBody(system)
    return rawJson(
      snapshots.assemble(
        request.items,
        names,
        0,
        () => new ChatFold(fragments, echoReasoning, systemText, names),
        (state) => new ChatFold(fragments, echoReasoning, systemText, names, state)
      )
    )
  }
}

const assistantHasImage = (items: ReadonlyArray<Item>): boolean =>
  items.some((item) => item.type === "message" && item.role === "assistant" && item.content.some((p) => p.type === "input_image" || p.type === "input_image_url"))

const validate = (request: Request): ReadonlyArray<ConfigWarning> => {
  const warn = (setting: string, message: string) => configWarning("openai-chat", setting, message)
  const { config } = request
  const out: Array<ConfigWarning> = []
  if (config.topK !== undefined) out.push(warn("topK", "OpenAI Chat Completions has no top_k; it is not sent"))
  if (config.reasoning?.budgetTokens !== undefined) {
    out.push(warn("reasoning.budgetTokens", "OpenAI takes a reasoning effort, not a token budget; the budget is not sent"))
  }
  if (config.stopSequences !== undefined && config.stopSequences.length > MAX_STOP_SEQUENCES) {
    out.push(warn("stopSequences", `OpenAI takes at most ${MAX_STOP_SEQUENCES} stop sequences; only the first ${MAX_STOP_SEQUENCES} are sent`))
  }
  if (request.tools.length === 0 && config.toolChoice !== undefined) {
    out.push(warn("toolChoice", "tool_choice needs at least one tool; it is not sent"))
  }
  if (request.tools.length === 0 && config.parallelToolCalls !== undefined) {
    out.push(warn("parallelToolCalls", "parallel_tool_calls needs at least one tool; it is not sent"))
  }
  if (assistantHasImage(request.items)) {
    out.push(warn("items", "Chat assistant messages cannot carry images; they are not sent"))
  }
  // Chat has no output kinds of its own left unmodelled, so every provider item and hosted tool is foreign here.
  out.push(...foreignOutputWarnings(request, "openai-chat"))
  return out
}

/** The Chat Completions scheme; options change bytes (echoReasoning), so each instance keeps its own fragments. */
export const makeOpenAiChatScheme = (options: OpenAiChatOptions = {}): Scheme =>
  chatScheme(options, cachedMessages(new FragmentCache<string>()), new EnvelopeCache())

/** The same scheme without the fragment cache, message by message as before it: tests hold both to the same bytes. */
export const uncachedOpenAiChatScheme = (options: OpenAiChatOptions = {}): Scheme => chatScheme(options, uncachedMessages)

const chatScheme = (options: OpenAiChatOptions, history: History, envelopes?: EnvelopeCache): Scheme => {
  const streamUsage = options.streamUsage ?? true
  const maxTokensField = options.maxTokensField ?? "max_completion_tokens"
  const echoReasoning = options.echoReasoning ?? false
  /** The body's fields before `messages`, in the order they are sent. */
  const envelopeFields = (request: Request, names: Names): { [key: string]: JsonBodyValue | undefined } => {
    const { config } = request
    const withTools = request.tools.length > 0
    // Key order puts the history last: everything before it (tools, settings) stays byte-identical while a
    // conversation grows, so the request's prefix is as stable as the conversation allows.
    const body: { [key: string]: JsonBodyValue | undefined } = {
      model: request.model,
      tools: withTools ? rawJson(toolsFragment(request.tools, "openai-chat")) : undefined,
      tool_choice: withTools && config.toolChoice !== undefined ? toolChoice(config.toolChoice, names) : undefined,
      parallel_tool_calls: withTools ? config.parallelToolCalls : undefined
    }
    body[maxTokensField] = config.maxTokens
    body["temperature"] = config.temperature
    body["top_p"] = config.topP
    const stop = config.stopSequences?.slice(0, MAX_STOP_SEQUENCES) ?? []
    body["stop"] = stop.length > 0 ? stop : undefined
    body["reasoning_effort"] = config.reasoning?.effort
    body["response_format"] = chatResponseFormat(config.responseFormat)
    body["stream"] = true
    body["stream_options"] = streamUsage ? { include_usage: true } : undefined
    return body
  }
  const printedEnvelope = (request: Request): string => jsonBody(envelopeFields(request, toolNames(request.tools, "openai-chat")))
  return {
    name: "openai-chat",
    validate,
    decoder: (request, decoderOptions) =>
      makeOpenAiChatDecoder(
        request === undefined ? undefined : toolNames(request.tools, "openai-chat"),
        {
          ...(decoderOptions?.limits === undefined ? {} : { limits: decoderOptions.limits }),
          ...(decoderOptions?.argumentTally === undefined ? {} : { argumentTally: decoderOptions.argumentTally })
        }
      ),
    encodeRequest(request) {
      const names = toolNames(request.tools, "openai-chat")
      const messages = history(request, names, echoReasoning)
      // With the cache, the history goes last after an envelope printed once per config, tools and prompt.
      if (envelopes !== undefined && isRawJson(messages)) return envelopes.body(request, printedEnvelope, "messages", messages.text)
      const body = envelopeFields(request, names)
      body["messages"] = messages
      return jsonBody(body)
    }
  }
}

const isRawJson = (value: JsonBodyValue): value is RawJson =>
  typeof value === "object" && value !== null && !Array.isArray(value) && (value as { _tag?: unknown })._tag === "RawJson"

/** The Chat Completions scheme as OpenAI itself speaks it. */
export const openAiChatScheme: Scheme = makeOpenAiChatScheme()

// A fold is made per request and none is alive between runs: one kept so V8 keeps its shapes (`shape-anchor.ts`).
anchorShapes(new ChatFold(new FragmentCache<string>(), false, undefined, buildToolNameMap([], "openai-chat")))
