import { toolNames } from "../../schema/provider-tools.ts"
import type { Scheme } from "../scheme.ts"
import { createGeminiDecoder, type GeminiDecoderOptions } from "./gemini-decoder.ts"
import { buildGeminiRequest } from "./gemini-request.ts"
import { withNeutralToolNames } from "./neutral-tool-names.ts"

/**
 * The Gemini generateContent wire format, streamed (`…/models/{model}:streamGenerateContent?alt=sse`).
 *
 * Gotchas: function calls often arrive without an id, so the decoder makes one up (never sent back to Gemini);
 * function responses find their function's name through the call id in the history; `parallelToolCalls: false`
 * cannot be expressed and is reported by `validate`. Given the request, the decoder maps wire tool names back to
 * neutral ones.
 */
export const makeGeminiScheme = (options: GeminiDecoderOptions = {}): Scheme => ({
  name: "gemini",
  encodeRequest: (request) => buildGeminiRequest(request).body,
  decoder: (request) =>
    withNeutralToolNames(createGeminiDecoder(options), request === undefined ? undefined : toolNames(request.tools, "gemini")),
  validate: (request) => buildGeminiRequest(request).warnings
})

export const geminiScheme: Scheme = makeGeminiScheme()
