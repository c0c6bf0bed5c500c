import type { StopReason } from "../../llm/event.ts"
import { effectiveStopReason } from "../script.ts"
import { namedEvent, uncachedInput } from "./frames.ts"
import type { WriterFactory } from "./frames.ts"

const STOP_REASONS: Readonly<Record<StopReason, string>> = {
  end_turn: "end_turn",
  stop_sequence: "stop_sequence",
  max_tokens: "max_tokens",
  tool_use: "tool_use",
  content_filter: "refusal",
  other: "end_turn"
}

/**
 * Messages API events as Anthropic streams them: `message_start` (with the input side of the usage: uncached
 * input, cache reads and writes), a `ping`, one content block per part (`content_block_start`, its
 * `text_delta` / `thinking_delta` + `signature_delta` / `input_json_delta` deltas, `content_block_stop`),
 * `message_delta` with the stop reason and output tokens, `message_stop`. An error is an `error` event.
 */
export const anthropicWriter: WriterFactory = (response, { ordinal }) => {
  const usage = response.tokenUsage
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
          ...(usage === undefined
            ? {}
            : {
                usage: {
                  input_tokens: uncachedInput(usage),
                  // Anthropic always sends both cache counters; a script that leaves one out means "not reported".
                  ...(usage.cacheWriteTokens === undefined ? {} : { cache_creation_input_tokens: usage.cacheWriteTokens }),
                  ...(usage.cacheReadTokens === undefined ? {} : { cache_read_input_tokens: usage.cacheReadTokens }),
                  output_tokens: Math.min(1, usage.outputTokens)
                }
              })
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
        ...(usage === undefined
          ? {}
          : { usage: { output_tokens: usage.outputTokens, ...(usage.reasoningTokens === undefined ? {} : { output_tokens_details: { thinking_tokens: usage.reasoningTokens } }) } })
      }),
      namedEvent("message_stop", { type: "message_stop" })
    ],
    error: (code, message) => [namedEvent("error", { type: "error", error: { type: code, message } })]
  }
}
