import type { StopReason } from "../../llm/event.ts"
import { effectiveStopReason } from "../script.ts"
import { details, namedEvent, reportedUsage } from "./frames.ts"
import type { ContentPart, FormatWriter, WriterFactory } from "./frames.ts"
import type { ScriptedResponse } from "../script.ts"

/** Reasons the Responses API states as `incomplete_details.reason`; the others complete normally. */
const INCOMPLETE: Partial<Record<StopReason, string>> = { max_tokens: "max_output_tokens", content_filter: "content_filter" }

const CREATED = 1767225600

/**
 * Responses API events as OpenAI streams them: `response.created` / `in_progress`, then per output item its
 * `output_item.added`, the deltas (`output_text`, `reasoning_summary_text`, `function_call_arguments`) between
 * their part and `…done` events, its `output_item.done` (a reasoning item's carries `encrypted_content`), and
 * `response.completed` (or `response.incomplete`) repeating every item with the usage. Every event has its
 * `sequence_number`. An error is an `error` event followed by `response.failed`.
 */
const responsesWire = (response: ScriptedResponse, ordinal: number) => {
  const responseId = `resp_scripted${ordinal}`
  const model = response.responseModel ?? "scripted-model"
  let sequence = 0
  const event = (type: string, fields: Record<string, unknown>) => namedEvent(type, { type, ...fields, sequence_number: sequence++ })
  const output: Array<Record<string, unknown>> = []
  const envelope = (status: string, extra: Record<string, unknown> = {}) => ({
    id: responseId,
    object: "response",
    created_at: CREATED,
    status,
    error: null,
    incomplete_details: null,
    model,
    output: status === "in_progress" ? [] : output,
    // What the request asked for, echoed back in every response object; the replay provider reports the defaults.
    instructions: null,
    tools: [],
    tool_choice: "auto",
    parallel_tool_calls: true,
    temperature: 1,
    top_p: 1,
    metadata: {},
    usage: null,
    ...extra
  })
  const usage = () => {
    const u = reportedUsage(response)
    return {
      input_tokens: u.inputTokens,
      ...details("input_tokens_details", { cached_tokens: u.cacheReadTokens, cache_write_tokens: u.cacheWriteTokens }),
      output_tokens: u.outputTokens,
      ...details("output_tokens_details", { reasoning_tokens: u.reasoningTokens }),
      total_tokens: u.inputTokens + u.outputTokens
    }
  }
  const final = () => {
    const reason = INCOMPLETE[effectiveStopReason(response)]
    return reason === undefined ? envelope("completed", { usage: usage() }) : envelope("incomplete", { usage: usage(), incomplete_details: { reason } })
  }
  const writer: FormatWriter = {
    open: () => [event("response.created", { response: envelope("in_progress") }), event("response.in_progress", { response: envelope("in_progress") })],
    part(part, position, unfinished) {
      const output_index = output.length
      switch (part.type) {
        case "text": {
          const item_id = `msg_scripted${ordinal}_${position}`
          const text = part.chunks.join("")
          const done = { type: "output_text", annotations: [], text }
          const item = { id: item_id, type: "message", status: "completed", role: "assistant", content: [done] }
          output.push(item)
          const at = { item_id, output_index, content_index: 0 }
          return [
            event("response.output_item.added", { output_index, item: { ...item, status: "in_progress", content: [] } }),
            event("response.content_part.added", { ...at, part: { ...done, text: "" } }),
            ...part.chunks.map((delta) => event("response.output_text.delta", { ...at, delta, logprobs: [] })),
            ...(unfinished
              ? []
              : [
                  event("response.output_text.done", { ...at, text, logprobs: [] }),
                  event("response.content_part.done", { ...at, part: done }),
                  event("response.output_item.done", { output_index, item })
                ])
          ]
        }
        case "reasoning": {
          const item_id = `rs_scripted${ordinal}_${position}`
          const text = part.chunks.join("")
          const summary = text === "" ? [] : [{ type: "summary_text", text }]
          const item = { id: item_id, type: "reasoning", summary, ...(part.signature === undefined ? {} : { encrypted_content: part.signature }) }
          output.push(item)
          const at = { item_id, output_index, summary_index: 0 }
          return [
            event("response.output_item.added", { output_index, item: { id: item_id, type: "reasoning", summary: [] } }),
            ...(text === ""
              ? []
              : [
                  event("response.reasoning_summary_part.added", { ...at, part: { type: "summary_text", text: "" } }),
                  ...part.chunks.map((delta) => event("response.reasoning_summary_text.delta", { ...at, delta })),
                  ...(unfinished
                    ? []
                    : [event("response.reasoning_summary_text.done", { ...at, text }), event("response.reasoning_summary_part.done", { ...at, part: summary[0] })])
                ]),
            ...(unfinished ? [] : [event("response.output_item.done", { output_index, item })])
          ]
        }
        case "tool_call": {
          const item_id = `fc_scripted${ordinal}_${position}`
          const args = part.chunks.join("")
          const item = { id: item_id, type: "function_call", status: "completed", arguments: args, call_id: part.id ?? `call_scripted${ordinal}_${position}`, name: part.name }
          output.push(item)
          return [
            event("response.output_item.added", { output_index, item: { ...item, status: "in_progress", arguments: "" } }),
            ...part.chunks.map((delta) => event("response.function_call_arguments.delta", { item_id, output_index, delta })),
            ...(unfinished
              ? []
              : [event("response.function_call_arguments.done", { item_id, output_index, arguments: args }), event("response.output_item.done", { output_index, item })])
          ]
        }
      }
    },
    complete() {
      const done = final()
      return [event(done.status === "completed" ? "response.completed" : "response.incomplete", { response: done })]
    },
    error: (code, message) => [
      event("error", { error: { type: code, code, message, param: null } }),
      event("response.failed", { response: envelope("failed", { usage: usage(), error: { code, message } }) })
    ]
  }
  return { writer, final }
}

export const openAiResponsesWriter: WriterFactory = (response, { ordinal }) => responsesWire(response, ordinal).writer

/**
 * A non-streamed `response` object: what the stream's `response.completed` (or `response.incomplete`) carries,
 * every output item whole and the usage.
 */
export const openAiResponsesJson = (response: ScriptedResponse, parts: ReadonlyArray<ContentPart>, ordinal: number): unknown => {
  const { writer, final } = responsesWire(response, ordinal)
  parts.forEach((part, position) => writer.part(part, position, false))
  return final()
}
