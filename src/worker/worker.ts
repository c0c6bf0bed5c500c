import { Effect, type Stream } from "effect"
import type { LlmClient } from "../llm/client.ts"
import { Item } from "../llm/item.ts"
import type { RequestConfig } from "../llm/request.ts"
import { planOutput, type StructuredOutcome } from "../llm/completion/output-plan.ts"
import type { ArgumentSchema, InferArguments } from "../schema/codec.ts"
import { lintHostedTools } from "../llm/hosted-tools.ts"
import { LlmConfigError } from "../llm/llm-error.ts"
import type { ToolDefinition } from "../tool/tool.ts"
import {
  type RegistrationReport,
  type ToolChangeReport,
  type ToolChanges,
  applyToolChanges,
  registerDefinitions
} from "../tool-server/registration.ts"
import { ToolServer, type ToolServerHandle } from "../tool-server/tool-server.ts"
import { type LockedPrefix, takeLock } from "./cache-lock.ts"
import { RunControl } from "./cancellation.ts"
import type { HookFn, HookPoint } from "./hooks.ts"
import type { ToolHookFn, ToolHookPoint } from "./tool-hooks.ts"
import type { TypedToolDefinition } from "../tool/define-tool.ts"
import { DEFAULT_MAX_JSON_DEPTH } from "../schema/json-depth.ts"
import { listBounded, quote } from "../schema/quote.ts"
import { ownItem, ownItems } from "./owned-items.ts"
import type { EventsOptions, Subscriber, WorkerEvent } from "./subscriber.ts"
import { toWorkerError } from "./to-worker-error.ts"
import { unansweredCalls } from "./tool-execution.ts"
import { type RunResult, runTurns } from "./turn-loop.ts"
import { noTracing, workerTracing } from "../telemetry/worker-tracing.ts"
import type { TelemetryOptions } from "../telemetry/worker-tracing.ts"
import { type WorkerCore, makeCore } from "./worker-core.ts"
import { DEFAULT_TOOL_OUTPUT_BYTES, checkOutputLimit } from "../tool/output-limit.ts"
import { CallsPending, type EventBufferOverflow, StaleWorker, WorkerBusy, type WorkerError, WorkerLocked } from "./worker-error.ts"

/** What `Worker.create` takes: the client, and optionally tools, prompt, config, history and the run's limits. */
export interface WorkerOptions {
  readonly client: LlmClient
  /** The tools to use; a fresh server when absent. Sharing a server shares its tools with its other handles. */
  readonly toolServer?: ToolServer
  readonly systemPrompt?: string
  readonly config?: RequestConfig
  readonly history?: ReadonlyArray<Item>
  /** Model requests allowed per run (default 32). */
  readonly maxTurns?: number
  /** Deadline per tool call in milliseconds. */
  readonly toolTimeoutMs?: number
  /** Per-tool deadlines by tool name, overriding `toolTimeoutMs`. */
  readonly toolTimeouts?: Readonly<Record<string, number>>
  /**
   * Cap in UTF-8 bytes on each tool result sent to the model (output or error text, after PostToolCall hooks),
   * for tools that set none of their own (`maxOutputBytes` in `defineTool`). Longer text is cut on a character
   * boundary and ends with a marker saying how many bytes were dropped. Default 100 KiB; at least 256, or
   * `Infinity` for none.
   */
  readonly maxToolOutputBytes?: number
  /**
   * Deepest nesting of tool arguments accepted (default 64, `DEFAULT_MAX_JSON_DEPTH`). Deeper arguments are
   * refused before anything parses them: the call gets an error result "arguments nested deeper than N levels".
   */
  readonly maxArgumentDepth?: number
  /** Tool calls of one response running at once (default 16); results stay in model order. */
  readonly maxParallelTools?: number
  /**
   * Tool calls executed per model response (default 128). Later calls get an error result without running, and
   * subscribers get a warning.
   */
  readonly maxCallsPerResponse?: number
  /**
   * OpenTelemetry spans for each run, model request and tool call (GenAI semantic conventions), through the
   * global tracer by default: a no-op until the application registers a tracer provider. Options choose the
   * tracer and opt in to recording content; `false` turns it off.
   */
  readonly telemetry?: TelemetryOptions | false
}

/** Options of one `run()` / `resume()`. */
export interface RunOptions {
  /** Cancels this run only. */
  readonly signal?: AbortSignal
}

