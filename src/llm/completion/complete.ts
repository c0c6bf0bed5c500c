import { Effect } from "effect"
import type { ArgumentSchema, InferArguments } from "../../schema/codec.ts"
import type { LlmClient } from "../client.ts"
import type { ProviderMeta, RawUsage, StopReason, Usage } from "../event.ts"
import { Item } from "../item.ts"
import { type LlmError, LlmConfigError, isLlmError } from "../llm-error.ts"
import type { Request, RequestConfig } from "../request.ts"
import type { ConfigWarning } from "../scheme.ts"
import { type CollectedResponse, collectResponse } from "./collect.ts"
import { ANSWER_TOOL_NAME, type OutputPlan, type OutputSpec, type StructuredOutcome, type StructuredOutputMode, planOutput } from "./output-plan.ts"

/** One request, one answer: no tools, no loop, no history kept. */
export interface CompleteOptions {
  /** A user prompt, or the whole conversation as neutral items (`Item.userText`, `Item.assistantText`, images…). */
  readonly input: string | ReadonlyArray<Item>
  readonly systemPrompt?: string
  /** Sampling and limits; `responseFormat` is set by `completeObject` and ignored here. */
  readonly config?: Omit<RequestConfig, "responseFormat" | "toolChoice" | "parallelToolCalls" | "hostedTools">
  readonly signal?: AbortSignal
}

/** The answer of `complete`: its text, and what the call cost and did. */
export interface TextCompletion {
  readonly text: string
  /** Reasoning the provider streamed as visible text (empty when none). Never part of `text`. */
  readonly reasoning: string
  readonly usage: Usage
  /** The provider's own usage object of the response, for counters `usage` has no field for. */
  readonly rawUsage?: RawUsage
  readonly stopReason?: StopReason
  readonly provider: string
  /** The model asked for (the client's). */
  readonly model: string
  /** The model that answered, as the provider names it (`gpt-4o-2024-08-06` for `gpt-4o`), when it says. */
  readonly responseModel?: string
  /** The provider's id of the response (`chatcmpl-…`, `resp_…`, `msg_…`), when it states one. */
  readonly responseId?: string
  /**
   * What the provider reported about the response besides its output, as its own objects: OpenAI's moderation
   * results (`kind: "moderation"`) when moderated completions were asked for. Absent when there was none.
   */
  readonly providerMeta?: ReadonlyArray<ProviderMeta>
  /** Settings the provider could not honour and that were left out (`client.validate`). */
  readonly warnings: ReadonlyArray<ConfigWarning>
}

/** The answer of `completeObject`: the decoded value, or the raw text with the issues (the paid answer is kept). */
export interface ObjectCompletion<A> extends TextCompletion {
  readonly output: StructuredOutcome<A>
  /** How the answer was asked for. */
  readonly mode: StructuredOutputMode
  /** The text read as JSON: the answer text, or the forced tool's arguments. */
  readonly answer: string
}

export interface CompleteObjectOptions<S extends ArgumentSchema> extends CompleteOptions, Omit<OutputSpec<S>, "schema" | "json"> {
  readonly schema: S
}

const requestFor = (client: LlmClient, options: CompleteOptions): Request => {
  if (typeof options.input !== "string" && !Array.isArray(options.input)) {
    throw new LlmConfigError({ message: "input must be a prompt string or an array of items" })
  }
  const items = typeof options.input === "string" ? [Item.userText(options.input)] : options.input
  if (items.length === 0) throw new LlmConfigError({ message: "input has no items: give a prompt or at least one message" })
  return {
    model: client.model,
    ...(options.systemPrompt === undefined ? {} : { systemPrompt: options.systemPrompt }),
    items,
    tools: [],
    config: { ...options.config }
  }
}

const send = async (client: LlmClient, request: Request, signal: AbortSignal | undefined): Promise<{ readonly response: CollectedResponse; readonly base: TextCompletion }> => {
  const warnings = client.validate(request)
  const response = await collectResponse(client.stream(request, signal === undefined ? {} : { signal }))
  const base: TextCompletion = {
    text: response.text,
    reasoning: response.reasoning,
    usage: response.usage,
    ...(response.rawUsage === undefined ? {} : { rawUsage: response.rawUsage }),
    ...(response.stopReason === undefined ? {} : { stopReason: response.stopReason }),
    provider: client.provider,
    model: client.model,
    ...(response.model === undefined ? {} : { responseModel: response.model }),
    ...(response.responseId === undefined ? {} : { responseId: response.responseId }),
    ...(response.providerMeta === undefined ? {} : { providerMeta: response.providerMeta }),
    warnings
  }
  return { response, base }
}

/**
 * A one-shot text completion on any client (all four wire formats): one streamed request, gathered. Rejects
 * with the client's `LlmError` (after its retries), `LlmCancelled` when `signal` fires, `LlmConfigError` for
 * an empty input.
 */
export const complete = async (client: LlmClient, options: CompleteOptions): Promise<TextCompletion> =>
  (await send(client, requestFor(client, options), options.signal)).base

/** Sends an already planned structured request and decodes its answer (shared with `llm-worker/plugin-llm`). */
export const completePlanned = async <A>(client: LlmClient, request: Request, plan: OutputPlan<A>, signal?: AbortSignal): Promise<ObjectCompletion<A>> => {
  const { response, base } = await send(client, plan.apply(request), signal)
  const call = plan.mode === "tool" ? response.calls.find((c) => c.name === ANSWER_TOOL_NAME) : undefined
  const answer = call?.arguments ?? response.text
  return { ...base, text: plan.mode === "tool" && call !== undefined ? answer : base.text, output: await plan.decode(answer), mode: plan.mode, answer }
}

/**
 * A one-shot completion whose answer is JSON checked against `schema` (Effect Schema, zod, Standard JSON
 * Schema or raw JSON Schema), asked for with the provider's native structured output — OpenAI Chat
 * `response_format` (strict where the schema allows), Responses `text.format`, Anthropic `output_config.format`
 * (a forced tool on models without it), Gemini `responseJsonSchema`. The answer is always parsed locally and
 * validated against the same normalised schema the provider was sent. A refused answer is not an exception:
 * `output.ok` is false, with the issues, and the text and usage are kept.
 *
 * @throws (rejects) RecursiveSchemaError / UnsupportedSchemaError for an unusable schema, before any request;
 *   an `LlmError` when the call fails.
 */
export const completeObject = async <S extends ArgumentSchema>(
  client: LlmClient,
  options: CompleteObjectOptions<S>
): Promise<ObjectCompletion<InferArguments<S>>> => {
  const plan = planOutput(client, options)
  return completePlanned(client, requestFor(client, options), plan, options.signal)
}

const toLlmError = (thrown: unknown): LlmError | Error =>
  isLlmError(thrown) || thrown instanceof Error ? thrown : new Error(String(thrown))

/** `complete` as an Effect; interrupting the fiber cancels the request. */
export const completeEffect = (client: LlmClient, options: Omit<CompleteOptions, "signal">): Effect.Effect<TextCompletion, LlmError | Error> =>
  Effect.tryPromise({ try: (signal) => complete(client, { ...options, signal }), catch: toLlmError })

/** `completeObject` as an Effect; interrupting the fiber cancels the request. */
export const completeObjectEffect = <S extends ArgumentSchema>(
  client: LlmClient,
  options: Omit<CompleteObjectOptions<S>, "signal">
): Effect.Effect<ObjectCompletion<InferArguments<S>>, LlmError | Error> =>
  Effect.tryPromise({ try: (signal) => completeObject(client, { ...options, signal }), catch: toLlmError })
