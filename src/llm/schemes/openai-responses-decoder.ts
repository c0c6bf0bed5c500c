import type { Event, StopReason } from "../event.ts"
import { providerItem, providerJsonText } from "../provider-item.ts"
import { errorEvent } from "../raw-error.ts"
import { startedEvent } from "../response-meta.ts"
import type { StreamDecoder } from "../scheme.ts"
import type { ToolNameMap } from "../../schema/tool-names.ts"
import { ResponseCallIds } from "./call-ids.ts"
import { BlockTracker } from "./openai-block-tracker.ts"
import { RESPONSES_USAGE, usageEvent } from "./openai-usage.ts"
import { asFiniteNumber, asString, codeField, isRecord, numberField, parseDataObject, recordField, stringField } from "./openai-wire.ts"
import type { JsonRecord } from "./openai-wire.ts"
import { randomUuid } from "../random-uuid.ts"

const INCOMPLETE_REASONS: Readonly<Record<string, StopReason>> = {
  max_output_tokens: "max_tokens",
  content_filter: "content_filter"
}

/** What the decoder remembers about one output item, by output index. */
interface OutputEntry {
  readonly kind: "message" | "function_call" | "reasoning"
  /** Text, argument text or reasoning text delivered so far, to fill in what a `done` event has that deltas lacked. */
  streamed: string
  /** Set by the item's `output_item.done` (or its copy in `response.completed`): its block is stopped. */
  closed: boolean
  /** Message: the content part being streamed and where its text starts in `streamed`. */
  part: number | undefined
  partStart: number
  /** Message: the highest content index whose `…done` event was applied (done events repeat per part). */
  lastDonePart: number
  /** Reasoning: which deltas filled the block, summary text or the raw reasoning text (`content`). */
  source: "summary" | "content" | undefined
  /** Reasoning: a later summary part began; the paragraph break goes before its first text. */
  pendingBreak: boolean
}

const newEntry = (kind: OutputEntry["kind"]): OutputEntry => ({
  kind,
  streamed: "",
  closed: false,
  part: undefined,
  partStart: 0,
  lastDonePart: -1,
  source: undefined,
  pendingBreak: false
})

/** The kinds of output item this decoder turns into blocks; `response.completed` copies of others are skipped. */
const MODELLED_ITEMS: ReadonlySet<string> = new Set(["message", "function_call", "reasoning"])

export interface ResponsesDecoderOptions {
  /**
   * Prefix for call ids made up when a (compatible) server sends a `function_call` without `call_id` or `id`.
   * Unique per decoder by default, like the Chat decoder's, so they never collide with earlier turns' ids.
   */
  readonly generatedIdPrefix?: string
}

/**
 * Responses API events → neutral events. Each output item is one block keyed by its `output_index`: a message
 * is a text block, a `function_call` a tool_use block, a `reasoning` item a thinking block whose stop carries the
 * item id and `encrypted_content` from `response.output_item.done` (the copy in `added` may be incomplete; the
 * API reference names the `done` copy as the one to send back — decision 0020).
 * Every call has its own id: a missing one is generated, a repeated one disambiguated (`ResponseCallIds`).
 *
 * The closing events are the authority, the deltas a preview (decision 0021): an item's `output_item.done`
 * states its whole text / arguments / reasoning, which closes the block as `block_stop.final`; what the deltas
 * lacked is first sent as one more delta when they are a prefix of it (servers that send no deltas, or trimmed
 * ones). `response.completed` (or `incomplete`) closes, from its `output[]` copy, every item whose
 * `output_item.done` never came, and adds items never announced at all.
 */