/**
 * A run whose final answer is JSON checked against `output` (any schema a tool's arguments can use). Every
 * request of the run carries the provider's native structured output format (`RequestConfig.responseFormat`),
 * tools stay callable, and the last assistant text is parsed and validated into `result.output`. On a
 * cache-locked worker the format is part of the locked bytes: lock with the same `responseFormat` in the config
 * (`planOutput(client, { schema }).apply`) or the run fails with `CacheLockViolation`.
 */
export interface StructuredRunOptions<S extends ArgumentSchema> extends RunOptions {
  readonly output: S
  /** The schema's name shown to the provider (default `output`). */
  readonly outputName?: string
}

/** A run's result with its decoded final answer (or the issues, the text being in `items`). */
export type StructuredRunResult<A> = RunResult & { readonly output: StructuredOutcome<A> }

/** Options of `lock()`. */
export interface LockOptions {
  /** What a request that breaks the locked prefix does: fail the run (default) or go on with a warning. */
  readonly onViolation?: "error" | "warn"
}

export type { RunResult }

const DEFAULT_MAX_TURNS = 32
/** Enough for any real fan-out; a response asking for thousands of calls does not start thousands of tools. */
export const DEFAULT_MAX_PARALLEL_TOOLS = 16
/** Far beyond what a model needs in one response; past it calls are answered with an error, not run. */
export const DEFAULT_MAX_CALLS_PER_RESPONSE = 128

/** The accessors guarded like methods: their stale use reads `worker.config`, not `worker.config()`. */
const GETTERS: ReadonlySet<string> = new Set(["systemPrompt", "config", "hasPendingCalls", "lockedPrefix"])

/** Worker objects retired by `lock()` / `unlock()`, with the call that retired each. */
const retired = new WeakMap<object, "lock" | "unlock">()

/**
 * What both states can do: run, resume, cancel, read the history, add hooks, subscribe. The state-specific
 * classes add the rest, so a forbidden call does not type-check; a runtime guard stands behind it for plain JS
 * and stale references.
 */
abstract class WorkerBase {
  /** @internal */
  protected readonly core: WorkerCore

  /** @internal */
  protected constructor(core: WorkerCore) {
    this.core = core
  }

  abstract readonly state: "mutable" | "cache-locked"

  /** @internal Throws `StaleWorker` when this object was replaced by `lock()` / `unlock()`. */
  protected live(method: string): WorkerCore {
    const by = retired.get(this)
    if (by !== undefined) {
      const [was, now, name] = by === "lock" ? ["MutableWorker", "CacheLockedWorker", "locked"] : ["CacheLockedWorker", "MutableWorker", "mutable"]
      const use = GETTERS.has(method) ? method : `${method}(…)`
      throw new StaleWorker({
        method,
        retiredBy: by,
        message:
          `${use === method ? method : `${method}()`} was used on a ${was} that ${by}() retired; use the ${now} ` +
          `${by}() returned (const ${name} = worker.${by}(); ${name}.${use})`
      })
    }
    return this.core
  }

  /** @internal Retires this object and fails when a run is in progress. */
  protected retire(method: "lock" | "unlock"): WorkerCore {
    const core = this.idle(method)
    retired.set(this, method)
    return core
  }

  /** @internal */
  protected idle(method: string): WorkerCore {
    const core = this.live(method)
    if (core.running !== undefined) throw new WorkerBusy({ message: `${method}() is not allowed while a run is in progress` })
    return core
  }

  /**
   * Sends `input` as a user message and runs until the model is done (or a hook pauses). Rejects with a
   * `WorkerError`. If calls left by a pause pause again, the run returns paused and `input` is not appended.
   *
   * @example
   * ```ts
   * const result = await worker.run("Plan a day in Kyoto", { signal: AbortSignal.timeout(60_000) })
   * if (result.status === "paused") await worker.resume() // a hook paused before a tool call
   * ```
   */
  run<S extends ArgumentSchema>(input: string | Item, options: StructuredRunOptions<S>): Promise<StructuredRunResult<InferArguments<S>>>
  run(input: string | Item, options?: RunOptions): Promise<RunResult>
  run(input: string | Item, options?: RunOptions | StructuredRunOptions<ArgumentSchema>): Promise<RunResult> {
    const item = typeof input === "string" ? Item.userText(input) : input
    if (options === undefined || !("output" in options) || options.output === undefined) return this.start("run", item, options)
    return this.startStructured(item, options)
  }

