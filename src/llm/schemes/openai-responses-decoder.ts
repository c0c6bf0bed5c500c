import type { Event, StopReason } from "../event.ts"
import { providerItem, providerJsonText } from "../provider-item.ts"
import type { StreamDecoder } from "../scheme.ts"
import type { ToolNameMap } from "../../schema/tool-names.ts"
import { ResponseCallIds } from "./call-ids.ts"
import { BlockTracker } from "./openai-block-tracker.ts"
import { RESPONSES_USAGE, usageEvent } from "./openai-usage.ts"
import { codeField, isRecord, numberField, parseDataObject, recordField, stringField } from "./openai-wire.ts"
import type { JsonRecord } from "./openai-wire.ts"

const INCOMPLETE_REASONS: Readonly<Record<string, StopReason>> = {
  max_output_tokens: "max_tokens",
  content_filter: "content_filter"
}

/** What the decoder remembers about one output item, by output index. */
interface OutputEntry {
  readonly kind: "message" | "function_call" | "reasoning"
  /** Argument text or reasoning text delivered so far, to fill in what a `done` event has that deltas lacked. */
  streamed: string
}

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
 * item id and `encrypted_content` from `response.output_item.done` (the copy in `added` may be incomplete).
 * Every call has its own id: a missing one is generated, a repeated one disambiguated (`ResponseCallIds`).
 */
