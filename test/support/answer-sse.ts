import type { SchemeName } from "../../src/llm/scheme.ts"
import { sseText } from "../../src/testing/index.ts"

/** Token counts a scripted answer reports, in each provider's own fields. */
export interface AnswerUsage {
  readonly input: number
  readonly output: number
  readonly cacheRead?: number
  readonly cacheWrite?: number
  readonly reasoning?: number
}

const DEFAULT_USAGE: AnswerUsage = { input: 20, output: 10 }

const json = (value: unknown): string => JSON.stringify(value)

/**
 * One complete streamed answer with `text`, in the genuine wire shape of each provider (the fields and event
 * order of the recorded transcripts in test/fixtures/sse, cut to what a one-shot answer needs).
 */
export const answerSse = (scheme: SchemeName, text: string, usage: AnswerUsage = DEFAULT_USAGE, model = "replayed-model"): string => {
  const half = Math.ceil(text.length / 2)
  const parts = [text.slice(0, half), text.slice(half)].filter((part) => part !== "")
  switch (scheme) {
    case "openai-chat":
      return sseText([
        ...parts.map((content, i) => ({
          data: json({ id: "chatcmpl-1", object: "chat.completion.chunk", model, choices: [{ index: 0, delta: i === 0 ? { role: "assistant", content } : { content }, finish_reason: null }], usage: null })
        })),
        { data: json({ id: "chatcmpl-1", object: "chat.completion.chunk", model, choices: [{ index: 0, delta: {}, finish_reason: "stop" }], usage: null }) },
        {
          data: json({
            id: "chatcmpl-1", object: "chat.completion.chunk", model, choices: [],
            usage: {
              prompt_tokens: usage.input, completion_tokens: usage.output, total_tokens: usage.input + usage.output,
              prompt_tokens_details: { cached_tokens: usage.cacheRead ?? 0 },
              completion_tokens_details: { reasoning_tokens: usage.reasoning ?? 0 }
            }
          })
        },
        { data: "[DONE]" }
      ])
    case "openai-responses": {
      const item = { id: "msg_1", type: "message", status: "in_progress", content: [], role: "assistant" }
      const done = { ...item, status: "completed", content: [{ type: "output_text", annotations: [], text }] }
      let seq = 0
      const ev = (type: string, body: object) => ({ event: type, data: json({ type, ...body, sequence_number: seq++ }) })
      return sseText([
        ev("response.created", { response: { id: "resp_1", object: "response", status: "in_progress", model, output: [] } }),
        ev("response.output_item.added", { output_index: 0, item }),
        ev("response.content_part.added", { item_id: "msg_1", output_index: 0, content_index: 0, part: { type: "output_text", annotations: [], text: "" } }),
        ...parts.map((delta) => ev("response.output_text.delta", { item_id: "msg_1", output_index: 0, content_index: 0, delta })),
        ev("response.output_text.done", { item_id: "msg_1", output_index: 0, content_index: 0, text }),
        ev("response.content_part.done", { item_id: "msg_1", output_index: 0, content_index: 0, part: { type: "output_text", annotations: [], text } }),
        ev("response.output_item.done", { output_index: 0, item: done }),
        ev("response.completed", {
          response: {
            id: "resp_1", object: "response", status: "completed", model, output: [done],
            usage: {
              input_tokens: usage.input, input_tokens_details: { cached_tokens: usage.cacheRead ?? 0 },
              output_tokens: usage.output, output_tokens_details: { reasoning_tokens: usage.reasoning ?? 0 },
              total_tokens: usage.input + usage.output
            }
          }
        })
      ])
    }
    case "anthropic": {
      const cacheRead = usage.cacheRead ?? 0
      const cacheWrite = usage.cacheWrite ?? 0
      return sseText([
        {
          event: "message_start",
          data: json({
            type: "message_start",
            message: {
              model, id: "msg_1", type: "message", role: "assistant", content: [], stop_reason: null, stop_sequence: null,
              usage: { input_tokens: usage.input - cacheRead - cacheWrite, cache_creation_input_tokens: cacheWrite, cache_read_input_tokens: cacheRead, output_tokens: 1 }
            }
          })
        },
        { event: "content_block_start", data: json({ type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }) },
        ...parts.map((t) => ({ event: "content_block_delta", data: json({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: t } }) })),
        { event: "content_block_stop", data: json({ type: "content_block_stop", index: 0 }) },
        { event: "message_delta", data: json({ type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: usage.output } }) },
        { event: "message_stop", data: json({ type: "message_stop" }) }
      ])
    }
    case "gemini": {
      const meta = {
        promptTokenCount: usage.input,
        candidatesTokenCount: usage.output - (usage.reasoning ?? 0),
        totalTokenCount: usage.input + usage.output,
        ...(usage.cacheRead === undefined ? {} : { cachedContentTokenCount: usage.cacheRead }),
        ...(usage.reasoning === undefined ? {} : { thoughtsTokenCount: usage.reasoning })
      }
      return sseText([
        ...parts.map((t) => ({ data: json({ candidates: [{ content: { parts: [{ text: t }], role: "model" }, index: 0 }], usageMetadata: meta, modelVersion: model }) })),
        { data: json({ candidates: [{ content: { parts: [{ text: "" }], role: "model" }, finishReason: "STOP", index: 0 }], usageMetadata: meta, modelVersion: model }) }
      ])
    }
  }
}

/** An Anthropic answer given as one forced tool call (`tool_use` block with streamed `input_json_delta`s). */
export const anthropicToolAnswerSse = (name: string, argumentsJson: string, usage: AnswerUsage = DEFAULT_USAGE): string => {
  const half = Math.ceil(argumentsJson.length / 2)
  return sseText([
    {
      event: "message_start",
      data: json({ type: "message_start", message: { model: "claude-3-5-haiku-20241022", id: "msg_2", type: "message", role: "assistant", content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: usage.input, output_tokens: 1 } } })
    },
    { event: "content_block_start", data: json({ type: "content_block_start", index: 0, content_block: { type: "tool_use", id: "toolu_1", name, input: {} } }) },
    ...[argumentsJson.slice(0, half), argumentsJson.slice(half)].map((partial_json) => ({
      event: "content_block_delta",
      data: json({ type: "content_block_delta", index: 0, delta: { type: "input_json_delta", partial_json } })
    })),
    { event: "content_block_stop", data: json({ type: "content_block_stop", index: 0 }) },
    { event: "message_delta", data: json({ type: "message_delta", delta: { stop_reason: "tool_use", stop_sequence: null }, usage: { output_tokens: usage.output } }) },
    { event: "message_stop", data: json({ type: "message_stop" }) }
  ])
}