  /** @internal The run with the output format in its config for its duration, then the final text decoded. */
  private async startStructured(item: Item, options: StructuredRunOptions<ArgumentSchema>): Promise<StructuredRunResult<unknown>> {
    const core = this.idle("run")
    // Native only: a forced answer tool would end every turn with a call the loop has to answer.
    const plan = planOutput(core.client, { schema: options.output, mode: "native", ...(options.outputName === undefined ? {} : { name: options.outputName }) })
    const config = core.config
    core.config = plan.apply({ model: core.client.model, items: [], tools: [], config }).config
    let result: RunResult
    try {
      result = await this.start("run", item, options)
    } finally {
      core.config = config
    }
    if (result.status === "paused") {
      return { ...result, output: { ok: false, stage: "parse", issues: [{ path: [], message: "the run paused before its final answer" }] } }
    }
    const last = result.items.findLast((entry) => entry.type === "message" && entry.role === "assistant")
    const text = last?.type === "message" ? last.content.map((part) => (part.type === "output_text" ? part.text : "")).join("") : ""
    return { ...result, output: await plan.decode(text) }
  }

  /** Continues a paused run without a new message: undecided calls are offered to hooks, decided ones honoured. */
  resume(options?: RunOptions): Promise<RunResult> {
    return this.start("resume", undefined, options)
  }

  /** `run` as an Effect: interrupting the fiber cancels the run. */
  runEffect(input: string | Item): Effect.Effect<RunResult, WorkerError> {
    return Effect.tryPromise({ try: (signal) => this.run(input, { signal }), catch: toWorkerError })
  }

  /** `resume` as an Effect: interrupting the fiber cancels the run. */
  resumeEffect(): Effect.Effect<RunResult, WorkerError> {
    return Effect.tryPromise({ try: (signal) => this.resume({ signal }), catch: toWorkerError })
  }

  /**
   * Cancels the run in progress; it rejects with `Cancelled` whose `reason` (and `cause`) is `reason`. A no-op
   * while idle: it never affects a later run.
   */
  cancel(reason?: unknown): void {
    this.live("cancel").running?.cancel(reason)
  }

  /** A snapshot of the history. Its items are frozen: editing one throws instead of rewriting the history. */
  history(): ReadonlyArray<Item> {
    return [...this.live("history").history]
  }

  get systemPrompt(): string | undefined {
    return this.live("systemPrompt").systemPrompt
  }

  get config(): RequestConfig {
    return this.live("config").config
  }

  /**
   * True while the history holds tool calls without a result (a paused batch, or a history set that way); the
   * next `run()` or `resume()` settles them first.
   */
  get hasPendingCalls(): boolean {
    return unansweredCalls(this.live("hasPendingCalls").history).length > 0
  }

  /**
   * Adds a hook at `point`; returns a function that removes it. Hooks of one point run in the order they were
   * added; see `HookSignatures` for what each point receives and may return.
   *
   * @example
   * ```ts
   * const remove = worker.addHook("PostToolCall", ({ call, result }) =>
   *   result.output.length > 10_000 ? PostToolCall.rewriteResult(result.output.slice(0, 10_000)) : PostToolCall.continue())
   * remove() // later
   * ```
   */
  addHook<P extends HookPoint>(point: P, hook: HookFn<P>): () => void {
    return this.live("addHook").hooks.add(point, hook)
  }

  /**
   * A PreToolCall or PostToolCall hook for one typed tool: it sees that tool's calls only, with the arguments
   * decoded by its schema (`call.arguments` has the schema's type) and, for PostToolCall, the handler's return
   * value before it became text (`output`). Rewrites (`ToolHook.rewriteArguments`, `ToolHook.rewriteOutput`) are
   * typed by the tool and checked against its schema at run time: a refused rewrite fails the run with
   * `HookFailed`, naming the issues. Typed PreToolCall hooks run after the plain ones; typed PostToolCall hooks
   * before them. Calls whose arguments do not decode reach no typed hook (the tool answers the model itself).
   * Returns a function that removes the hook.
   *
   * @example
   * worker.addToolHook(weather, "PreToolCall", ({ call }) =>
   *   call.arguments.days === undefined ? ToolHook.rewriteArguments({ ...call.arguments, days: 3 }) : ToolHook.continue()
   * )
   */
  addToolHook<A, O, P extends ToolHookPoint>(definition: TypedToolDefinition<A, O>, point: P, hook: ToolHookFn<P, NoInfer<A>, NoInfer<O>>): () => void {
    return this.live("addToolHook").toolHooks.add(definition, point, hook as unknown as (input: never) => unknown)
  }

