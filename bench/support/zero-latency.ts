import type {
  LanguageModelV3,
  LanguageModelV3CallOptions,
  LanguageModelV3Content,
  LanguageModelV3FinishReason,
  LanguageModelV3GenerateResult,
  LanguageModelV3StreamPart,
  LanguageModelV3Usage
} from "@ai-sdk/provider"
import type { LlmClient } from "#internal/llm/client"
import type { Event } from "#internal/llm/event"
import type { Request } from "#internal/llm/request"
import type { Scheme } from "#internal/llm/scheme"

/**
 * Zero-latency models for the turn benchmark, one per side, following the same script: while the conversation
 * holds fewer than `toolRounds` tool results, answer with one tool call; then answer with text. Both decide from
 * the request alone (no counters), and every response is built once, up front, so only the loop is measured.
 */

export const TOOL_NAME = "lookup"
export const TOOL_ARGS = '{"id":"r-42"}'
const ANSWER = "Record r-42 says it is sunny."

/** Call ids differ per round, as a provider's do. */
const toolCallEvents = (round: number): ReadonlyArray<Event> => [
  { type: "status", status: "started" },
  { type: "block_start", index: 0, block: { kind: "tool_use", id: `call_${round}`, name: TOOL_NAME } },
  { type: "block_delta", index: 0, delta: { kind: "input_json", json: TOOL_ARGS.slice(0, 6) } },
  { type: "block_delta", index: 0, delta: { kind: "input_json", json: TOOL_ARGS.slice(6) } },
  { type: "block_stop", index: 0, stopReason: "tool_use" },
  { type: "usage", inputTokens: 20, outputTokens: 10 },
  { type: "status", status: "completed", stopReason: "tool_use" }
]

const textEvents: ReadonlyArray<Event> = [
  { type: "status", status: "started" },
  { type: "block_start", index: 0, block: { kind: "text" } },
  { type: "block_delta", index: 0, delta: { kind: "text", text: ANSWER.slice(0, 12) } },
  { type: "block_delta", index: 0, delta: { kind: "text", text: ANSWER.slice(12) } },
  { type: "block_stop", index: 0, stopReason: "end_turn" },
  { type: "usage", inputTokens: 30, outputTokens: 8 },
  { type: "status", status: "completed", stopReason: "end_turn" }
]

async function* replay(events: ReadonlyArray<Event>): AsyncGenerator<Event> {
  for (const event of events) yield event
}

/**
 * Our side: an `LlmClient` that streams pre-built neutral events. `encodeRequest` is a real scheme's, because the
 * worker encodes every request to verify the cache prefix and that cost belongs to the loop.
 */
export const zeroLatencyClient = (scheme: Scheme, toolRounds: number): LlmClient => {
  const rounds = Array.from({ length: toolRounds }, (_, round) => toolCallEvents(round))
  return {
  scheme: scheme.name,
  provider: "zero-latency",
  model: "zero-latency-model",
  encodeRequest: (request) => scheme.encodeRequest(request),
  validate: () => [],
  stream: (request: Request) => {
    let results = 0
    for (const item of request.items) if (item.type === "function_call_output") results++
    return replay(rounds[results] ?? textEvents)
  }
  }
}

const usage: LanguageModelV3Usage = {
  inputTokens: { total: 20, noCache: 20, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 10, text: 10, reasoning: undefined }
}

const toolCallContent = (round: number): ReadonlyArray<LanguageModelV3Content> => [
  { type: "tool-call", toolCallId: `call_${round}`, toolName: TOOL_NAME, input: TOOL_ARGS }
]
const textContent: ReadonlyArray<LanguageModelV3Content> = [{ type: "text", text: ANSWER }]
const toolCallsFinish: LanguageModelV3FinishReason = { unified: "tool-calls", raw: "tool_use" }
const stopFinish: LanguageModelV3FinishReason = { unified: "stop", raw: "end_turn" }

const toolCallParts = (round: number): ReadonlyArray<LanguageModelV3StreamPart> => [
  { type: "stream-start", warnings: [] },
  { type: "tool-input-start", id: `call_${round}`, toolName: TOOL_NAME },
  { type: "tool-input-delta", id: `call_${round}`, delta: TOOL_ARGS.slice(0, 6) },
  { type: "tool-input-delta", id: `call_${round}`, delta: TOOL_ARGS.slice(6) },
  { type: "tool-input-end", id: `call_${round}` },
  { type: "tool-call", toolCallId: `call_${round}`, toolName: TOOL_NAME, input: TOOL_ARGS },
  { type: "finish", finishReason: toolCallsFinish, usage }
]

const textParts: ReadonlyArray<LanguageModelV3StreamPart> = [
  { type: "stream-start", warnings: [] },
  { type: "text-start", id: "t1" },
  { type: "text-delta", id: "t1", delta: ANSWER.slice(0, 12) },
  { type: "text-delta", id: "t1", delta: ANSWER.slice(12) },
  { type: "text-end", id: "t1" },
  { type: "finish", finishReason: stopFinish, usage }
]

const toolResultsIn = (options: LanguageModelV3CallOptions): number => {
  let results = 0
  for (const message of options.prompt) if (message.role === "tool") results += message.content.length
  return results
}

const partStream = (parts: ReadonlyArray<LanguageModelV3StreamPart>): ReadableStream<LanguageModelV3StreamPart> =>
  new ReadableStream({
    start(controller) {
      for (const part of parts) controller.enqueue(part)
      controller.close()
    }
  })

/**
 * The AI SDK side: a hand-written `LanguageModelV3` (its `MockLanguageModelV3` records every call, which would grow
 * memory over a benchmark and is not what a provider does).
 */
export const zeroLatencyModel = (toolRounds: number): LanguageModelV3 => {
  const contents = Array.from({ length: toolRounds }, (_, round) => toolCallContent(round))
  const parts = Array.from({ length: toolRounds }, (_, round) => toolCallParts(round))
  return {
  specificationVersion: "v3",
  provider: "zero-latency",
  modelId: "zero-latency-model",
  supportedUrls: {},
  doGenerate: async (options): Promise<LanguageModelV3GenerateResult> => {
    const content = contents[toolResultsIn(options)]
    return content === undefined
      ? { content: [...textContent], finishReason: stopFinish, usage, warnings: [] }
      : { content: [...content], finishReason: toolCallsFinish, usage, warnings: [] }
  },
  doStream: async (options) => ({ stream: partStream(parts[toolResultsIn(options)] ?? textParts) })
  }
}
