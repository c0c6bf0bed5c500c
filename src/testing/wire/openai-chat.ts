import type { StopReason } from "../../llm/event.ts"
import { effectiveStopReason } from "../script.ts"
import { dataEvent, details, reportedUsage } from "./frames.ts"
import type { ContentPart, WriterFactory } from "./frames.ts"
import type { ScriptedResponse, ScriptUsage } from "../script.ts"

/** Chat has no `stop_sequence` reason: a stop sequence ends the answer with `stop`, like any normal end. */
const FINISH_REASONS: Readonly<Record<StopReason, string>> = {
  end_turn: "stop",
  stop_sequence: "stop",
  max_tokens: "length",
  tool_use: "tool_calls",
  content_filter: "content_filter",
  other: "stop"
}

/** A fixed creation time keeps encoded replies byte-stable (2026-01-01T00:00:00Z). */
const CREATED = 1767225600

/** `CompletionUsage`, as the usage chunk of a stream and the `usage` of a `chat.completion` spell it. */
const chatUsage = (usage: ScriptUsage) => ({
  prompt_tokens: usage.inputTokens,
  completion_tokens: usage.outputTokens,
  total_tokens: usage.inputTokens + usage.outputTokens,
  ...details("prompt_tokens_details", { cached_tokens: usage.cacheReadTokens, cache_write_tokens: usage.cacheWriteTokens }),
  ...details("completion_tokens_details", { reasoning_tokens: usage.reasoningTokens })
})

/**
 * A non-streamed `chat.completion`: one choice whose message holds the whole text (`content`, null without any),
 * the reasoning as `reasoning_content` where there is some, and each call in `tool_calls` with its argument text;
 * then the finish reason and the usage.
 */
export const openAiChatJson = (response: ScriptedResponse, parts: ReadonlyArray<ContentPart>, ordinal: number): unknown => {
  const joined = (type: ContentPart["type"]) => parts.filter((part) => part.type === type).map((part) => part.chunks.join(""))
  const text = joined("text")
  const reasoning = joined("reasoning")
  const calls = parts.flatMap((part, position) =>
    part.type === "tool_call"
      ? [{ id: part.id ?? `call_scripted${ordinal}_${position}`, type: "function", function: { name: part.name, arguments: part.chunks.join("") } }]
      : []
  )
  return {
    id: `chatcmpl-scripted${ordinal}`,
    object: "chat.completion",
    created: CREATED,
    model: response.responseModel ?? "scripted-model",
    choices: [
      {
        index: 0,
        message: {
          role: "assistant",
          content: text.length === 0 ? null : text.join(""),
          refusal: null,
          ...(reasoning.length === 0 ? {} : { reasoning_content: reasoning.join("") }),
          ...(calls.length === 0 ? {} : { tool_calls: calls }),
          annotations: []
        },
        logprobs: null,
        finish_reason: FINISH_REASONS[effectiveStopReason(response)]
      }
    ],
    usage: chatUsage(reportedUsage(response))
  }
}

/**
 * Chat Completions chunks as OpenAI streams them: a role chunk, one chunk per delta (`content`, a tool call's
 * `function.arguments`, each call announced with its id and name at its own `index`), a chunk with
 * `finish_reason`, the usage chunk with empty `choices` (`stream_options.include_usage`), then `[DONE]`.
 * Reasoning is streamed as `reasoning_content` (DeepSeek, vLLM, llama.cpp, Qwen); it has no signature on Chat.
 */
export const openAiChatWriter: WriterFactory = (response, { ordinal }) => {
  const id = `chatcmpl-scripted${ordinal}`
  const model = response.responseModel ?? "scripted-model"
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
    dataEvent({ id, object: "chat.completion.chunk", created: CREATED, model, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] })
  let toolIndex = 0
  return {
    open: () => [chunk({ role: "assistant", content: "", refusal: null })],
    part(part, position) {
      switch (part.type) {
        case "text":
          return part.chunks.map((content) => chunk({ content }))
        case "reasoning":
          return part.chunks.map((reasoning_content) => chunk({ reasoning_content }))
        case "tool_call": {
          const index = toolIndex++
          const head = { index, id: part.id ?? `call_scripted${ordinal}_${position}`, type: "function", function: { name: part.name, arguments: "" } }
          return [chunk({ tool_calls: [head] }), ...part.chunks.map((args) => chunk({ tool_calls: [{ index, function: { arguments: args } }] }))]
        }
      }
    },
    complete() {
      return [
        chunk({}, FINISH_REASONS[effectiveStopReason(response)]),
        dataEvent({ id, object: "chat.completion.chunk", created: CREATED, model, choices: [], usage: chatUsage(reportedUsage(response)) }),
        dataEvent("[DONE]")
      ]
    },
    // OpenAI ends a failed stream with a bare error object and no [DONE].
    error: (code, message) => [dataEvent({ error: { message, type: code, param: null, code: null } })]
  }
}