  /**
   * Observes the worker's events (text, tool calls and results, usage, status, cache reports) until the returned
   * function is called. A throwing or rejecting subscriber never affects the run; the error is reported to the other
   * subscribers as a warning.
   *
   * @example
   * ```ts
   * const stop = worker.subscribe({
   *   onText: (text) => process.stdout.write(text),
   *   onToolResult: ({ outcome }) => console.log(`\n[${outcome.name}: ${outcome.status}]`)
   * })
   * ```
   */
  subscribe(subscriber: Subscriber): () => void {
    return this.live("subscribe").hub.subscribe(subscriber)
  }

  /**
   * Worker events as an async iterable; leave the loop to unsubscribe. Unread events are buffered up to
   * `options` (10,000 events, 1 Mi delta characters by default); past that the iterator yields what it holds and
   * then throws `EventBufferOverflow`.
   */
  events(options?: EventsOptions): AsyncIterable<WorkerEvent> {
    return this.live("events").hub.events(options)
  }

  /** Worker events as an Effect Stream, bounded like `events()`; fails with `EventBufferOverflow` on overflow. */
  eventStream(options?: EventsOptions): Stream.Stream<WorkerEvent, EventBufferOverflow> {
    return this.live("eventStream").hub.stream(options)
  }

  /** A handle on this worker's tools (lookup and calls; no registration). */
  toolServerHandle(): ToolServerHandle {
    return this.live("toolServerHandle").tools.clone()
  }

  private async start(method: string, input: Item | undefined, options: RunOptions | undefined): Promise<RunResult> {
    const core = this.idle(method)
    let control: RunControl | undefined
    try {
      control = new RunControl(options?.signal)
      core.running = control
      return await runTurns(core, input, control)
    } catch (thrown) {
      // runTurns already rejects with a WorkerError; this also covers a hostile `signal` option.
      throw toWorkerError(thrown)
    } finally {
      if (core.running === control) core.running = undefined
      try {
        control?.dispose()
      } catch {
        // A signal whose removeEventListener throws cannot keep the worker busy.
      }
    }
  }
}

/** The initial state: everything can change. `lock()` freezes the request prefix for prompt caching. */
export class MutableWorker extends WorkerBase {
  readonly state = "mutable" as const

  /** @internal */
  static fromCore(core: WorkerCore): MutableWorker {
    return new MutableWorker(core)
  }

  /**
   * Registers one tool: its factory runs now, once. The schema and name are linted against this worker's
   * provider: what it would refuse throws `RegistrationFailed`, what it would degrade comes back as warnings.
   * Throws `DuplicateName` or `RegistrationFailed` and registers nothing on failure.
   *
   * @example
   * ```ts
   * const report = worker.registerTool(defineTool({ name: "clock", description: "Current time", execute: () => new Date().toISOString() }))
   * for (const warning of report.warnings) console.warn(warning.message)
   * ```
   */
  registerTool(definition: ToolDefinition): RegistrationReport {
    return this.register("registerTool", [definition])
  }

  /** Registers a batch all-or-nothing (see `registerTool`). */
  registerTools(definitions: Iterable<ToolDefinition>): RegistrationReport {
    return this.register("registerTools", definitions)
  }

  /** Both registration methods, each named as itself in the errors it throws. */
  private register(method: string, definitions: Iterable<ToolDefinition>): RegistrationReport {
    const core = this.idle(method)
    return registerDefinitions(core.tools, definitions, { lintTargets: [core.client.toolLintTarget ?? core.client.scheme] })
  }

  /**
   * Registers a tool, replacing a registered tool of the same name (a hot schema update). The new factory runs
   * now; calls already running keep the instance they started with. Linted like `registerTool`; on failure the
   * old tool stays.
   */
  replaceTool(definition: ToolDefinition): ToolChangeReport {
    return this.updateTools({ add: [definition], replace: true })
  }

  /** Removes a tool; true when it was registered. Calls already running finish with the instance they started with. */
  unregisterTool(name: string): boolean {
    return this.updateTools({ remove: [name] }).removed.length > 0
  }