export const makeOpenAiResponsesDecoder = (names?: ToolNameMap, options: ResponsesDecoderOptions = {}): StreamDecoder => {
  const blocks = new BlockTracker()
  const idPrefix = options.generatedIdPrefix ?? `call_${randomUuid().slice(0, 8)}_`
  let generated = 0
  const ids = new ResponseCallIds(() => `${idPrefix}${generated++}`)
  const entries = new Map<number, OutputEntry>()
  /** Output index by item id, to find an item again in `response.completed` (output indices may have gaps). */
  const byId = new Map<string, number>()
  let started = false
  let sawToolCall = false
  let done = false
  /** The `error` event's details, once one came: the response has failed and awaits its `response.failed`. */
  let reported: { readonly code: string; readonly message: string; readonly details: JsonRecord } | undefined

  /** `response` is the event's response object: `response.created`, the first event, names the model and id. */
  const start = (response: JsonRecord | undefined, out: Array<Event>) => {
    if (started) return
    started = true
    out.push(response === undefined ? { type: "status", status: "started" } : startedEvent(response["model"], response["id"]))
  }

  /**
   * The block key of an output index, made once per index: every delta looks its block up, and a key built
   * afresh is a new string to allocate and hash each time. Bounded by the indices the response uses.
   */
  const keys = new Map<number, string>()
  const key = (outputIndex: number): string => {
    let made = keys.get(outputIndex)
    if (made === undefined) {
      made = `output:${outputIndex}`
      keys.set(outputIndex, made)
    }
    return made
  }

  const emitText = (outputIndex: number, kind: "text" | "thinking", text: string, out: Array<Event>) => {
    if (text === "") return
    let index = blocks.indexOf(key(outputIndex))
    if (index === undefined) {
      if (!entries.has(outputIndex)) entries.set(outputIndex, newEntry(kind === "text" ? "message" : "reasoning"))
      const entry = entries.get(outputIndex)
      // Deltas after the item's `done` have no block to go to; a new block would repeat the item.
      if (entry !== undefined && entry.closed) return
      index = blocks.start(key(outputIndex), { kind }, out)
    }
    const entry = entries.get(outputIndex)
    if (entry !== undefined) entry.streamed += text
    out.push({ type: "block_delta", index, delta: { kind, text } })
  }

  const emitArguments = (outputIndex: number, json: string, out: Array<Event>) => {
    const index = blocks.indexOf(key(outputIndex))
    const entry = entries.get(outputIndex)
    if (index === undefined || entry === undefined || json === "") return
    entry.streamed += json
    out.push({ type: "block_delta", index, delta: { kind: "input_json", json } })
  }

  /**
   * A `done` event repeats the whole value; send only what the deltas did not (all of it for servers without
   * deltas). Deltas that are not a prefix of it are left as they are: the block's final value corrects them.
   */
  const emitRest = (outputIndex: number, whole: string | undefined, out: Array<Event>) => {
    const entry = entries.get(outputIndex)
    if (whole === undefined || entry === undefined || !whole.startsWith(entry.streamed)) return
    const rest = whole.slice(entry.streamed.length)
    if (entry.kind === "function_call") emitArguments(outputIndex, rest, out)
    else emitText(outputIndex, entry.kind === "message" ? "text" : "thinking", rest, out)
  }

  /** A message text delta: a new content index starts a new part, whose `…done` event may complete it. */
  const emitMessageText = (outputIndex: number, contentIndex: number, text: string, out: Array<Event>) => {
    const entry = entries.get(outputIndex)
    if (entry !== undefined && entry.kind === "message" && entry.part !== contentIndex) {
      entry.part = contentIndex
      entry.partStart = entry.streamed.length
    }
    emitText(outputIndex, "text", text, out)
  }

  /**
   * `output_text.done` / `refusal.done` / `content_part.done`: one content part's whole text. It fills what
   * that part's deltas lacked as soon as it is known; the item's `done` still states the message's final text.
   */
  const partDone = (outputIndex: number, contentIndex: number, whole: string | undefined, out: Array<Event>) => {
    const entry = entries.get(outputIndex)
    if (whole === undefined || entry === undefined || entry.kind !== "message" || entry.closed) return
    if (contentIndex <= entry.lastDonePart) return
    if (entry.part !== contentIndex) {
      entry.part = contentIndex
      entry.partStart = entry.streamed.length
    }
    const streamed = entry.streamed.slice(entry.partStart)
    if (whole.startsWith(streamed)) emitText(outputIndex, "text", whole.slice(streamed.length), out)
    entry.lastDonePart = contentIndex
    entry.part = undefined
  }

  const openItem = (outputIndex: number, item: JsonRecord, out: Array<Event>) => {
    // A closed item is never reopened: a repeated `done` (or its copy in `response.completed`) adds nothing.
    if (blocks.isOpen(key(outputIndex)) || entries.get(outputIndex)?.closed === true) return
    switch (stringField(item, "type")) {
      case "function_call": {
        sawToolCall = true
        const wireName = stringField(item, "name") ?? ""
        entries.set(outputIndex, newEntry("function_call"))
        blocks.start(
          key(outputIndex),
          {
            kind: "tool_use",
            id: ids.take(stringField(item, "call_id") || stringField(item, "id") || undefined),
            name: names === undefined ? wireName : names.fromWire(wireName)
          },
          out
        )
        emitArguments(outputIndex, stringField(item, "arguments") ?? "", out)
        return
      }
      case "reasoning":
        entries.set(outputIndex, newEntry("reasoning"))
        blocks.start(key(outputIndex), { kind: "thinking" }, out)
        return
      case "message":
        // The text block opens with the first delta, so a message without text leaves no empty block behind.
        if (!entries.has(outputIndex)) entries.set(outputIndex, newEntry("message"))
        return
    }
  }

  const remember = (outputIndex: number, item: JsonRecord) => {
    const id = stringField(item, "id")
    if (id !== undefined && id !== "" && !byId.has(id)) byId.set(id, outputIndex)
  }

  /** The texts of the parts of `list` (an item's `summary` or `content`) whose type is one of `fields`' keys. */
  const partTexts = (list: unknown, fields: Readonly<Record<string, string>>): Array<string> => {
    if (!Array.isArray(list)) return []
    const texts: Array<string> = []
    for (const part of list) {
      if (!isRecord(part)) continue
      const field = fields[stringField(part, "type") ?? ""]
      const text = field === undefined ? undefined : stringField(part, field)
      if (text !== undefined) texts.push(text)
    }
    return texts
  }

  /** Summary parts are separate paragraphs; the neutral reasoning text is one string. */
  const summaryText = (item: JsonRecord): string =>
    partTexts(item["summary"], { summary_text: "text" })
      .filter((text) => text !== "")
      .join("\n\n")

  /**
   * The item's whole value as its closing copy states it, or undefined when that copy does not repeat it (an
   * empty value never erases streamed content: compatible servers send `done` items without their content).
   */
  const finalValue = (entry: OutputEntry, item: JsonRecord): string | undefined => {
    let value: string | undefined
    switch (entry.kind) {
      case "function_call":
        value = stringField(item, "arguments")
        break
      case "message":
        value = partTexts(item["content"], { output_text: "text", refusal: "refusal" }).join("")
        break
      case "reasoning": {
        const summary = summaryText(item)
        const content = partTexts(item["content"], { reasoning_text: "text" }).join("")
        value = entry.source === "content" || (entry.source === undefined && summary === "") ? content : summary
        break
      }
    }
    return value === "" ? undefined : value
  }

  /** Output indices of the unmodelled items already kept as provider items. */
  const providerOutputs = new Set<number>()

  /**
   * An output item of a kind this library does not model (hosted tool calls such as `web_search_call`, custom
   * tool and tool search calls, …) is kept whole as a provider item once done (decision 0025).
   */
  const providerOutput = (outputIndex: number, item: JsonRecord, out: Array<Event>) => {
    // Kept once: `response.completed` repeats an item its own `done` already delivered.
    if (providerOutputs.has(outputIndex)) return
    providerOutputs.add(outputIndex)
    const kind = stringField(item, "type") ?? "unknown"
    out.push({ type: "provider_output", index: blocks.reserve(), item: providerItem("openai-responses", kind, item, `Responses output item ${kind}`) })
  }

  const itemDone = (outputIndex: number, item: JsonRecord, out: Array<Event>) => {
    openItem(outputIndex, item, out)
    remember(outputIndex, item)
    const entry = entries.get(outputIndex)
    if (entry === undefined) return providerOutput(outputIndex, item, out)
    if (entry.closed) return
    const final = finalValue(entry, item)
    emitRest(outputIndex, final, out)
    entry.closed = true
    switch (entry.kind) {
      case "function_call":
        blocks.stop(key(outputIndex), out, "tool_use", undefined, final)
        return
      case "reasoning": {
        const id = stringField(item, "id")
        const encrypted = stringField(item, "encrypted_content")
        blocks.stop(
          key(outputIndex),
          out,
          undefined,
          id === undefined ? undefined : { provider: "openai", id, ...(encrypted === undefined ? {} : { encryptedContent: encrypted }) },
          final
        )
        return
      }
      case "message":
        blocks.stop(key(outputIndex), out, stringField(item, "status") === "completed" ? "end_turn" : undefined, undefined, final)
        return
    }
  }

  /**
   * `response.completed` / `incomplete` repeats every output item: it closes, from that copy, each item whose
   * own `done` never came, and adds modelled items never announced. Items are found by id, else by position
   * (a proxy may rotate ids per event; output indices may skip numbers, so position alone can be wrong).
   */
  const closeFromResponse = (response: JsonRecord | undefined, out: Array<Event>) => {
    const output = response === undefined ? undefined : response["output"]
    if (!Array.isArray(output)) return
    const claimed = new Set<number>()
    output.forEach((item, position) => {
      if (!isRecord(item)) return
      const type = stringField(item, "type") ?? ""
      const id = stringField(item, "id")
      let at = id === undefined ? undefined : byId.get(id)
      if (at === undefined || claimed.has(at)) {
        const entry = entries.get(position)
        at = entry !== undefined && !claimed.has(position) && entry.kind === type ? position : undefined
      }
      if (at === undefined) {
        if (!MODELLED_ITEMS.has(type)) return
        // Never announced: a fresh key no wire output index uses.
        at = -1 - position
      }
      claimed.add(at)
      itemDone(at, item, out)
    })
  }

  /** The response's moderation results (moderated completions), read off its terminal event, which holds them whole. */
  const moderation = (response: JsonRecord | undefined, out: Array<Event>) => {
    const found = response === undefined ? undefined : recordField(response, "moderation")
    if (found !== undefined) out.push({ type: "provider_meta", meta: { scheme: "openai-responses", kind: "moderation", json: providerJsonText(found, "Responses moderation") } })
  }

  const finish = (response: JsonRecord | undefined, stopReason: StopReason, out: Array<Event>) => {
    blocks.stopAll(out, stopReason)
    moderation(response, out)
    const usage = response === undefined ? undefined : recordField(response, "usage")
    if (usage !== undefined) out.push(usageEvent(usage, RESPONSES_USAGE))
    out.push({ type: "status", status: "completed", stopReason })
    done = true
  }

  const fail = (code: string, message: string, out: Array<Event>, response?: JsonRecord, error?: JsonRecord) => {
    blocks.abortAll(message, out)
    moderation(response, out)
    const usage = response === undefined ? undefined : recordField(response, "usage")
    if (usage !== undefined) out.push(usageEvent(usage, RESPONSES_USAGE))
    if (reported === undefined) out.push(errorEvent(code, message, error))
    out.push({ type: "status", status: "failed" })
    done = true
  }

  /**
   * The details of an `error` event: nested under `error` (`{type:"error", error:{type, code, message}}`, as
   * OpenAI streams them) or at the top level (as the API reference documents the event). `code` may be null
   * while `type` names the error class.
   */
  const errorDetails = (record: JsonRecord): { readonly code: string; readonly message: string; readonly details: JsonRecord } => {
    const nested = recordField(record, "error")
    const details = nested ?? record
    const code = codeField(details, "code") ?? (nested === undefined ? undefined : stringField(details, "type"))
    const message = stringField(details, "message") ?? (nested === undefined ? undefined : stringField(record, "message"))
    return { code: code ?? "provider_error", message: message ?? "the provider reported an error", details }
  }

  const handle = (record: JsonRecord, type: string, out: Array<Event>) => {
    // The fields every event may have, read by name: through `numberField` & co. each is a megamorphic lookup,
    // and this runs on every event (decision 0088).
    const outputIndex = asFiniteNumber(record["output_index"]) ?? 0
    const contentIndex = asFiniteNumber(record["content_index"]) ?? 0
    const text = asString(record["delta"]) ?? ""
    const responseField = record["response"]
    const response = isRecord(responseField) ? responseField : undefined
    switch (type) {
      case "error": {
        // Reported at once (a transient code may be retried before content), but the response ends with the
        // `response.failed` that follows, which carries the usage; or with the stream, if none comes.
        if (reported !== undefined) return
        reported = errorDetails(record)
        blocks.abortAll(reported.message, out)
        out.push(errorEvent(reported.code, reported.message, reported.details))
        return
      }
      case "response.failed": {
        const error = response === undefined ? undefined : recordField(response, "error")
        fail(
          (error && codeField(error, "code")) ?? "response_failed",
          (error && stringField(error, "message")) ?? "the response failed",
          out,
          response,
          error
        )
        return
      }
    }
    // After an `error` event only its `response.failed` counts: output would belong to a failed response.
    if (reported !== undefined) return
    start(response, out)
    switch (type) {
      case "response.output_item.added":
      case "response.output_item.done": {
        const item = recordField(record, "item")
        if (item === undefined) return
        if (type === "response.output_item.added") {
          openItem(outputIndex, item, out)
          remember(outputIndex, item)
        } else itemDone(outputIndex, item, out)
        return
      }
      case "response.output_text.delta":
      case "response.refusal.delta":
        emitMessageText(outputIndex, contentIndex, text, out)
        return
      case "response.output_text.done":
        partDone(outputIndex, contentIndex, stringField(record, "text"), out)
        return
      case "response.refusal.done":
        partDone(outputIndex, contentIndex, stringField(record, "refusal"), out)
        return
      case "response.content_part.done": {
        const part = recordField(record, "part")
        if (part === undefined) return
        partDone(outputIndex, contentIndex, partTexts([part], { output_text: "text", refusal: "refusal" })[0], out)
        return
      }
      case "response.reasoning_summary_text.delta":
      case "response.reasoning_text.delta": {
        const before = entries.get(outputIndex)
        // Summary parts are separate paragraphs joined by a blank line, as `summaryText` joins them.
        if (before !== undefined && before.pendingBreak && text !== "") {
          before.pendingBreak = false
          if (type === "response.reasoning_summary_text.delta") emitText(outputIndex, "thinking", "\n\n", out)
        }
        emitText(outputIndex, "thinking", text, out)
        const entry = entries.get(outputIndex)
        if (entry !== undefined && entry.kind === "reasoning" && text !== "") {
          entry.source ??= type === "response.reasoning_text.delta" ? "content" : "summary"
        }
        return
      }
      case "response.reasoning_summary_part.added": {
        const entry = entries.get(outputIndex)
        if ((numberField(record, "summary_index") ?? 0) > 0 && entry !== undefined && entry.streamed !== "") {
          entry.pendingBreak = true
        }
        return
      }
      case "response.output_text.annotation.added": {
        // A citation (url_citation, file_citation, …) for the message's text, kept as the provider sent it.
        const annotation = recordField(record, "annotation")
        if (annotation === undefined) return
        const kind = stringField(annotation, "type") ?? "annotation"
        const index = blocks.indexOf(key(outputIndex))
        out.push({
          type: "citation",
          ...(index === undefined ? {} : { index }),
          citation: { scheme: "openai-responses", kind, json: providerJsonText(annotation, `Responses annotation ${kind}`) }
        })
        return
      }
      case "response.function_call_arguments.delta":
        emitArguments(outputIndex, text, out)
        return
      case "response.function_call_arguments.done":
        emitRest(outputIndex, stringField(record, "arguments"), out)
        return
      case "response.completed":
        closeFromResponse(response, out)
        finish(response, sawToolCall ? "tool_use" : "end_turn", out)
        return
      case "response.incomplete": {
        closeFromResponse(response, out)
        const details = response === undefined ? undefined : recordField(response, "incomplete_details")
        const reason = details === undefined ? undefined : stringField(details, "reason")
        finish(response, (reason !== undefined ? INCOMPLETE_REASONS[reason] : undefined) ?? "other", out)
        return
      }
    }
  }

  return {
    push(message) {
      if (done) return []
      const out: Array<Event> = []
      const record = parseDataObject(message.data)
      if (record === undefined) {
        fail("invalid_response", `responses event is not a JSON object: ${message.data.slice(0, 200)}`, out)
        return out
      }
      handle(record, asString(record["type"]) ?? message.event, out)
      return out
    },
    end() {
      if (done) return []
      const out: Array<Event> = []
      fail("incomplete_stream", "the stream ended before the response finished", out)
      return out
    },
    // After an `error` event nothing but its `response.failed` is awaited: a stream that goes quiet then has
    // said all it will, and ends with the provider's error rather than a timeout.
    isComplete: () => reported !== undefined
  }
}
