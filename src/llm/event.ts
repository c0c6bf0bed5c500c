import type { JsonObject } from "../schema/json-schema.ts"
import type { ProviderItem, ProviderItemScheme, ReasoningData } from "./item.ts"

/**
 * The provider-neutral stream. Meta events (ping, usage, status, error) stand alone; block events open, fill and
 * close one span of output. `index` is unique within one response and assigned by the scheme's decoder (it keys
 * blocks by provider index and call id, so parallel tool calls never share a block).
 */

/** Why a response ended, normalised across providers. */
export type StopReason = "end_turn" | "max_tokens" | "stop_sequence" | "tool_use" | "content_filter" | "other"

/** What kind of block a `block_start` opens: text, thinking, or a tool call with its id and name. */
export type BlockMeta =
  | { readonly kind: "text" }
  | { readonly kind: "thinking" }
  | { readonly kind: "tool_use"; readonly id: string; readonly name: string; readonly thoughtSignature?: string }

/** A piece of a block's content: text, thinking text, or a fragment of a tool call's JSON arguments. */
export type BlockDelta =
  | { readonly kind: "text"; readonly text: string }
  | { readonly kind: "thinking"; readonly text: string }
  | { readonly kind: "input_json"; readonly json: string }

/**
 * Token counts of one response (or, summed, of a Worker run), the same on every wire format. Every field is
 * optional: a provider may report none or some of them. Every scheme holds them to these rules
 * (`src/llm/usage.ts`), whatever its provider's own counters mean:
 * - `inputTokens` is the whole prompt, cache reads and cache writes included (Anthropic's `input_tokens`
 *   leaves them out; the neutral count adds them back).
 * - `outputTokens` is everything generated, reasoning included (Gemini's `candidatesTokenCount` and xAI's
 *   `completion_tokens` leave reasoning out; the neutral count adds it in).
 * - `totalTokens` is `inputTokens + outputTokens`, present whenever both are. When the provider sends a total it
 *   decides, by arithmetic, how its output count is meant (a gap it leaves is output the provider did not
 *   itemise); a total smaller than the counts it itemised is not passed on.
 * - `reasoningTokens` and `cacheReadTokens` / `cacheWriteTokens` are parts of `outputTokens` and `inputTokens`.
 * The provider's own usage object, with any counter not listed here, is on the usage event as `raw`.
 */
export interface Usage {
  readonly inputTokens?: number
  readonly outputTokens?: number
  readonly totalTokens?: number
  /** The part of `outputTokens` spent on reasoning (thinking), where the provider reports it. */
  readonly reasoningTokens?: number
  readonly cacheReadTokens?: number
  readonly cacheWriteTokens?: number
}

/**
 * The provider's usage object as it came (Anthropic's start and delta objects merged), for counters `Usage` has
 * no field for (server tool requests, per-modality details, cost). A bounded, frozen copy: see `RAW_USAGE_BOUNDS`.
 * Per response only: it is not summed into a run's usage.
 */
export type RawUsage = JsonObject

/**
 * A source the provider cites for the answer (a Responses `url_citation` annotation, an Anthropic text block's
 * citation, Gemini's `groundingMetadata`), kept as the provider's own object. Citations are not history: the
 * answer text goes back without them, which every provider accepts.
 */
export interface Citation {
  readonly scheme: ProviderItemScheme
  /** The provider's name for the object (`url_citation`, `web_search_result_location`, `groundingMetadata`, …). */
  readonly kind: string
  /** The provider's object as compact JSON text. */
  readonly json: string
}

/**
 * Something the provider reported about the response that is neither output nor history, kept as the provider's
 * own object: OpenAI's moderation results (`kind: "moderation"`; Chat's chunk `moderation`, Responses'
 * `response.moderation`, when moderated completions were asked for). Never sent back to the provider.
 */
export interface ProviderMeta {
  /** The wire format it came on. */
  readonly scheme: ProviderItemScheme | "openai-chat"
  /** What it is, by the provider's field name (`moderation`). */
  readonly kind: string
  /** The provider's object as compact JSON text (its size counts against `maxProviderBytes`). */
  readonly json: string
}

/**
 * The neutral stream of one response, the same for every wire format: blocks (text, thinking, tool calls) opened,
 * extended and closed by index, plus usage, status, provider items, citations, provider reports and errors.
 * `LlmClient.stream` yields these; a `Timeline` turns them into per-block scopes.
 */
export type Event =
  | { readonly type: "ping" }
  | ({ readonly type: "usage"; readonly raw?: RawUsage } & Usage)
  | {
      readonly type: "status"
      readonly status: "started" | "completed" | "cancelled" | "failed"
      /** On `completed`: why the response ended, as the provider reported it for the whole response. */
      readonly stopReason?: StopReason
      /**
       * On `started`: the model that answers, as the provider names it (`gpt-4o-2024-08-06` for a request for
       * `gpt-4o`), when it states one at the start of the response. At most 256 characters (decision 0084).
       */
      readonly model?: string
      /** On `started`: the provider's id of this response (`chatcmpl-…`, `resp_…`, `msg_…`), when it states one. */
      readonly responseId?: string
    }
  | {
      readonly type: "error"
      readonly code: string
      readonly message: string
      /**
       * The provider's error object as it came (Groq's `failed_generation`, `type`, `status_code`; OpenRouter's
       * `metadata`), for what `code` and `message` do not carry. A bounded, frozen copy: see `RAW_ERROR_BOUNDS`.
       */
      readonly raw?: JsonObject
    }
  | { readonly type: "block_start"; readonly index: number; readonly block: BlockMeta }
  | { readonly type: "block_delta"; readonly index: number; readonly delta: BlockDelta }
  | {
      readonly type: "block_stop"
      readonly index: number
      readonly stopReason?: StopReason
      /** For thinking blocks: what the provider needs to accept this reasoning back. */
      readonly reasoning?: ReasoningData
      /**
       * The block's whole value as the provider's closing event states it: the text of a text block, the
       * reasoning text of a thinking block, the argument JSON of a tool_use block. When present it is the
       * authority and the deltas were a preview: consumers take this value, and the timeline reports a
       * `final_mismatch` issue when the deltas do not add up to it. Absent: the deltas are the value.
       */
      readonly final?: string
    }
  | { readonly type: "block_abort"; readonly index: number; readonly reason: string }
  /**
   * Output of a kind this library does not model, complete (decision 0025): a hosted tool's call or result, a
   * custom-tool call, a code part. `index` comes from the same sequence as block indices, and the event takes its
   * place in model order where it arrives, so the text around it keeps its position. It becomes a history item.
   */
  | { readonly type: "provider_output"; readonly index: number; readonly item: ProviderItem }
  /** A citation for the answer; `index` is the text block it annotates when the provider says which. */
  | { readonly type: "citation"; readonly index?: number; readonly citation: Citation }
  /** A report about the response that is not output (moderation results), as the provider's object. */
  | { readonly type: "provider_meta"; readonly meta: ProviderMeta }
