import { toolNames } from "../../schema/provider-tools.ts"
import type { Scheme } from "../scheme.ts"
import { createAnthropicDecoder } from "./anthropic-decoder.ts"
import { buildAnthropicRequest } from "./anthropic-request.ts"
import { withNeutralToolNames } from "./neutral-tool-names.ts"

/**
 * The Anthropic Messages wire format (`POST /v1/messages` with `stream: true`).
 *
 * Gotchas: `max_tokens` is always sent (default `ANTHROPIC_DEFAULT_MAX_TOKENS`, plus the thinking budget when
 * thinking is on); with extended thinking, temperature, top_k, a low top_p and forced tool choice are dropped
 * and reported by `validate`. Given the request, the decoder maps wire tool names back to neutral ones.
 */
export const anthropicScheme: Scheme = {
  name: "anthropic",
  encodeRequest: (request) => buildAnthropicRequest(request).body,
  decoder: (request, options) =>
    withNeutralToolNames(createAnthropicDecoder(options), request === undefined ? undefined : toolNames(request.tools, "anthropic")),
  validate: (request) => buildAnthropicRequest(request).warnings
}
