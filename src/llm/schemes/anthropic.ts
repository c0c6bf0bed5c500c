import { toolNames } from "../../schema/provider-tools.ts"
import { EnvelopeCache } from "../envelope-cache.ts"
import type { Scheme } from "../scheme.ts"
import { createAnthropicDecoder } from "./anthropic-decoder.ts"
import { anthropicFragments, anthropicSnapshots } from "./anthropic-messages.ts"
import { buildAnthropicRequest } from "./anthropic-request.ts"
import { withNeutralToolNames } from "./neutral-tool-names.ts"

/**
 * The Anthropic Messages wire format (`POST /v1/messages` with `stream: true`).
 *
 * Gotchas: `max_tokens` is always sent (default `ANTHROPIC_DEFAULT_MAX_TOKENS`, plus the thinking budget when
 * thinking is on); with extended thinking, temperature, top_k, a low top_p and forced tool choice are dropped
 * and reported by `validate`. Given the request, the decoder maps wire tool names back to neutral ones.
 */
const encoding = { fragments: anthropicFragments(), snapshots: anthropicSnapshots(), envelopes: new EnvelopeCache() }

/** The Anthropic Messages wire format, with cache breakpoints that follow the cache lock (decision 0015). */
export const anthropicScheme: Scheme = {
  name: "anthropic",
  encodeRequest: (request) => buildAnthropicRequest(request, encoding).body,
  decoder: (request, options) =>
    withNeutralToolNames(createAnthropicDecoder(options), request === undefined ? undefined : toolNames(request.tools, "anthropic")),
  validate: (request) => buildAnthropicRequest(request).warnings
}

/** The same scheme without the fragment cache, the history printed whole: tests hold both to the same bytes. */
export const uncachedAnthropicScheme: Scheme = { ...anthropicScheme, encodeRequest: (request) => buildAnthropicRequest(request).body }
