import type { StopReason } from "../../llm/event.ts"
import { effectiveStopReason } from "../script.ts"
import { namedEvent, reportedUsage, uncachedInput } from "./frames.ts"
import type { ContentPart, WriterFactory } from "./frames.ts"
import type { ScriptedResponse, ScriptUsage } from "../script.ts"
import { ScriptEncodingError } from "./script-encoding-error.ts"

const STOP_REASONS: Readonly<Record<StopReason, string>> = {
  end_turn: "end_turn",
  stop_sequence: "stop_sequence",
  max_tokens: "max_tokens",
  tool_use: "tool_use",
  content_filter: "refusal",
  other: "end_turn"
}

/** The input side of Anthropic's usage: uncached input, then the cache writes and reads. */
const inputUsage = (usage: ScriptUsage) => ({
  input_tokens: uncachedInput(usage),
  // Anthropic always sends both cache counters; a script that leaves one out means "not reported".
  ...(usage.cacheWriteTokens === undefined ? {} : { cache_creation_input_tokens: usage.cacheWriteTokens }),
  ...(usage.cacheReadTokens === undefined ? {} : { cache_read_input_tokens: usage.cacheReadTokens })
})

const outputUsage = (usage: ScriptUsage) => ({
  output_tokens: usage.outputTokens,
  ...(usage.reasoningTokens === undefined ? {} : { output_tokens_details: { thinking_tokens: usage.reasoningTokens } })
})

/** A `tool_use` block's `input` is a JSON object, as in Gemini: broken argument text cannot be said whole. */
const inputObject = (name: string, text: string): Record<string, unknown> => {
  let value: unknown
  try {
    value = JSON.parse(text === "" ? "{}" : text)
  } catch {
    value = undefined
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new ScriptEncodingError("anthropic", `tool call "${name}": a non-streamed message carries the input as a JSON object, not ${JSON.stringify(text.slice(0, 80))}`)
  }
  return value as Record<string, unknown>
}

/**
 * A non-streamed `message`: the whole reply as content blocks (text, thinking with its signature, tool_use with
 * its input object), the stop reason, and the usage with both its input and output sides.
 */
export const anthropicJson = (response: ScriptedResponse, parts: ReadonlyArray<ContentPart>, ordinal: number): unknown => {
  const usage = reportedUsage(response)
  return {
    model: response.responseModel ?? "scripted-model",
    id: `msg_scripted${ordinal}`,
    type: "message",
    role: "assistant",
    content: parts.map((part, index) => {
      switch (part.type) {
        case "text":
          return { type: "text", text: part.chunks.join("") }
        case "reasoning":
          return { type: "thinking", thinking: part.chunks.join(""), signature: part.signature ?? "" }
        case "tool_call":
          return { type: "tool_use", id: part.id ?? `toolu_scripted${ordinal}_${index}`, name: part.name, input: inputObject(part.name, part.chunks.join("")) }
      }
    }),
    stop_reason: STOP_REASONS[effectiveStopReason(response)],
    stop_sequence: null,
    usage: { ...inputUsage(usage), ...outputUsage(usage) }
  }
}

/**
 * Messages API events as Anthropic streams them: `message_start` (with the input side of the usage: uncached
 * input, cache reads and writes), a `ping`, one content block per part (`content_block_start`, its
 * `text_delta` / `thinking_delta` + `signature_delta` / `input_json_delta` deltas, `content_block_stop`),
 * `message_delta` with the stop reason and output tokens, `message_stop`. An error is an `error` event.
 */
export const anthropicWriter: WriterFactory = (response, { ordinal }) => {
  const usage = reportedUsage(response)
  return {
    open: () => [
      namedEvent("message_start", {
        type: "message_start",
        message: {
          model: response.responseModel ?? "scripted-model",
          id: `msg_scripted${ordinal}`,
          type: "message",
          role: "assistant",
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { ...inputUsage(usage), output_tokens: Math.min(1, usage.outputTokens) }
        }
      }),
      namedEvent("ping", { type: "ping" })
    ],
    part(part, index, unfinished) {
      const start = (content_block: unknown) => namedEvent("content_block_start", { type: "content_block_start", index, content_block })
      const delta = (delta: unknown) => namedEvent("content_block_delta", { type: "content_block_delta", index, delta })
      const stop = unfinished ? [] : [namedEvent("content_block_stop", { type: "content_block_stop", index })]
      switch (part.type) {
        case "text":
          return [start({ type: "text", text: "" }), ...part.chunks.map((text) => delta({ type: "text_delta", text })), ...stop]
        case "reasoning":
          return [
            start({ type: "thinking", thinking: "", signature: "" }),
            ...part.chunks.map((thinking) => delta({ type: "thinking_delta", thinking })),
            ...(part.signature === undefined || unfinished ? [] : [delta({ type: "signature_delta", signature: part.signature })]),
            ...stop
          ]
        case "tool_call":
          return [
            start({ type: "tool_use", id: part.id ?? `toolu_scripted${ordinal}_${index}`, name: part.name, input: {} }),
            delta({ type: "input_json_delta", partial_json: "" }),
            ...part.chunks.map((partial_json) => delta({ type: "input_json_delta", partial_json })),
            ...stop
          ]
      }
    },
    complete: () => [
      namedEvent("message_delta", {
        type: "message_delta",
        delta: { stop_reason: STOP_REASONS[effectiveStopReason(response)], stop_sequence: null },
        usage: outputUsage(usage)
      }),
      namedEvent("message_stop", { type: "message_stop" })
    ],
    error: (code, message) => [namedEvent("error", { type: "error", error: { type: code, message } })]
  }
}
