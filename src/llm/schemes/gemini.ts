import { toolNames } from "../../schema/provider-tools.ts"
import type { Scheme } from "../scheme.ts"
import { createGeminiDecoder, type GeminiDecoderOptions } from "./gemini-decoder.ts"
import { type GeminiToolSchemas, buildGeminiRequest } from "./gemini-request.ts"
import { withNeutralToolNames } from "./neutral-tool-names.ts"

export type { GeminiToolSchemas } from "./gemini-request.ts"

export interface GeminiSchemeOptions extends GeminiDecoderOptions {
  /** `openapi-subset` for endpoints that predate `parametersJsonSchema`; `json-schema` by default. */
  readonly toolSchemas?: GeminiToolSchemas
}

/**
 * The Gemini generateContent wire format, streamed (`…/models/{model}:streamGenerateContent?alt=sse`).
 *
 * Gotchas: function calls often arrive without an id, so the decoder makes one up (never sent back to Gemini);
 * function responses find their function's name through the call id in the history; `parallelToolCalls: false`
 * cannot be expressed and is reported by `validate`. Given the request, the decoder maps wire tool names back to
 * neutral ones. For an endpoint without JSON Schema support, `makeGeminiScheme({ toolSchemas: "openapi-subset" })`
 * and a custom provider (`{ ...gemini, scheme }`).
 */
export const makeGeminiScheme = (options: GeminiSchemeOptions = {}): Scheme => ({
  name: "gemini",
  ...(options.toolSchemas === "openapi-subset" ? { toolLintTarget: "gemini-subset" as const } : {}),
  encodeRequest: (request) => buildGeminiRequest(request, options.toolSchemas).body,
  decoder: (request, decoderOptions) =>
    withNeutralToolNames(createGeminiDecoder(options, decoderOptions), request === undefined ? undefined : toolNames(request.tools, "gemini")),
  validate: (request) => buildGeminiRequest(request, options.toolSchemas).warnings
})

export const geminiScheme: Scheme = makeGeminiScheme()
