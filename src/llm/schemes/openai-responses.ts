import { anchorShapes } from "../shape-anchor.ts"
import { buildToolNameMap } from "../../schema/tool-names.ts"
import { toolNames, toolsFragment } from "../../schema/provider-tools.ts"
import { FragmentCache, flat } from "../fragment-cache.ts"
import { type HistoryFold, PrefixSnapshots, ResumableContext, resumedPieces, type SealedCalls } from "../prefix-snapshots.ts"
import { hostedToolEntries, withHostedTools } from "../hosted-tools.ts"
import { EnvelopeCache } from "../envelope-cache.ts"
import { jsonBody, rawJson } from "../json-body.ts"
import type { JsonBodyValue, RawJson } from "../json-body.ts"
import type { ContentPart, Item } from "../item.ts"
import type { Request, ToolChoice } from "../request.ts"
import type { ConfigWarning, Scheme } from "../scheme.ts"
import { makeOpenAiResponsesDecoder } from "./openai-responses-decoder.ts"
import { foreignOutputWarnings } from "./foreign-output.ts"
import { configWarning, toolOutputText } from "./openai-wire.ts"
import { responsesTextFormat } from "./response-format.ts"

type Names = { toWire(name: string): string }

const userPart = (part: ContentPart): JsonBodyValue =>
  part.type === "input_image"
    ? { type: "input_image", image_url: `data:${part.mediaType};base64,${part.data}`, detail: "auto" }
    : part.type === "input_image_url"
      ? { type: "input_image", image_url: part.url, detail: "auto" }
      : { type: "input_text", text: part.text }

/**
 * Prior assistant text goes back as an easy input message with string content: the list form accepts only input
 * parts, and the output-message form needs the original item id, which the neutral history does not keep. A
 * refusal is the assistant's visible text, so it joins the rest.
 */
const assistantText = (content: ReadonlyArray<ContentPart>): string =>
  content.map((part) => (part.type === "input_image" || part.type === "input_image_url" ? "" : part.text)).join("")

/**
 * One neutral item as a Responses input item, or undefined when it cannot be sent: reasoning from another
 * provider, or without its encrypted content, is meaningless to a stateless request and is left out.
 */
const inputItem = (item: Item, names: Names): JsonBodyValue | undefined => {
  switch (item.type) {
    case "message":
      return item.role === "user"
        ? { type: "message", role: "user", content: item.content.map(userPart) }
        : { type: "message", role: "assistant", content: assistantText(item.content) }
    case "function_call":
      return { type: "function_call", call_id: item.callId, name: names.toWire(item.name), arguments: item.arguments }
    case "function_call_output":
      return { type: "function_call_output", call_id: item.callId, output: toolOutputText(item.output, item.isError) }
    case "reasoning":
      // Without stored state (store: false) an id alone cannot be resolved; only encrypted reasoning can go back.
      if (item.data?.provider !== "openai" || item.data.encryptedContent === undefined) return undefined
      return {
        type: "reasoning",
        id: item.data.id,
        summary: item.text === "" ? [] : [{ type: "summary_text", text: item.text }],
        encrypted_content: item.data.encryptedContent
      }
    case "provider_item":
      // The output item goes back as it came (decision 0025); Responses accepts its output items as input.
      return item.scheme === "openai-responses" ? rawJson(item.json) : undefined
  }
}

const toolChoice = (choice: ToolChoice, names: Names): JsonBodyValue =>
  choice.type === "tool" ? { type: "function", name: names.toWire(choice.name) } : choice.type

/** Each item's input entry as JSON text (null: left out), reused while the item lives (`fragment-cache.ts`). */
const fragments = new FragmentCache<string | null>()

const inputItemText = (names: Names, _: undefined, items: ReadonlyArray<Item>, start: number): string | null => {
  const encoded = inputItem(items[start] as Item, names)
  return encoded === undefined ? null : flat(jsonBody(encoded))
}

interface InputState {
  readonly calls: SealedCalls
  readonly closed: string
  readonly appended: number
}

