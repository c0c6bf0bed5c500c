import type { StopReason } from "../../llm/event.ts"
import { effectiveStopReason } from "../script.ts"
import { dataEvent, reportedUsage } from "./frames.ts"
import type { ContentPart, WriterFactory } from "./frames.ts"
import type { ScriptedResponse, ScriptUsage } from "../script.ts"
import { ScriptEncodingError } from "./script-encoding-error.ts"

/** Gemini has no stop-sequence or tool-use reason: both end with `STOP` (the decoder infers tool use from the calls). */
const FINISH_REASONS: Readonly<Record<StopReason, string>> = {
  end_turn: "STOP",
  stop_sequence: "STOP",
  tool_use: "STOP",
  max_tokens: "MAX_TOKENS",
  content_filter: "SAFETY",
  other: "OTHER"
}

/** The HTTP code Google puts beside a status name in an error body. */
const STATUS_CODES: Readonly<Record<string, number>> = {
  INVALID_ARGUMENT: 400,
  PERMISSION_DENIED: 403,
  NOT_FOUND: 404,
  RESOURCE_EXHAUSTED: 429,
  INTERNAL: 500,
  UNAVAILABLE: 503,
  DEADLINE_EXCEEDED: 504
}

const argumentsObject = (name: string, text: string): Record<string, unknown> => {
  let value: unknown
  try {
    value = JSON.parse(text === "" ? "{}" : text)
  } catch {
    throw new ScriptEncodingError("gemini", `tool call "${name}": Gemini sends arguments as a JSON object, and ${JSON.stringify(text.slice(0, 80))} is not JSON`)
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new ScriptEncodingError("gemini", `tool call "${name}": Gemini sends arguments as a JSON object, not ${JSON.stringify(text.slice(0, 80))}`)
  }
  return value as Record<string, unknown>
}

/** `UsageMetadata`: thoughts are counted apart from the candidates, cache reads within the prompt. */
const usageMetadata = (usage: ScriptUsage) => ({
  promptTokenCount: usage.inputTokens,
  candidatesTokenCount: usage.outputTokens - (usage.reasoningTokens ?? 0),
  totalTokenCount: usage.inputTokens + usage.outputTokens,
  ...(usage.cacheReadTokens === undefined ? {} : { cachedContentTokenCount: usage.cacheReadTokens }),
  ...(usage.reasoningTokens === undefined ? {} : { thoughtsTokenCount: usage.reasoningTokens })
})

/**
 * A `generateContent` (non-streaming) response: one candidate whose parts are the whole reply — each text and
 * each thought as one part (the signature on the thought part), each call as a `functionCall` with its arguments
 * object — with `finishReason` and `usageMetadata`, as the streamed chunks would add up to.
 */
export const geminiJson = (response: ScriptedResponse, parts: ReadonlyArray<ContentPart>, ordinal: number): unknown => ({
  candidates: [
    {
      content: {
        parts: parts.map((part) => {
          switch (part.type) {
            case "text":
              return { text: part.chunks.join("") }
            case "reasoning":
              return { text: part.chunks.join(""), thought: true, ...(part.signature === undefined ? {} : { thoughtSignature: part.signature }) }
            case "tool_call":
              return { functionCall: { name: part.name, ...(part.id === undefined ? {} : { id: part.id }), args: argumentsObject(part.name, part.chunks.join("")) } }
          }
        }),
        role: "model"
      },
      finishReason: FINISH_REASONS[effectiveStopReason(response)],
      index: 0
    }
  ],
  usageMetadata: usageMetadata(reportedUsage(response)),
  modelVersion: response.responseModel ?? "scripted-model",
  responseId: `scriptedResponse${ordinal}`
})

/**
 * `streamGenerateContent?alt=sse` chunks as Gemini sends them (`\r\n` line endings): one candidate per chunk with
 * `text` parts, thought parts (`thought: true`; the signature follows on an empty text part, as Gemini 3 sends
 * it), one `functionCall` part per call with its arguments as a whole object (`id` when the script names one).
 * The last chunk carries `finishReason` and `usageMetadata` (thoughts counted apart from the candidates). A call
 * the reply breaks off inside is sent as the streamed form's opening part (`willContinue`). An error is a chunk
 * with an `error` object (HTTP code, message, status name).
 */
export const geminiWriter: WriterFactory = (response, { ordinal }) => {
  const responseId = `scriptedResponse${ordinal}`
  const model = response.responseModel ?? "scripted-model"
  const chunk = (parts: ReadonlyArray<Record<string, unknown>>, extra: Record<string, unknown> = {}, candidate: Record<string, unknown> = {}) =>
    dataEvent({ candidates: [{ content: { parts, role: "model" }, ...candidate, index: 0 }], ...extra, modelVersion: model, responseId }, "\r\n")
  return {
    open: () => [],
    part(part, _position, unfinished) {
      switch (part.type) {
        case "text":
          return part.chunks.map((text) => chunk([{ text }]))
        case "reasoning":
          return [
            ...part.chunks.map((text) => chunk([{ text, thought: true }])),
            ...(part.signature === undefined || unfinished ? [] : [chunk([{ text: "", thoughtSignature: part.signature }])])
          ]
        case "tool_call": {
          const id = part.id === undefined ? {} : { id: part.id }
          if (unfinished) return [chunk([{ functionCall: { name: part.name, ...id, willContinue: true } }])]
          return [chunk([{ functionCall: { name: part.name, ...id, args: argumentsObject(part.name, part.chunks.join("")) } }])]
        }
      }
    },
    complete: () => [chunk([{ text: "" }], { usageMetadata: usageMetadata(reportedUsage(response)) }, { finishReason: FINISH_REASONS[effectiveStopReason(response)] })],
    error: (code, message) => [dataEvent({ error: { code: STATUS_CODES[code] ?? 500, message, status: code } }, "\r\n")]
  }
}
