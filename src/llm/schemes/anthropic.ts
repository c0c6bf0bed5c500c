import type { Scheme } from "../scheme.ts"
import { createAnthropicDecoder } from "./anthropic-decoder.ts"
import { buildAnthropicRequest } from "./anthropic-request.ts"

/**
 * The Anthropic Messages wire format (`POST /v1/messages` with `stream: true`).
 *
 * Gotchas: `max_tokens` is always sent (default `ANTHROPIC_DEFAULT_MAX_TOKENS`, plus the thinking budget when
 * thinking is on); with extended thinking, temperature, top_k, a low top_p and forced tool choice are dropped
 * and reported by `validate`. Tool names in the stream are wire names: map them back with
 * `toolNames(tools, "anthropic").fromWire`.
 */
export const anthropicScheme: Scheme = {
  name: "anthropic",
  encodeRequest: (request) => buildAnthropicRequest(request).body,
  decoder: createAnthropicDecoder,
  validate: (request) => buildAnthropicRequest(request).warnings
}