  /**
   * Adds, replaces and removes tools in one all-or-nothing change (removals first, so a batch may remove `a.b`
   * and add `a_b`). Throws `DuplicateName` (an added name already registered, without `replace`) or
   * `RegistrationFailed` and changes nothing on failure. Any change bumps the tool-set version, which a worker
   * locked on the same server detects before its next request.
   */
  updateTools(changes: ToolChanges): ToolChangeReport {
    const core = this.idle("updateTools")
    return applyToolChanges(core.tools, changes, { lintTargets: [core.client.toolLintTarget ?? core.client.scheme] })
  }

  /** The system prompt of the next requests (`undefined` for none). */
  setSystemPrompt(prompt: string | undefined): void {
    this.idle("setSystemPrompt").systemPrompt = prompt
  }

  /** The generation settings of the next requests (hosted tools are checked against the client's wire format). */
  setConfig(config: RequestConfig): void {
    const core = this.idle("setConfig")
    core.config = workerConfig(core.client, config)
  }

  /** Replaces the history. Decisions kept for calls paused in the old history are dropped. */
  setHistory(items: ReadonlyArray<Item>): void {
    const core = this.idle("setHistory")
    core.history = ownItems(items)
    core.pending = new Map()
    core.offered = undefined
  }

  /** Appends items (copied and frozen; throws a TypeError for anything that is not an item). */
  pushItem(...items: ReadonlyArray<Item>): void {
    const core = this.idle("pushItem")
    const owned = items.map((item) => ownItem(item))
    for (const item of owned) core.history.push(item)
  }

  /** Keeps the first `length` items. */
  truncateHistory(length: number): void {
    const core = this.idle("truncateHistory")
    if (!Number.isInteger(length) || length < 0) throw new RangeError(`truncateHistory: invalid length ${length}`)
    core.history.length = Math.min(length, core.history.length)
    core.pending = new Map()
    core.offered = undefined
  }

  /**
   * Locks the current system prompt, tool set, config and history as the cached prefix. This object is retired;
   * use the returned worker. Throws `CallsPending` while calls in the history have no result (after a pause):
   * their results would land inside the locked prefix. `resume()` first (decision 0018).
   *
   * @example
   * ```ts
   * const locked = worker.lock() // `worker` is retired from here on
   * await locked.run("First question")
   * await locked.run("Second question") // same prefix bytes as the first request: a prompt-cache hit
   * console.log(locked.lockedPrefix.prefixBytes)
   * ```
   */
  lock(options?: LockOptions): CacheLockedWorker {
    const core = this.idle("lock")
    const unanswered = unansweredCalls(core.history)
    if (unanswered.length > 0) {
      const callIds = unanswered.map((call) => call.callId)
      throw new CallsPending({
        callIds,
        message: `lock() refused: ${callIds.length} tool call(s) have no result yet (${listBounded(callIds.map((id) => quote(id)), ", ")}); resume() first`
      })
    }
    core.lock = takeLock(
      core.client,
      {
        model: core.client.model,
        ...(core.systemPrompt === undefined ? {} : { systemPrompt: core.systemPrompt }),
        items: [...core.history],
        tools: core.tools.toolDefinitionsSorted(),
        config: core.config,
        promptCache: { prefixItems: core.history.length }
      },
      core.tools.version,
      options?.onViolation ?? "error"
    )
    this.retire("lock")
    return CacheLockedWorker.fromCore(core)
  }
}

/** The locked state: runs only append; the system prompt, tools, config and locked history prefix stay fixed. */
export class CacheLockedWorker extends WorkerBase {
  readonly state = "cache-locked" as const

  /** @internal */
  static fromCore(core: WorkerCore): CacheLockedWorker {
    return new CacheLockedWorker(core)
  }

  /** What was locked: the history length and the verified byte prefix. */
  get lockedPrefix(): LockedPrefix {
    return this.live("lockedPrefix").lock as LockedPrefix
  }

  /** Back to Mutable. This object is retired; use the returned worker. */
  unlock(): MutableWorker {
    const core = this.retire("unlock")
    core.lock = undefined
    return MutableWorker.fromCore(core)
  }
}

// Behind the types: plain JS (or a cast) calling a Mutable-only method on a locked worker gets a typed error.
for (const method of ["registerTool", "registerTools", "replaceTool", "unregisterTool", "updateTools", "setSystemPrompt", "setConfig", "setHistory", "pushItem", "truncateHistory", "lock"]) {
  Object.defineProperty(CacheLockedWorker.prototype, method, {
    value(this: CacheLockedWorker) {
      throw new WorkerLocked({ method, message: `${method}() is not available while cache-locked; unlock() first` })
    }
  })
}

