import type { SchemeName } from "../../llm/scheme.ts"
import type { ScriptStep } from "../script.ts"
import { anthropicWriter } from "./anthropic.ts"
import { writeResponse } from "./frames.ts"
import type { EncodedHttpError, EncodedStream, WriterFactory } from "./frames.ts"
import { geminiWriter } from "./gemini.ts"
import { encodeHttpError } from "./http-error.ts"
import { openAiChatWriter } from "./openai-chat.ts"
import { openAiResponsesWriter } from "./openai-responses.ts"

export type { EncodedHttpError, EncodedStream, SseFrame } from "./frames.ts"
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
