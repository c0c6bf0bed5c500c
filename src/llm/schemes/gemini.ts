import { EnvelopeCache } from "../envelope-cache.ts"
import { toolNames } from "../../schema/provider-tools.ts"
import type { Request } from "../request.ts"
import type { Scheme } from "../scheme.ts"
import { createGeminiDecoder, type GeminiDecoderOptions } from "./gemini-decoder.ts"
import type { GeminiEndpointFeatures } from "./gemini-config.ts"
import { type GeminiToolSchemas, buildGeminiRequest } from "./gemini-request.ts"
import { geminiFragments, geminiSnapshots } from "./gemini-contents.ts"
import { withNeutralToolNames } from "./neutral-tool-names.ts"

export type { GeminiToolSchemas } from "./gemini-request.ts"

/** Options of `makeGeminiScheme`: how tool schemas are sent and whether arguments are streamed. */
export interface GeminiSchemeOptions extends GeminiDecoderOptions {
  /** `openapi-subset` for endpoints that predate `parametersJsonSchema`; `json-schema` by default. */
  readonly toolSchemas?: GeminiToolSchemas
  /**
   * Ask for function-call arguments streamed in pieces (`toolConfig.functionCallingConfig.streamFunctionCallArguments`,
   * sent only when the request has tools). Off by default: Vertex AI accepts it for Gemini 3 models, but the
   * Gemini API (`generativelanguage.googleapis.com`, v1beta) does not define the field and refuses the request.
   * The decoder reads streamed arguments whether or not this is set.
   */
  readonly streamFunctionCallArguments?: boolean
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
const endpointOf = (options: GeminiSchemeOptions): GeminiEndpointFeatures =>
  options.streamFunctionCallArguments === true ? { streamFunctionCallArguments: true } : {}

/**
 * With a server-side MCP tool declared (a hosted tool with `mcpServers`), a call to a name the request does not
 * declare as a function is Gemini's own (it sends the response in the same turn): kept, not executed here.
 */
const serverCalls = (request: Request): { readonly isServerCall?: (name: string) => boolean } => {
  const mcp = (request.config.hostedTools ?? []).some((tool) => tool.scheme === "gemini" && "mcpServers" in tool.definition)
  if (!mcp) return {}
  const names = toolNames(request.tools, "gemini")
  const declared = new Set(request.tools.map((tool) => names.toWire(tool.name)))
  return { isServerCall: (name) => !declared.has(name) }
}

/** A Gemini wire format (`streamGenerateContent?alt=sse`) with non-default options. */
export const makeGeminiScheme = (options: GeminiSchemeOptions = {}): Scheme => {
  const encoding = { fragments: geminiFragments(), snapshots: geminiSnapshots(), envelopes: new EnvelopeCache() }
  const endpoint = endpointOf(options)
  return {
    name: "gemini",
    ...(options.toolSchemas === "openapi-subset" ? { toolLintTarget: "gemini-subset" as const } : {}),
    encodeRequest: (request) => buildGeminiRequest(request, options.toolSchemas, endpoint, encoding).body,
    decoder: (request, decoderOptions) =>
      withNeutralToolNames(
        createGeminiDecoder(request === undefined ? options : { ...options, ...serverCalls(request) }, decoderOptions),
        request === undefined ? undefined : toolNames(request.tools, "gemini")
      ),
    validate: (request) => buildGeminiRequest(request, options.toolSchemas, endpoint).warnings
  }
}

/** The same scheme without the fragment cache, the history printed whole: tests hold both to the same bytes. */
export const uncachedGeminiScheme = (options: GeminiSchemeOptions = {}): Scheme => ({
  ...makeGeminiScheme(options),
  encodeRequest: (request) => buildGeminiRequest(request, options.toolSchemas, endpointOf(options)).body
})

/** The Gemini wire format with its defaults (`parametersJsonSchema`, arguments sent whole). */
export const geminiScheme: Scheme = makeGeminiScheme()