/** The `input` array as a fold over the items (`prefix-snapshots.ts`): one entry per item, so only a join. */
class InputFold implements HistoryFold<InputState> {
  readonly #context: ResumableContext
  #closed: string
  #appended: number
  constructor(names: Names, state?: InputState) {
    this.#context = new ResumableContext(names, state?.calls)
    this.#closed = state?.closed ?? ""
    this.#appended = state === undefined ? 0 : resumedPieces(state.closed, state.appended)
  }
  add(items: ReadonlyArray<Item>, position: number): void {
    const text = fragments.fragment(items, position, position + 1, this.#context, inputItemText, undefined)
    if (text === null) return
    this.#closed = this.#closed === "" ? text : `${this.#closed},${text}`
    this.#appended++
  }
  capture(): InputState {
    return { calls: this.#context.seal(), closed: this.#closed, appended: this.#appended }
  }
  text(): string {
    return `[${this.#closed}]`
  }
}

const snapshots = new PrefixSnapshots<InputState>()

/** The `input` array from cached per-item text, resumed from the longest prefix an earlier request folded. */
const cachedInput = (items: ReadonlyArray<Item>, names: Names): JsonBodyValue =>
  rawJson(
    snapshots.assemble(
      items,
      names,
      0,
      () => new InputFold(names),
      (state) => new InputFold(names, state)
    )
  )

/** The `input` array built and printed whole, item by item: the reference the cached form must equal. */
const uncachedInput = (items: ReadonlyArray<Item>, names: Names): JsonBodyValue => {
  const input: Array<JsonBodyValue> = []
  for (const item of items) {
    const encoded = inputItem(item, names)
    if (encoded !== undefined) input.push(encoded)
  }
  return input
}

const validate = (request: Request): ReadonlyArray<ConfigWarning> => {
  const warn = (setting: string, message: string) => configWarning("openai-responses", setting, message)
  const { config } = request
  const out: Array<ConfigWarning> = []
  if (config.topK !== undefined) out.push(warn("topK", "the OpenAI Responses API has no top_k; it is not sent"))
  if (config.stopSequences !== undefined && config.stopSequences.length > 0) {
    out.push(warn("stopSequences", "the OpenAI Responses API has no stop sequences; they are not sent"))
  }
  if (config.reasoning?.budgetTokens !== undefined) {
    out.push(warn("reasoning.budgetTokens", "OpenAI takes a reasoning effort, not a token budget; the budget is not sent"))
  }
  if (request.tools.length === 0 && config.toolChoice !== undefined) {
    out.push(warn("toolChoice", "tool_choice needs at least one tool; it is not sent"))
  }
  if (request.tools.length === 0 && config.parallelToolCalls !== undefined) {
    out.push(warn("parallelToolCalls", "parallel_tool_calls needs at least one tool; it is not sent"))
  }
  const assistantImage = request.items.some(
    (item) => item.type === "message" && item.role === "assistant" && item.content.some((p) => p.type === "input_image" || p.type === "input_image_url")
  )
  if (assistantImage) out.push(warn("items", "Responses assistant messages cannot carry images; they are not sent"))
  out.push(...foreignOutputWarnings(request, "openai-responses"))
  return out
}

/**
 * The OpenAI Responses API (`POST /v1/responses`). Stateless on purpose: the whole history is sent each turn
 * (no `previous_response_id`), so the body is a pure function of the neutral request and prompt caching keys on
 * a prefix we control. Reasoning comes back as encrypted items and is returned verbatim on the next turn.
 */
const responsesScheme = (history: (items: ReadonlyArray<Item>, names: Names) => JsonBodyValue, envelopes?: EnvelopeCache): Scheme => ({
  name: "openai-responses",
  validate,
  decoder: (request) =>
    makeOpenAiResponsesDecoder(request === undefined ? undefined : toolNames(request.tools, "openai-responses")),
  encodeRequest(request) {
    const names = toolNames(request.tools, "openai-responses")
    const input = history(request.items, names)
    // With the cache, the history goes last after an envelope printed once per config, tools and prompt.
    if (envelopes !== undefined && isRawJson(input)) return envelopes.body(request, printedEnvelope, "input", input.text)
    return jsonBody({ ...envelopeFields(request, names), input })
  }
})

/** The body's fields before `input`, in the order they are sent: the history goes last, so they stay byte-identical while a conversation grows. */
const envelopeFields = (request: Request, names: Names) => {
  const { config } = request
  const withTools = request.tools.length > 0
  const reasoning = config.reasoning
  const tools = withHostedTools(
    withTools ? toolsFragment(request.tools, "openai-responses") : undefined,
    hostedToolEntries(config.hostedTools, "openai-responses")
  )
  return {
    model: request.model,
    instructions: request.systemPrompt,
    tools: tools === undefined ? undefined : rawJson(tools),
    tool_choice: withTools && config.toolChoice !== undefined ? toolChoice(config.toolChoice, names) : undefined,
    parallel_tool_calls: withTools ? config.parallelToolCalls : undefined,
    max_output_tokens: config.maxTokens,
    temperature: config.temperature,
    top_p: config.topP,
    // A summary is what streams as visible reasoning text; without it only encrypted content comes back.
    reasoning: reasoning === undefined ? undefined : { effort: reasoning.effort, summary: "auto" },
    include: reasoning === undefined ? undefined : ["reasoning.encrypted_content"],
    text: responsesTextFormat(config.responseFormat),
    // Stateless: the whole history travels in every request, so nothing is kept on OpenAI's side.
    store: false,
    stream: true
  } satisfies { readonly [key: string]: JsonBodyValue | undefined }
}

const printedEnvelope = (request: Request): string => jsonBody(envelopeFields(request, toolNames(request.tools, "openai-responses")))

const isRawJson = (value: JsonBodyValue): value is RawJson =>
  typeof value === "object" && value !== null && !Array.isArray(value) && (value as { _tag?: unknown })._tag === "RawJson"

/** The OpenAI Responses wire format (`/responses`, typed SSE events, reasoning items sent back as received). */
export const openAiResponsesScheme: Scheme = responsesScheme(cachedInput, new EnvelopeCache())

/** The same scheme without the fragment cache, item by item as before it: tests hold both to the same bytes. */
export const uncachedOpenAiResponsesScheme: Scheme = responsesScheme(uncachedInput)

// A fold is made per request and none is alive between runs: one kept so V8 keeps its shapes (`shape-anchor.ts`).
anchorShapes(new InputFold(buildToolNameMap([], "openai-responses")))
