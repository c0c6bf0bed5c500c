import { Effect } from "effect"
import type { LlmClient } from "../llm/client.ts"
import type { Usage } from "../llm/event.ts"
import type { Item } from "../llm/item.ts"
import { isLlmError } from "../llm/llm-error.ts"
import { createLlmClient, type LlmClientOptions } from "../llm/llm-client.ts"
import type { Request } from "../llm/request.ts"
import { sumUsage } from "../llm/usage.ts"
import { complete as completeText, completePlanned, type ObjectCompletion } from "../llm/completion/complete.ts"
import { type OutputPlan, outputCodec, planOutput } from "../llm/completion/output-plan.ts"
import type { ArgumentIssue } from "../schema/argument-codec.ts"
import { quote } from "../schema/quote.ts"
import { type ArgumentCodecOptions, type ArgumentSchema, formatIssues, type InferArguments } from "../schema/codec.ts"
import { SecretRedactor } from "../redact/secrets.ts"
import { type AuditRecord, type AuditSink, cleanPurpose, type PluginLlmUsage, stderrAudit } from "./audit.ts"
import { CallLimits } from "./call-limits.ts"
import { clientSecrets, environmentSecrets } from "./credentials.ts"
import { closedGrants, decodePluginLlmConfig, isDecodedConfig, type PluginLlmConfig } from "./config.ts"
import {
  type FallbackHop,
  isPluginLlmError,
  PluginLlmCancelled,
  type PluginLlmError,
  PluginLlmInputError,
  PluginLlmProviderUnavailable,
  PluginLlmRateLimited,
  PluginLlmSchemaError,
  PluginLlmTimeoutError,
  type TimeoutSource
} from "./errors.ts"
import { checkGate, type GrantedRouting } from "./gate.ts"
import { type ChatMessage, chatItems, DEFAULT_MAX_PARTS, DEFAULT_MAX_TEXT_CHARS, type InputBlock, type InputLimits, inputParts } from "./inputs.ts"
import { costOf } from "./prices.ts"
import { primaryRoute, type Route, type RouteContext, routeChain } from "./routes.ts"
import { DEFAULT_BUILTIN_TASKS, TaskRegistry } from "./tasks.ts"

/** Arguments every `ctx.llm` call takes. Routing ones are gated; the rest only shape the request. */
export interface CallOptions {
  /** A provider name (gated: `allow_provider_override`, `allowed_providers`). */
  readonly provider?: string
  /** A model id for the provider (gated: `allow_model_override`, `allowed_models`; matched literally). */
  readonly model?: string
  /** Another agent (a host role) whose model and credentials to use (gated: `allow_agent_id_override`). */
  readonly agentId?: string
  /** A stored credential profile, `llm.profiles.<name>` (gated: `allow_profile_override`). */
  readonly profile?: string
  /** An auxiliary task: the plugin's own, or a built-in one with `allow_task_override`. `auto`: none. */
  readonly task?: string
  /** Sampling temperature, a non-negative number; the provider's default when absent. */
  readonly temperature?: number
  /** Largest answer, in tokens (a positive integer); the provider's default when absent. */
  readonly maxTokens?: number
  /**
   * The whole call's deadline in seconds, at most 86,400; over the task's `auxiliary.<task>.timeout` and the
   * global `llm.timeout`. Past it the call fails with `PluginLlmTimeoutError`.
   */
  readonly timeout?: number
  /** Free text for the audit line (`hooks.error-rewrite`). */
  readonly purpose?: string
  /** Cancels the call (`PluginLlmCancelled`); the Effect forms are interrupted instead. */
  readonly signal?: AbortSignal
}

/** A `complete` call: a chat in OpenAI's message shape, answered with text. */
export interface CompleteCallOptions extends CallOptions {
  /** OpenAI-shaped messages; system and developer messages become the system prompt. */
  readonly messages: ReadonlyArray<ChatMessage>
}

/** What every `completeStructured` call says besides its schema. */
export interface StructuredCallBase extends CallOptions {
  /** What to do with the input; sent as the system prompt (after `systemPrompt`, when given). */
  readonly instructions: string
  /** The material: text blocks and image blocks (bytes or a URL); an image routes the call to a vision model. */
  readonly input: ReadonlyArray<InputBlock>
  /** Ask for JSON without a schema (any object). */
  readonly jsonMode?: boolean
  /** A name for the schema as providers are told it (at most 200 characters); default `output`. */
  readonly schemaName?: string
  /** Put before `instructions` in the system prompt. */
  readonly systemPrompt?: string
  /** On a parse or validation failure, ask once more with the issues (usage of both requests is summed). */
  readonly repair?: boolean
}