// Only a ToolServer, never a handle: a handle is what hooks and application code receive, and a Worker built on
// one would let any holder register tools into a set that another (perhaps locked) worker uses.
const toHandle = (server: ToolServer | undefined): ToolServerHandle => {
  if (server !== undefined && !(server instanceof ToolServer)) {
    throw new TypeError("Worker.create: toolServer must be a ToolServer; a ToolServerHandle cannot be used to register tools")
  }
  return (server ?? new ToolServer()).handle()
}

/**
 * The config a worker keeps: hosted tools are checked against the client's wire format (one declared for another
 * provider is refused here, not silently dropped on every request) and copied into a frozen array, so the tools
 * array the cache lock fixes cannot change behind it and its encoded entries are cached (decision 0025). The
 * copy itself is frozen: it changes only through `setConfig`, and while its values cannot change either (the
 * caller's own nested objects frozen, or none) the encoders print the body's envelope once (decision 0085).
 */
const workerConfig = (client: LlmClient, config: RequestConfig | undefined): RequestConfig => {
  const hosted = config?.hostedTools
  if (hosted === undefined) return Object.freeze({ ...config })
  const wrong = lintHostedTools(hosted, client.scheme)
  if (wrong.length > 0) {
    throw new LlmConfigError({ message: `hostedTools: ${listBounded(wrong.map((lint) => lint.message), "; ", 5)}` })
  }
  return Object.freeze({ ...config, hostedTools: Object.freeze([...hosted]) })
}

const positiveInteger = (name: string, value: number | undefined, fallback: number): number => {
  const chosen = value ?? fallback
  if (!Number.isInteger(chosen) || chosen < 1) throw new RangeError(`${name} must be a positive integer, got ${String(chosen)}`)
  return chosen
}

/**
 * Creates workers: `Worker.create(options)` returns a `MutableWorker`; `lock()` turns it into a `CacheLockedWorker`
 * whose every request keeps the same byte prefix, so provider prompt caches hit.
 *
 * @example
 * ```ts
 * const worker = Worker.create({ client, systemPrompt: "Answer in one sentence." })
 * worker.registerTool(weather)
 * const locked = worker.lock()
 * const result = await locked.run("What's the weather in Kyoto?")
 * console.log(result.status, result.items.at(-1))
 * ```
 */
export const Worker = {
  /**
   * A new worker in the Mutable state.
   *
   * @example
   * ```ts
   * const worker = Worker.create({ client: createLlmClient({ provider: "openai", model: "gpt-4.1-mini" }), maxTurns: 8 })
   * ```
   */
  create(options: WorkerOptions): MutableWorker {
    const maxTurns = positiveInteger("maxTurns", options.maxTurns, DEFAULT_MAX_TURNS)
    const maxArgumentDepth = positiveInteger("maxArgumentDepth", options.maxArgumentDepth, DEFAULT_MAX_JSON_DEPTH)
    const maxParallelTools = positiveInteger("maxParallelTools", options.maxParallelTools, DEFAULT_MAX_PARALLEL_TOOLS)
    const maxCallsPerResponse = positiveInteger("maxCallsPerResponse", options.maxCallsPerResponse, DEFAULT_MAX_CALLS_PER_RESPONSE)
    for (const [name, ms] of [["toolTimeoutMs", options.toolTimeoutMs], ...Object.entries(options.toolTimeouts ?? {})] as const) {
      if (ms !== undefined && !(typeof ms === "number" && ms > 0 && Number.isFinite(ms))) {
        throw new RangeError(`${name === "toolTimeoutMs" ? name : `toolTimeouts.${name}`} must be a positive number of milliseconds, got ${ms}`)
      }
    }
    const maxToolOutputBytes = checkOutputLimit(options.maxToolOutputBytes ?? DEFAULT_TOOL_OUTPUT_BYTES, "maxToolOutputBytes")
    return MutableWorker.fromCore(
      makeCore({
        client: options.client,
        tools: toHandle(options.toolServer),
        systemPrompt: options.systemPrompt,
        config: workerConfig(options.client, options.config),
        history: options.history ?? [],
        settings: {
          maxTurns,
          toolTimeoutMs: options.toolTimeoutMs,
          toolTimeouts: { ...options.toolTimeouts },
          maxArgumentDepth,
          maxParallelTools,
          maxCallsPerResponse,
          maxToolOutputBytes
        },
        tracing: options.telemetry === false ? noTracing : workerTracing(options.telemetry ?? {})
      })
    )
  }
} as const
