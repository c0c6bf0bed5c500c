import { toolNames, type ToolNameMap, toolsFragment } from "../../schema/provider-tools.ts"
import { hostedToolEntries, withHostedTools } from "../hosted-tools.ts"
import type { EnvelopeCache } from "../envelope-cache.ts"
import { type JsonBodyValue, jsonBody, rawJson } from "../json-body.ts"
import type { Request } from "../request.ts"
import type { ConfigWarning } from "../scheme.ts"
import { type AnthropicSettings, resolveAnthropicSettings } from "./anthropic-config.ts"
import { type AnthropicFragments, type AnthropicSnapshots, anthropicMessages, cachedAnthropicMessages } from "./anthropic-messages.ts"
import { foreignOutputWarnings } from "./foreign-output.ts"
import { anthropicOutputConfig } from "./response-format.ts"

/**
 * The Messages API body for a streaming request, and every warning about what it had to leave out. With `encoding`
 * (what `encodeRequest` passes) the history comes from each item's cached blocks, resumed from an earlier
 * request's fold, and no warning is collected (`encodeRequest` discards them; collecting some walks the whole
 * history) — `validate` calls this without, printing the history whole; the bytes are the same either way.
 *
 * Key order is fixed and puts `messages` last: everything before it stays byte-identical while a conversation
 * grows, so a cache-locked prefix can be compared as text.
 */
export const buildAnthropicRequest = (
  request: Request,
  encoding?: { readonly fragments: AnthropicFragments; readonly snapshots: AnthropicSnapshots; readonly envelopes: EnvelopeCache }
): { readonly body: string; readonly warnings: ReadonlyArray<ConfigWarning> } => {
  const names = toolNames(request.tools, "anthropic")
  const prefixItems = request.promptCache?.prefixItems ?? 0
  if (encoding !== undefined) {
    // The history goes last, after an envelope printed once per config, tools and prompt (`envelope-cache.ts`).
    const messages = cachedAnthropicMessages(encoding.fragments, encoding.snapshots, request.items, names, prefixItems)
    return { body: encoding.envelopes.body(request, anthropicEnvelope, "messages", messages.text), warnings: [] }
  }
  const { settings, warnings } = resolveAnthropicSettings(request)
  const history = anthropicMessages(request.items, names, prefixItems)
  const body = jsonBody({ ...envelopeFields(request, settings, names), messages: history.messages })
  return { body, warnings: [...warnings, ...history.warnings, ...foreignOutputWarnings(request, "anthropic")] }
}

/** The body's fields before `messages`, in the order they are sent. */
const envelopeFields = (request: Request, settings: AnthropicSettings, names: ToolNameMap) => {
  const promptCache = request.promptCache
  const system = request.systemPrompt === undefined || request.systemPrompt === "" ? undefined : request.systemPrompt
  const choice = settings.toolChoice
  const tools = withHostedTools(
    request.tools.length === 0 ? undefined : toolsFragment(request.tools, "anthropic"),
    hostedToolEntries(request.config.hostedTools, "anthropic")
  )
  return {
    model: request.model,
    max_tokens: settings.maxTokens,
    stream: true,
    // With a stable prefix the system prompt becomes a block carrying a breakpoint, which caches tools + system.
    system: system === undefined || promptCache === undefined ? system : [{ type: "text", text: system, cache_control: { type: "ephemeral" } }],
    tools: tools === undefined ? undefined : rawJson(tools),
    tool_choice: choice === undefined ? undefined : choice.type === "tool" ? { ...choice, name: names.toWire(choice.name) } : choice,
    thinking: settings.thinkingBudget === undefined ? undefined : { type: "enabled", budget_tokens: settings.thinkingBudget },
    temperature: settings.temperature,
    top_p: settings.topP,
    top_k: settings.topK,
    stop_sequences: settings.stopSequences,
    output_config: anthropicOutputConfig(request.config.responseFormat)
  } satisfies { readonly [key: string]: JsonBodyValue | undefined }
}

/** The envelope alone, as `jsonBody` prints it: what `EnvelopeCache` keeps. */
const anthropicEnvelope = (request: Request): string =>
  jsonBody(envelopeFields(request, resolveAnthropicSettings(request).settings, toolNames(request.tools, "anthropic")))