/** The schema under its name: `schema`. */
export interface StructuredSchemaOption<S extends ArgumentSchema | undefined> {
  /** Effect Schema, zod or raw JSON Schema (object root): the answer is asked for, parsed and validated. */
  readonly schema?: S
  readonly jsonSchema?: never
}

/** The schema under its former name, `jsonSchema`, kept working. */
export interface StructuredJsonSchemaOption<S extends ArgumentSchema | undefined> {
  /**
   * The same as `schema` (Effect Schema, zod or raw JSON Schema), under its former name.
   *
   * @deprecated Use `schema`; `jsonSchema` is kept as an alias. Giving both is a type error (and, from
   * JavaScript, a `PluginLlmInputError`).
   */
  readonly jsonSchema?: S
  readonly schema?: never
}

/**
 * A `completeStructured` call: instructions and input blocks (text and images), answered with JSON that is parsed
 * and, given `schema`, validated. The schema goes in `schema` (or its deprecated alias `jsonSchema`; at most one).
 */
export type StructuredCallOptions<S extends ArgumentSchema | undefined = undefined> = StructuredCallBase &
  (StructuredSchemaOption<S> | StructuredJsonSchemaOption<S>)

/** `Omit` that keeps a union a union (the plain one merges the `schema` / `jsonSchema` branches). */
type OmitEach<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never

/**
 * The schema of a structured call, whichever name it came under. Both names at once is refused here too, for
 * callers the types do not reach (JavaScript, `as` casts).
 */
export const structuredSchemaOf = (options: StructuredCallOptions<ArgumentSchema | undefined>): ArgumentSchema | undefined => {
  const { schema, jsonSchema } = options as { readonly schema?: ArgumentSchema; readonly jsonSchema?: ArgumentSchema }
  if (schema !== undefined && jsonSchema !== undefined) {
    throw new PluginLlmInputError({ field: "schema", message: "give the schema as `schema` or as `jsonSchema` (its deprecated alias), not both" })
  }
  return schema ?? jsonSchema
}

/** A `complete` answer: the text, who gave it, what it cost, and the call's audit record. */
export interface CompleteResult {
  /** The model's answer. */
  readonly text: string
  /** The provider that answered (after vision routing and fallback). */
  readonly provider: string
  /**
   * The model that answered, as the provider named it for this call (`gpt-4.1-mini-2025-04-14` for a route to
   * `gpt-4.1-mini`); the route's model id when the provider named none.
   */
  readonly model: string
  /** The model id the call was routed to (after vision routing and fallback), as the operator or plugin wrote it. */
  readonly requestedModel: string
  /** The host role whose model and credentials were used (the active one unless `agentId` was granted). */
  readonly agentId: string
  /** Tokens of every request the call made, and the cost where a price is known. */
  readonly usage: PluginLlmUsage
  /** The line written to the audit log for this call. */
  readonly audit: AuditRecord
}

/**
 * A `completeStructured` answer. An answer that does not parse or validate is not an error: `contentType` is
 * `text`, `parsed` is null and `issues` say why (ask with `repair: true` to have the model try once more).
 */
export interface StructuredResult<A> extends CompleteResult {
  /** The validated value when `contentType` is `json`; `null` otherwise. */
  readonly parsed: A | null
  /** `json` when the answer parsed (and validated); `text` when it did not. */
  readonly contentType: "json" | "text"
  /** Why the answer was refused (parse or validation issues), when it was. */
  readonly issues?: ReadonlyArray<ArgumentIssue>
}

/** The value `completeStructured` parses for a schema `S`: the schema's decoded type, or `unknown` without one. */
export type ParsedOutput<S> = S extends ArgumentSchema ? InferArguments<S> : unknown

