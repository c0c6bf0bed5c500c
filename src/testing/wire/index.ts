import type { SchemeName } from "../../llm/scheme.ts"
import type { ScriptStep } from "../script.ts"
import type { ScriptedResponse } from "../script.ts"
import { anthropicJson, anthropicWriter } from "./anthropic.ts"
import { writeResponse } from "./frames.ts"
import type { ContentPart, EncodedHttpError, EncodedJson, EncodedStream, WriterFactory } from "./frames.ts"
import { geminiJson, geminiWriter } from "./gemini.ts"
import { encodeHttpError, errorStatus } from "./http-error.ts"
import { openAiChatJson, openAiChatWriter } from "./openai-chat.ts"
import { openAiResponsesJson, openAiResponsesWriter } from "./openai-responses.ts"

export type { EncodedHttpError, EncodedJson, EncodedStream, SseFrame } from "./frames.ts"
export { ScriptEncodingError } from "./script-encoding-error.ts"

const WRITERS: Readonly<Record<SchemeName, WriterFactory>> = {
  "openai-chat": openAiChatWriter,
  "openai-responses": openAiResponsesWriter,
  anthropic: anthropicWriter,
  gemini: geminiWriter
}

/**
 * One neutral script step as `scheme`'s provider would send it: a streamed reply as SSE frames (with the
 * scripted stalls as delays between them), or a refused request as a status with the provider's error body.
 * `ordinal` numbers the step in its script; the made-up ids (`msg_scripted2`, …) contain it, so encoding is
 * deterministic. Throws `ScriptEncodingError` for what the format cannot say.
 */
export const encodeScriptStep = (scheme: SchemeName, step: ScriptStep, ordinal = 0): EncodedStream | EncodedHttpError =>
  step.kind === "http_error" ? encodeHttpError(scheme, step) : writeResponse(step, WRITERS[scheme](step, { ordinal }))

/** The SSE text of a streamed reply, all frames joined (the stalls dropped): what a recording of it would hold. */
export const scriptTranscript = (scheme: SchemeName, step: ScriptStep, ordinal = 0): string => {
  const encoded = encodeScriptStep(scheme, step, ordinal)
  return encoded.kind === "sse" ? encoded.frames.map((frame) => frame.text).join("") : encoded.body
}

type JsonBuilder = (response: ScriptedResponse, parts: ReadonlyArray<ContentPart>, ordinal: number) => unknown

const JSON_BODIES: Readonly<Record<SchemeName, JsonBuilder>> = {
  "openai-chat": openAiChatJson,
  "openai-responses": openAiResponsesJson,
  anthropic: anthropicJson,
  gemini: geminiJson
}

/**
 * One neutral script step as `scheme`'s provider answers a request that did not ask to stream (`stream` absent
 * or false; Gemini's `:generateContent`): the whole reply as the provider's JSON body. An in-stream error becomes
 * the HTTP error the provider answers with before any body; the stalls add up to one wait before the answer.
 */
export const encodeScriptJson = (scheme: SchemeName, step: ScriptStep, ordinal = 0): EncodedJson | EncodedHttpError => {
  if (step.kind === "http_error") return encodeHttpError(scheme, step)
  const ending = step.ending
  if (ending.type === "error") return encodeHttpError(scheme, { kind: "http_error", status: errorStatus(ending.code), code: ending.code, message: ending.message })
  const delayMs = step.parts.reduce((total, part) => total + (part.type === "stall" ? part.ms : 0), 0)
  const parts = step.parts.filter((part): part is ContentPart => part.type !== "stall")
  const body = JSON.stringify(JSON_BODIES[scheme](step, parts, ordinal))
  const close = ending.type === "complete" ? "end" : ending.type === "hang" ? "hang" : ending.how === "reset" ? "reset" : "cut"
  return { kind: "json", body, delayMs, close }
}