export const makeOpenAiResponsesDecoder = (names?: ToolNameMap, options: ResponsesDecoderOptions = {}): StreamDecoder => {
  const blocks = new BlockTracker()
  const idPrefix = options.generatedIdPrefix ?? `call_${crypto.randomUUID().slice(0, 8)}_`
  let generated = 0
  const ids = new ResponseCallIds(() => `${idPrefix}${generated++}`)
  const entries = new Map<number, OutputEntry>()
  let started = false
  let sawToolCall = false
  let done = false

  const start = (out: Array<Event>) => {
    if (started) return
    started = true
    out.push({ type: "status", status: "started" })
  }

  const key = (outputIndex: number) => `output:${outputIndex}`

  const emitText = (outputIndex: number, kind: "text" | "thinking", text: string, out: Array<Event>) => {
    if (text === "") return
    let index = blocks.indexOf(key(outputIndex))
    if (index === undefined) {
      if (!entries.has(outputIndex)) entries.set(outputIndex, { kind: kind === "text" ? "message" : "reasoning", streamed: "" })
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

  /** A `done` event repeats the whole value; send only what the deltas did not (all of it for servers without deltas). */
  const emitRest = (outputIndex: number, whole: string | undefined, out: Array<Event>, kind: "input_json" | "thinking") => {
    const entry = entries.get(outputIndex)
    if (whole === undefined || entry === undefined || !whole.startsWith(entry.streamed)) return
    const rest = whole.slice(entry.streamed.length)
    if (kind === "input_json") emitArguments(outputIndex, rest, out)
    else emitText(outputIndex, "thinking", rest, out)
  }

  const openItem = (outputIndex: number, item: JsonRecord, out: Array<Event>) => {
    if (blocks.isOpen(key(outputIndex))) return
    switch (stringField(item, "type")) {
      case "function_call": {
        sawToolCall = true
        const wireName = stringField(item, "name") ?? ""
        entries.set(outputIndex, { kind: "function_call", streamed: "" })
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
        entries.set(outputIndex, { kind: "reasoning", streamed: "" })
        blocks.start(key(outputIndex), { kind: "thinking" }, out)
        return
      case "message":
        // The text block opens with the first delta, so a message without text leaves no empty block behind.
        entries.set(outputIndex, { kind: "message", streamed: "" })
        return
    }
  }

  const summaryText = (item: JsonRecord): string => {
    const summary = item["summary"]
    if (!Array.isArray(summary)) return ""
    return summary
      .map((part) => (isRecord(part) ? (stringField(part, "text") ?? "") : ""))
      .filter((text) => text !== "")
      .join("\n\n")
  }

  /**
   * An output item of a kind this library does not model (hosted tool calls such as `web_search_call`, custom
   * tool and tool search calls, …) is kept whole as a provider item once done (decision 0025).
   */
  const providerOutput = (item: JsonRecord, out: Array<Event>) => {
    const kind = stringField(item, "type") ?? "unknown"
    out.push({ type: "provider_output", index: blocks.reserve(), item: providerItem("openai-responses", kind, item, `Responses output item ${kind}`) })
  }

  const itemDone = (outputIndex: number, item: JsonRecord, out: Array<Event>) => {
    openItem(outputIndex, item, out)
    const entry = entries.get(outputIndex)
    if (entry === undefined) return providerOutput(item, out)
    switch (entry.kind) {
      case "function_call":
        emitRest(outputIndex, stringField(item, "arguments"), out, "input_json")
        blocks.stop(key(outputIndex), out, "tool_use")
        return
      case "reasoning": {
        if (entry.streamed === "") emitText(outputIndex, "thinking", summaryText(item), out)
        const id = stringField(item, "id")
        const encrypted = stringField(item, "encrypted_content")
        blocks.stop(
          key(outputIndex),
          out,
          undefined,
          id === undefined ? undefined : { provider: "openai", id, ...(encrypted === undefined ? {} : { encryptedContent: encrypted }) }
        )
        return
      }
      case "message":
        blocks.stop(key(outputIndex), out, stringField(item, "status") === "completed" ? "end_turn" : undefined)
        return
    }
  }

  const finish = (response: JsonRecord | undefined, stopReason: StopReason, out: Array<Event>) => {
    blocks.stopAll(out, stopReason)
    const usage = response === undefined ? undefined : recordField(response, "usage")
    if (usage !== undefined) out.push(usageEvent(usage, RESPONSES_USAGE))
    out.push({ type: "status", status: "completed", stopReason })
    done = true
  }

  const fail = (code: string, message: string, out: Array<Event>, response?: JsonRecord) => {
    blocks.abortAll(message, out)
    const usage = response === undefined ? undefined : recordField(response, "usage")
    if (usage !== undefined) out.push(usageEvent(usage, RESPONSES_USAGE))
    out.push({ type: "error", code, message }, { type: "status", status: "failed" })
    done = true
  }

  const handle = (record: JsonRecord, type: string, out: Array<Event>) => {
    const outputIndex = numberField(record, "output_index") ?? 0
    const text = stringField(record, "delta") ?? ""
    const response = recordField(record, "response")
    switch (type) {
      case "error":
        fail(codeField(record, "code") ?? "provider_error", stringField(record, "message") ?? "the provider reported an error", out)
        return
      case "response.failed": {
        const error = response === undefined ? undefined : recordField(response, "error")
        fail(
          (error && codeField(error, "code")) ?? "response_failed",
          (error && stringField(error, "message")) ?? "the response failed",
          out,
          response
        )
        return
      }
    }
    start(out)
    switch (type) {
      case "response.output_item.added":
      case "response.output_item.done": {
        const item = recordField(record, "item")
        if (item === undefined) return
        if (type === "response.output_item.added") openItem(outputIndex, item, out)
        else itemDone(outputIndex, item, out)
        return
      }
      case "response.output_text.delta":
      case "response.refusal.delta":
        emitText(outputIndex, "text", text, out)
        return
      case "response.reasoning_summary_text.delta":
      case "response.reasoning_text.delta":
        emitText(outputIndex, "thinking", text, out)
        return
      case "response.reasoning_summary_part.added": {
        // Summary parts are separate paragraphs; the neutral reasoning text is one string.
        const entry = entries.get(outputIndex)
        if ((numberField(record, "summary_index") ?? 0) > 0 && entry !== undefined && entry.streamed !== "") {
          emitText(outputIndex, "thinking", "\n\n", out)
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
        emitRest(outputIndex, stringField(record, "arguments"), out, "input_json")
        return
      case "response.completed":
        finish(response, sawToolCall ? "tool_use" : "end_turn", out)
        return
      case "response.incomplete": {
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
      handle(record, stringField(record, "type") ?? message.event, out)
      return out
    },
    end() {
      if (done) return []
      const out: Array<Event> = []
      fail("incomplete_stream", "the stream ended before the response finished", out)
      return out
    }
  }
}