/**
 * `ctx.llm`: one plugin's lane to the host's models. Every call has a Promise and an Effect form. Each call is
 * gated by the plugin's grants (routing options it was not granted fail with `PluginLlmTrustError`), counted
 * against its budgets and written to the audit log.
 *
 * @example
 * ```ts
 * import { z } from "zod"
 *
 * const summary = await ctx.llm.complete({ messages: [{ role: "user", content: `Summarise: ${text}` }], purpose: "tldr" })
 * const tasks = await ctx.llm.completeStructured({
 *   instructions: "Extract the action items.",
 *   input: [{ type: "text", text }],
 *   schema: z.object({ tasks: z.array(z.object({ action: z.string() })) }),
 *   repair: true
 * })
 * if (tasks.parsed !== null) for (const task of tasks.parsed.tasks) console.log(task.action)
 * ```
 */
export interface PluginLlm {
  /** The plugin this lane belongs to (its manifest name, or a remote plugin's source). */
  readonly pluginId: string
  /** A chat answered with text. Rejects with a `PluginLlmError` (gate, input, budget, timeout, provider, cancel). */
  complete(options: CompleteCallOptions): Promise<CompleteResult>
  /**
   * Instructions and input answered with JSON, parsed and validated against `schema`. Rejects with a
   * `PluginLlmError`; an answer that fails validation is a result with `issues`, not a rejection.
   */
  completeStructured<S extends ArgumentSchema | undefined = undefined>(options: StructuredCallOptions<S>): Promise<StructuredResult<ParsedOutput<S>>>
  /** `complete` as an Effect: fails with a typed `PluginLlmError`; interruption cancels the provider request. */
  completeEffect(options: Omit<CompleteCallOptions, "signal">): Effect.Effect<CompleteResult, PluginLlmError>
  /** `completeStructured` as an Effect: fails with a typed `PluginLlmError`; interruption cancels the request. */
  completeStructuredEffect<S extends ArgumentSchema | undefined = undefined>(
    options: OmitEach<StructuredCallOptions<S>, "signal">
  ): Effect.Effect<StructuredResult<ParsedOutput<S>>, PluginLlmError>
}

/** What `createPluginLlm` builds the host side from: the host's models, the operator's config, where keys are read. */
export interface PluginLlmOptions {
  /** The host's default role: its client options (provider, model, key, base URL). Never shown to plugins. */
  readonly active: LlmClientOptions
  /** The agent id of `active` (default `default`). */
  readonly activeAgent?: string
  /** Other host roles a plugin may be granted (`agentId`), by id. */
  readonly agents?: Readonly<Record<string, LlmClientOptions>>
  /** The operator's sections, decoded (`decodePluginLlmConfig`) or as the host's YAML parser left them. */
  readonly config?: PluginLlmConfig | { readonly plugins?: unknown; readonly auxiliary?: unknown; readonly llm?: unknown }
  /** The host's own task names (default `DEFAULT_BUILTIN_TASKS`). */
  readonly builtinTasks?: ReadonlyArray<string>
  /** Where relative `api_key_file` paths are resolved: the config file's folder (default the working directory). */
  readonly configDir?: string
  /** Where keys named by the config are read (default `process.env`). */
  readonly env?: Readonly<Record<string, string | undefined>>
  /** The `fetch` provider requests are made with (default the global one). */
  readonly fetch?: typeof globalThis.fetch
  /** The audit log (default: one JSON line per call on stderr); `false` for none. `result.audit` is always set. */
  readonly audit?: AuditSink | false
  /** Clients by route, built on first use; tests pass one to count or script them. */
  readonly createClient?: (options: LlmClientOptions) => LlmClient
  /**
   * Where the credentials to keep out of errors and audit records are collected (default: a new one). Every key
   * this lane is configured with (clients, `env`, key files as they are read) is added to it; a host passes its
   * own, which also knows the host's access key and tokens, and hides them on its other boundaries too.
   */
  readonly redactor?: SecretRedactor
}

/** How one plugin's lane reads what the plugin sends. */
export interface PluginLaneOptions {
  /**
   * The plugin runs in another process and its calls arrive over HTTP. Its `schema` is then untrusted: every
   * regex in it runs on the linear-time engine only, and a schema with one that engine cannot run (lookaround,
   * backreferences) is refused with `PluginLlmSchemaError` before any provider call. Default `false` (an
   * in-process plugin's schema is code of the host's process; see docs/security.md).
   */
  readonly remote?: boolean
}

/** The host side of the plugin LLM layer: one per host, one `PluginLlm` per plugin. */
export interface PluginLlmHost {
  /** The operator's config, decoded. */
  readonly config: PluginLlmConfig
  /** The auxiliary tasks plugins have registered, and the host's built-in task names. */
  readonly tasks: TaskRegistry
  /**
   * The `ctx.llm` of one plugin: gated by `plugins.entries.<pluginId>.llm`, closed when the plugin has no entry.
   * `options.remote`: the plugin's calls arrive over HTTP, so its schemas are untrusted (see {@link PluginLaneOptions}).
   */
  forPlugin(pluginId: string, options?: PluginLaneOptions): PluginLlm
  /** Calls made and in flight per plugin, for the status page. */
  usage(pluginId: string): { readonly calls: number; readonly inFlight: number }
}

/** A remote plugin's schema: its patterns on the linear-time engine only (decision 0093). */
const UNTRUSTED_CODEC: ArgumentCodecOptions = Object.freeze({ untrustedSchema: true })

const providerLabel = (options: LlmClientOptions): string => (typeof options.provider === "string" ? options.provider : options.provider.name)

const neutralUsage = (usage: Usage): PluginLlmUsage => ({ ...usage })

/**
 * Why a route failed, as a hop: 429 / 5xx / connection / provider-stream error / no credential; else undefined.
 * The only provider data a hop carries is a stream error's code, redacted before it is cut (a cut key would no
 * longer be recognised).
 */
const hopOf = (route: Route, thrown: unknown, redactor: SecretRedactor): FallbackHop | undefined => {
  const at = { provider: route.provider, model: route.model }
  if (!isLlmError(thrown)) return undefined
  switch (thrown._tag) {
    case "LlmHttpError":
      if (thrown.status === 429 || thrown.status >= 500) return { ...at, reason: `http_${thrown.status}`, message: `HTTP ${thrown.status}` }
      return undefined
    case "LlmNetworkError":
      return { ...at, reason: "network", message: "connection failed" }
    case "LlmTimeout":
      return { ...at, reason: "timeout", message: `no ${thrown.phase === "headers" ? "response" : "data"} within ${thrown.afterMs} ms` }
    case "LlmProviderError":
      return { ...at, reason: "provider_error", message: `provider error ${quote(redactor.redact(String(thrown.code)), 40)}` }
    case "LlmConfigError":
      return { ...at, reason: "config", message: "no usable credential or endpoint for this route" }
    default:
      return undefined
  }
}

const describeRefusal = (route: Route, thrown: unknown): string => {
  if (isLlmError(thrown)) {
    if (thrown._tag === "LlmHttpError") return `${route.provider}/${route.model} refused the request: HTTP ${thrown.status}`
    return `${route.provider}/${route.model} failed: ${thrown._tag}`
  }
  return `${route.provider}/${route.model} failed unexpectedly`
}

/**
 * The error boundary: every error a call fails with leaves through here, rebuilt (message, stack and fields) when
 * any of its text held a credential, so a plugin never sees one whichever field carried it.
 */
const scrubbed = (error: PluginLlmError, redactor: SecretRedactor): PluginLlmError => {
  const fields: Record<string, unknown> = { ...error, message: error.message }
  delete fields["_tag"]
  const clean: Record<string, unknown> = {}
  // A cause is kept as it is: it never leaves in a message or over HTTP (only its own class's fields do).
  for (const [key, value] of Object.entries(fields)) clean[key] = key === "cause" ? value : redactor.redactValue(value)
  if (JSON.stringify(clean) === JSON.stringify(fields)) return error
  const Rebuilt = error.constructor as new (fields: Record<string, unknown>) => PluginLlmError
  return new Rebuilt(clean)
}

/** One day: longer is a mistake, and past 2^31 ms `setTimeout` would fire at once. */
const MAX_TIMEOUT_SECONDS = 86_400

const repairPrompt = (issues: ReadonlyArray<ArgumentIssue>): string =>
  `Your answer was not accepted: ${formatIssues(issues)}. Reply again with only the JSON value, matching the schema exactly.`

/**
 * Creates the host side of `ctx.llm`. Throws `PluginLlmConfigError` for an operator config that does not decode.
 * Provider clients are built per route on first use; nothing is sent until a plugin calls.
 *
 * @example
 * ```ts
 * import { createPluginLlm } from "llm-worker/plugin-llm"
 *
 * const host = createPluginLlm({
 *   active: { provider: "openai", model: "gpt-4.1-mini", apiKey: process.env.OPENAI_API_KEY },
 *   // what the operator wrote in llm-worker.yaml: tldr may pick its model, from a list
 *   config: { plugins: { entries: { tldr: { llm: { allow_model_override: true, allowed_models: ["gpt-4.1"] } } } } }
 * })
 * const llm = host.forPlugin("tldr")
 * const result = await llm.complete({ messages: [{ role: "user", content: "ping" }], model: "gpt-4.1", purpose: "health" })
 * console.log(result.text, result.usage.totalTokens, result.audit.outcome)
 * ```
 */
export const createPluginLlm = (options: PluginLlmOptions): PluginLlmHost => {
  const config = isDecodedConfig(options.config) ? options.config : decodePluginLlmConfig(options.config ?? {})
  const tasks = new TaskRegistry(options.builtinTasks ?? DEFAULT_BUILTIN_TASKS)
  const activeAgent = options.activeAgent ?? "default"
  const agents = new Map<string, LlmClientOptions>(Object.entries(options.agents ?? {}))
  agents.set(activeAgent, options.active)
  const env = options.env ?? process.env
  const sink = options.audit === false ? undefined : (options.audit ?? stderrAudit)
  const makeClient = options.createClient ?? createLlmClient
  const redactor = options.redactor ?? new SecretRedactor()
  const namedKeyVariables = [...Object.values(config.llm.providers), ...Object.values(config.llm.profiles)].flatMap((entry) => (entry.apiKeyEnv === undefined ? [] : [entry.apiKeyEnv]))
  redactor.add(...environmentSecrets(env, namedKeyVariables), ...[...agents.values()].flatMap(clientSecrets))
  const context: RouteContext = {
    config, tasks, activeAgent, agents, env,
    configDir: options.configDir ?? process.cwd(),
    ...(options.fetch === undefined ? {} : { fetch: options.fetch })
  }
  const limits = new Map<string, CallLimits>()
  const clients = new Map<string, LlmClient>()
  const inputLimits: InputLimits = { maxImageBytes: config.llm.maxImageBytes, maxParts: DEFAULT_MAX_PARTS, maxTextChars: DEFAULT_MAX_TEXT_CHARS }
  const profiles = new Set(Object.keys(config.llm.profiles))

  const limitsOf = (pluginId: string): CallLimits => {
    let found = limits.get(pluginId)
    if (found === undefined) {
      const grants = config.plugins[pluginId]?.llm ?? closedGrants
      found = new CallLimits(pluginId, grants.maxCalls ?? config.llm.defaultMaxCalls, grants.maxConcurrent ?? config.llm.defaultMaxConcurrent)
      limits.set(pluginId, found)
    }
    return found
  }

  /** Clients are built once per route (configuration resolved then); a failure to build is a hop. */
  const clientFor = (route: Route): LlmClient => {
    const key = JSON.stringify([route.agentId, route.provider, route.model, route.profile ?? ""])
    let client = clients.get(key)
    if (client === undefined) {
      // A route's key may come from a file read just now, or a profile: known before anything is sent with it.
      redactor.add(...clientSecrets(route.client))
      client = makeClient(route.client)
      clients.set(key, client)
    }
    return client
  }

  interface Prepared {
    readonly kind: AuditRecord["kind"]
    readonly systemPrompt?: string
    readonly items: ReadonlyArray<Item>
    readonly images: number
    readonly schema?: ArgumentSchema
    /** The schema's codec bounds: untrusted for a remote plugin's schema. */
    readonly codec?: ArgumentCodecOptions
    readonly json: boolean
    readonly schemaName?: string
    readonly repair: boolean
  }

  interface Outcome {
    readonly text: string
    readonly usage: Usage
    /** The model the provider named for the (last) answer, when it named one. */
    readonly responseModel?: string
    readonly parsed?: { readonly value: unknown } | { readonly issues: ReadonlyArray<ArgumentIssue> }
    readonly repaired?: boolean
  }

  /** One request (and a repair retry) on one route. */
  const attempt = async (route: Route, prepared: Prepared, call: CallOptions, signal: AbortSignal): Promise<Outcome> => {
    const client = clientFor(route)
    const requestConfig = {
      ...(call.temperature === undefined ? {} : { temperature: call.temperature }),
      ...(call.maxTokens === undefined ? {} : { maxTokens: call.maxTokens })
    }
    const wantsJson = prepared.schema !== undefined || prepared.json
    if (!wantsJson) {
      const answer = await completeText(client, {
        input: prepared.items,
        ...(prepared.systemPrompt === undefined ? {} : { systemPrompt: prepared.systemPrompt }),
        config: requestConfig,
        signal
      })
      return { text: answer.text, usage: answer.usage, ...(answer.responseModel === undefined ? {} : { responseModel: answer.responseModel }) }
    }
    const plan: OutputPlan<unknown> = planOutput(client, {
      ...(prepared.schema === undefined ? { json: true } : { schema: prepared.schema }),
      ...(prepared.codec === undefined ? {} : { codec: prepared.codec }),
      ...(prepared.schemaName === undefined ? {} : { name: prepared.schemaName })
    })
    const request: Request = {
      model: client.model,
      ...(prepared.systemPrompt === undefined ? {} : { systemPrompt: prepared.systemPrompt }),
      items: prepared.items,
      tools: [],
      config: requestConfig
    }
    let answer: ObjectCompletion<unknown> = await completePlanned(client, request, plan, signal)
    let usage = answer.usage
    let repaired = false
    if (!answer.output.ok && prepared.repair) {
      const retry: Request = {
        ...request,
        items: [
          ...request.items,
          { type: "message", role: "assistant", content: [{ type: "output_text", text: answer.answer }] },
          { type: "message", role: "user", content: [{ type: "input_text", text: repairPrompt(answer.output.issues) }] }
        ]
      }
      answer = await completePlanned(client, retry, plan, signal)
      usage = sumUsage([usage, answer.usage])
      repaired = true
    }
    return {
      text: answer.text,
      usage,
      ...(answer.responseModel === undefined ? {} : { responseModel: answer.responseModel }),
      parsed: answer.output.ok ? { value: answer.output.value } : { issues: answer.output.issues },
      ...(repaired ? { repaired } : {})
    }
  }

  const run = async (pluginId: string, kind: AuditRecord["kind"], prepare: () => Prepared, call: CallOptions): Promise<StructuredResult<unknown>> => {
    const started = Date.now()
    const purpose = cleanPurpose(call.purpose)
    const grants = config.plugins[pluginId]?.llm ?? closedGrants
    const active = options.active
    let route: Route | undefined
    let prepared: Prepared | undefined
    let timeout: { ms: number; source: TimeoutSource } = { ms: config.llm.timeoutMs, source: "default" }
    const hops: Array<FallbackHop> = []
    let visionRouted = false
    let granted: GrantedRouting = {}
    const record = (outcome: string, usage: PluginLlmUsage, repaired?: boolean, responseModel?: string): AuditRecord => {
      const requestedModel = route?.model ?? active.model
      const entry: AuditRecord = {
        at: new Date(started).toISOString(),
        pluginId,
        kind,
        ...(purpose === undefined ? {} : { purpose }),
        ...(granted.task === undefined ? {} : { task: granted.task.name }),
        provider: route?.provider ?? providerLabel(active),
        model: responseModel ?? requestedModel,
        requestedModel,
        agentId: route?.agentId ?? granted.agentId ?? activeAgent,
        ...(granted.profile === undefined ? {} : { profile: granted.profile }),
        ...(prepared?.schemaName === undefined ? {} : { schemaName: prepared.schemaName }),
        usage,
        latencyMs: Date.now() - started,
        timeout,
        hops: [...hops],
        visionRouted,
        ...(repaired === undefined ? {} : { repaired }),
        outcome
      }
      // The audit boundary: whatever a field holds (a plugin's purpose, a provider's code), no credential is written.
      const clean = redactor.redactValue(entry)
      try {
        sink?.(clean)
      } catch {
        // A failing log must not fail the call.
      }
      return clean
    }

    const controller = new AbortController()
    let timer: ReturnType<typeof setTimeout> | undefined
    const onCallerAbort = () => controller.abort(new PluginLlmCancelled({ message: "the call was cancelled" }))
    const callerSignal = call.signal
    let budgetTaken = false
    try {
      if (callerSignal !== undefined && !(callerSignal instanceof AbortSignal)) {
        throw new PluginLlmInputError({ field: "signal", message: "signal must be an AbortSignal" })
      }
      prepared = prepare()
      granted = checkGate(pluginId, grants, call, { tasks, agents: new Set(agents.keys()), profiles })
      const primary = primaryRoute(context, pluginId, granted, (field, value) => {
        checkGate(pluginId, grants, { [field]: value }, { tasks, agents: new Set(agents.keys()), profiles })
      })
      route = primary
      const chain = routeChain(context, primary, prepared.images)
      visionRouted = chain.visionRouted
      route = chain.routes[0] as Route
      if (call.timeout !== undefined) {
        if (typeof call.timeout !== "number" || !Number.isFinite(call.timeout) || call.timeout <= 0 || call.timeout > MAX_TIMEOUT_SECONDS) {
          throw new PluginLlmInputError({ field: "timeout", message: `timeout must be a positive number of seconds, at most ${MAX_TIMEOUT_SECONDS}` })
        }
        timeout = { ms: call.timeout * 1000, source: "explicit" }
      } else if (granted.task !== undefined) {
        const taskTimeout = config.auxiliary[granted.task.name]?.timeoutMs ?? (granted.task.builtin ? undefined : tasks.get(granted.task.name)?.defaults.timeoutMs)
        if (taskTimeout !== undefined) timeout = { ms: taskTimeout, source: "task" }
      }
      if (call.temperature !== undefined && (typeof call.temperature !== "number" || !Number.isFinite(call.temperature) || call.temperature < 0)) {
        throw new PluginLlmInputError({ field: "temperature", message: "temperature must be a non-negative number" })
      }
      if (call.maxTokens !== undefined && (typeof call.maxTokens !== "number" || !Number.isSafeInteger(call.maxTokens) || call.maxTokens <= 0)) {
        throw new PluginLlmInputError({ field: "maxTokens", message: "maxTokens must be a positive integer" })
      }

      if (callerSignal?.aborted === true) throw new PluginLlmCancelled({ message: "the call was cancelled before it started" })
      callerSignal?.addEventListener("abort", onCallerAbort, { once: true })
      const limit = limitsOf(pluginId)
      await limit.acquire(controller.signal)
      budgetTaken = true
      timer = setTimeout(() => controller.abort(new PluginLlmTimeoutError({ timeoutMs: timeout.ms, source: timeout.source, message: `the call took longer than ${timeout.ms} ms (${timeout.source} timeout)` })), timeout.ms)

      let outcome: Outcome | undefined
      for (const candidate of chain.routes) {
        route = candidate
        try {
          outcome = await attempt(candidate, prepared, call, controller.signal)
          break
        } catch (thrown) {
          if (controller.signal.aborted) throw controller.signal.reason
          if (isPluginLlmError(thrown)) throw thrown
          const hop = hopOf(candidate, thrown, redactor)
          if (hop === undefined) {
            hops.push({ provider: candidate.provider, model: candidate.model, reason: "refused", message: describeRefusal(candidate, thrown) })
            throw new PluginLlmProviderUnavailable({ hops, message: describeRefusal(candidate, thrown) })
          }
          hops.push(hop)
        }
      }
      if (outcome === undefined) {
        const summary = hops.map((h) => `${h.provider}/${h.model}: ${h.message}`).join("; ")
        if (hops.every((h) => h.reason === "http_429")) throw new PluginLlmRateLimited({ hops, message: `rate limited on every route (${summary})` })
        throw new PluginLlmProviderUnavailable({ hops, message: `no route answered (${summary})` })
      }

      const used = route as Route
      const cost = await costOf(used.provider, providerLabel(used.client), used.model, outcome.usage, config.llm.prices, config.llm.priceTable === "genai-prices")
      const usage: PluginLlmUsage = { ...neutralUsage(outcome.usage), ...(cost === undefined ? {} : { costUsd: cost.usd, costSource: cost.source }) }
      const parsed = outcome.parsed
      const ok = parsed === undefined || "value" in parsed
      const audit = record(ok ? "ok" : "invalid_output", usage, outcome.repaired, outcome.responseModel)
      return {
        text: outcome.text,
        provider: used.provider,
        model: outcome.responseModel ?? used.model,
        requestedModel: used.model,
        agentId: used.agentId,
        usage,
        audit,
        parsed: parsed !== undefined && "value" in parsed ? parsed.value : null,
        contentType: parsed !== undefined && "value" in parsed ? "json" : "text",
        ...(parsed !== undefined && "issues" in parsed ? { issues: parsed.issues } : {})
      }
    } catch (thrown) {
      const error = isPluginLlmError(thrown)
        ? thrown
        : new PluginLlmProviderUnavailable({ hops, message: `internal error: ${thrown instanceof Error ? thrown.name : typeof thrown}` })
      record(error._tag, {})
      throw scrubbed(error, redactor)
    } finally {
      if (timer !== undefined) clearTimeout(timer)
      callerSignal?.removeEventListener("abort", onCallerAbort)
      if (budgetTaken) limitsOf(pluginId).release()
    }
  }

  const asEffect = <A>(start: (signal: AbortSignal) => Promise<A>): Effect.Effect<A, PluginLlmError> =>
    Effect.tryPromise({
      try: start,
      catch: (thrown) => (isPluginLlmError(thrown) ? thrown : new PluginLlmProviderUnavailable({ hops: [], message: "internal error" }))
    })

  const prepareChat = (options: CompleteCallOptions) => (): Prepared => {
    const chat = chatItems((options as { messages?: unknown }).messages, inputLimits)
    return { kind: "complete", ...(chat.systemPrompt === undefined ? {} : { systemPrompt: chat.systemPrompt }), items: chat.items, images: chat.images, json: false, repair: false }
  }

  const prepareStructured = (options: StructuredCallOptions<ArgumentSchema | undefined>, codec: ArgumentCodecOptions | undefined) => (): Prepared => {
    const instructions = (options as { instructions?: unknown }).instructions
    if (typeof instructions !== "string" || instructions.trim() === "") {
      throw new PluginLlmInputError({ field: "instructions", message: "instructions must be non-empty text" })
    }
    const systemPrompt = (options as { systemPrompt?: unknown }).systemPrompt
    if (systemPrompt !== undefined && typeof systemPrompt !== "string") throw new PluginLlmInputError({ field: "systemPrompt", message: "systemPrompt must be text" })
    const input = inputParts((options as { input?: unknown }).input, inputLimits)
    const schema = structuredSchemaOf(options)
    if (schema !== undefined) {
      // Checked here, before the gate and any call: an unusable schema is the plugin's error, not the provider's.
      try {
        outputCodec(schema, codec)
      } catch (thrown) {
        throw new PluginLlmSchemaError({ message: `schema cannot be used: ${thrown instanceof Error ? thrown.message : String(thrown)}`, cause: thrown })
      }
    }
    const schemaName = options.schemaName
    if (schemaName !== undefined && (typeof schemaName !== "string" || schemaName.length > 200)) {
      throw new PluginLlmInputError({ field: "schemaName", message: "schemaName must be text of at most 200 characters" })
    }
    return {
      kind: "complete_structured",
      systemPrompt: systemPrompt === undefined || systemPrompt.trim() === "" ? instructions : `${systemPrompt}\n\n${instructions}`,
      items: [{ type: "message", role: "user", content: input.parts }],
      images: input.images,
      ...(schema === undefined ? {} : { schema }),
      ...(codec === undefined ? {} : { codec }),
      json: options.jsonMode === true,
      ...(schemaName === undefined ? {} : { schemaName }),
      repair: options.repair === true
    }
  }

  const forPlugin = (pluginId: string, laneOptions?: PluginLaneOptions): PluginLlm => {
    const codec = laneOptions?.remote === true ? UNTRUSTED_CODEC : undefined
    const complete = async (callOptions: CompleteCallOptions): Promise<CompleteResult> => {
      const { parsed: _p, contentType: _c, issues: _i, ...result } = await run(pluginId, "complete", prepareChat(callOptions), callOptions)
      return result
    }
    const completeStructured = <S extends ArgumentSchema | undefined = undefined>(callOptions: StructuredCallOptions<S>): Promise<StructuredResult<ParsedOutput<S>>> =>
      run(pluginId, "complete_structured", prepareStructured(callOptions as StructuredCallOptions<ArgumentSchema | undefined>, codec), callOptions) as Promise<StructuredResult<ParsedOutput<S>>>
    return Object.freeze({
      pluginId,
      complete,
      completeStructured,
      completeEffect: (callOptions: Omit<CompleteCallOptions, "signal">) => asEffect((signal) => complete({ ...callOptions, signal })),
      completeStructuredEffect: <S extends ArgumentSchema | undefined = undefined>(callOptions: Omit<StructuredCallOptions<S>, "signal">) =>
        asEffect((signal) => completeStructured<S>({ ...callOptions, signal } as StructuredCallOptions<S>))
    })
  }

  return {
    config,
    tasks,
    forPlugin,
    usage: (pluginId) => {
      const found = limits.get(pluginId)
      return { calls: found?.calls ?? 0, inFlight: found?.inFlight ?? 0 }
    }
  }
}
