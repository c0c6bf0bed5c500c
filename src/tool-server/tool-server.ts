import { Effect } from "effect"
import type { ToolSpec } from "../llm/request.ts"
import { type ToolDialect, wireSpelling } from "../schema/tool-names.ts"
import type { ParsedArguments, Tool, ToolContext } from "../tool/tool.ts"
import { type AbortWatch, type WatchList, joinAbort, unwatchAbort, whenAborted } from "../tool/abort-watch.ts"
import { describeThrown } from "../tool/describe-thrown.ts"
import { DEFAULT_TOOL_OUTPUT_BYTES, checkOutputLimit, limitOutput } from "../tool/output-limit.ts"
import { toToolError } from "../tool/tool-constructors.ts"
import { executeParsedUnrendered, executeUnrendered, isTypedTool, renderToolOutput } from "../tool/define-tool.ts"
import { observeOutput } from "../tool/output-observer.ts"
import { ExecutionFailed, Internal, InvalidArgument, type ToolError } from "../tool/tool-error.ts"
import type { ToolMeta } from "../tool/tool-meta.ts"
import {
  type ToolCallError,
  ToolCancelled,
  ToolExecution,
  ToolNotFound,
  ToolTimeout,
  isToolCallError
} from "./tool-server-error.ts"

/** One registered tool: the meta, the instance built by its factory, and the neutral definition sent to models. */
export interface ToolEntry {
  readonly meta: ToolMeta
  readonly tool: Tool
  readonly spec: ToolSpec
  /**
   * Caps a tool's output at its own limit (or the default). Shared by every entry with the same cap (see
   * `outputCap`), so a registration does not pay a closure for it.
   */
  readonly limit: (output: unknown) => string
}

const CAPS = new Map<number, (output: unknown) => string>()
/** Distinct caps kept shared; a program declaring more (unusual) gets its own function per further cap. */
const MAX_SHARED_CAPS = 64

/** The output capper for `maxBytes`, shared between the entries that use the same cap. */
export const outputCap = (maxBytes: number): ((output: unknown) => string) => {
  const known = CAPS.get(maxBytes)
  if (known !== undefined) return known
  const cap = (output: unknown): string => outputText(output, maxBytes)
  if (CAPS.size < MAX_SHARED_CAPS) CAPS.set(maxBytes, cap)
  return cap
}

/**
 * The shared state behind a server and all its handles. Registration swaps in a new sorted definition list and
 * bumps `version`; readers never see a half-registered batch because registration is synchronous.
 */
export class ToolRegistry {
  readonly entries = new Map<string, ToolEntry>()
  version = 0
  private sorted: ReadonlyArray<ToolSpec> | undefined = Object.freeze([])

  /** The definitions sorted by name in code-unit order; the same frozen array until the set changes. */
  sortedSpecs(): ReadonlyArray<ToolSpec> {
    if (this.sorted === undefined) {
      const names = [...this.entries.keys()].sort()
      this.sorted = Object.freeze(names.map((name) => (this.entries.get(name) as ToolEntry).spec))
    }
    return this.sorted
  }

  /**
   * Provider spelling → neutral name, per dialect, for the registered tools whose spelling differs from their
   * name (a dotted name on OpenAI and Anthropic). Every other tool is spelled as it is named, and `entries`
   * answers for it: a map entry per tool and dialect would cost every registration ~40 B per dialect.
   */
  private readonly respelled = new Map<ToolDialect, Map<string, string>>()

  /** The registered tool that `dialect` spells `wire`, if any. Kept up to date by `commit`: linear in the batch. */
  ownerOfWire(wire: string, dialect: ToolDialect): string | undefined {
    let names = this.respelled.get(dialect)
    if (names === undefined) {
      names = new Map()
      for (const name of this.entries.keys()) {
        const spelled = wireSpelling(name, dialect)
        if (spelled !== name) names.set(spelled, name)
      }
      this.respelled.set(dialect, names)
    }
    const respelled = names.get(wire)
    if (respelled !== undefined) return respelled
    return this.entries.has(wire) && wireSpelling(wire, dialect) === wire ? wire : undefined
  }

  /** Applies one change set: `removed` names leave first, then `batch` is added (replacing same-named entries). */
  commit(batch: ReadonlyArray<ToolEntry>, removed: Iterable<string> = []): void {
    for (const name of removed) {
      if (!this.entries.delete(name)) continue
      for (const [dialect, names] of this.respelled) {
        const spelled = wireSpelling(name, dialect)
        if (spelled !== name) names.delete(spelled)
      }
    }
    for (const entry of batch) {
      const name = entry.meta.name
      this.entries.set(name, entry)
      for (const [dialect, names] of this.respelled) {
        const spelled = wireSpelling(name, dialect)
        if (spelled !== name) names.set(spelled, name)
      }
    }
    this.sorted = undefined
    this.version++
  }
}

/** Options of one `callTool`. */
export interface CallToolOptions {
  /** The provider's call id, passed to the tool's context; a local id is generated when absent. */
  readonly callId?: string
  /** Cancels the call: the tool's own signal aborts and the call fails with `ToolCancelled` without waiting. */
  readonly signal?: AbortSignal
  /**
   * Deadline for this call in milliseconds: `ToolTimeout` when it passes. Hard only for tools that stop when
   * their signal aborts (or run isolated, `llm-worker/isolated`); see the guide for what a busy loop does.
   */
  readonly timeoutMs?: number
  /**
   * Cap in UTF-8 bytes on the output or error text, for a tool that declares none of its own
   * (`ToolMeta.outputLimit`). Default 100 KiB; `Infinity` for none.
   */
  readonly maxOutputBytes?: number
  /**
   * Receives the value a `defineTool` handler returned, before it is rendered to text (nothing for other tools, or
   * when the call fails). The Worker uses it for typed PostToolCall hooks (`addToolHook`).
   */
  readonly observeOutput?: (value: unknown) => void
}

const NEVER_ABORTED: AbortSignal = new AbortController().signal
let localCallCounter = 0

/** Set by the handle class's static block: the only way to reach a handle's private registry. */
let readRegistry: (handle: ToolServerHandle) => ToolRegistry

/** @internal Used by the Worker's registration path; not exported from the package. */
export const registryOf = (handle: ToolServerHandle): ToolRegistry => readRegistry(handle)

/**
 * A cheap, cloneable view of a tool server. Everything here is safe to hand to hooks and application code:
 * look tools up, call them, list their definitions. Registration is deliberately absent — only a Worker in its
 * Mutable state registers tools.
 */
export class ToolServerHandle {
  /** Truly private (not reachable by reflection); registration reaches it through `registryOf` inside the package. */
  readonly #registry: ToolRegistry

  static {
    readRegistry = (handle) => handle.#registry
  }

  /** @internal */
  constructor(registry: ToolRegistry) {
    this.#registry = registry
    Object.freeze(this)
  }

  /** Another handle on the same tools. */
  clone(): ToolServerHandle {
    return new ToolServerHandle(this.#registry)
  }

  /** Increases whenever the tool set changes; equal versions mean byte-identical definitions. */
  get version(): number {
    return this.#registry.version
  }

  /** Names of the registered tools, sorted. */
  names(): ReadonlyArray<string> {
    return this.toolDefinitionsSorted().map((spec) => spec.name)
  }

  /** The meta and the live instance of a tool (hooks use the instance to read its state). */
  getTool(name: string): { readonly meta: ToolMeta; readonly tool: Tool } | undefined {
    const entry = this.#registry.entries.get(name)
    return entry === undefined ? undefined : { meta: entry.meta, tool: entry.tool }
  }

  /**
   * Neutral definitions sorted by name (code-unit order). The same frozen array is returned while the tool set
   * is unchanged, so provider fragments built from it are cached and re-emitting costs nothing.
   */
  toolDefinitionsSorted(): ReadonlyArray<ToolSpec> {
    return this.#registry.sortedSpecs()
  }

  /**
   * Executes a tool with the raw JSON argument text. Resolves with the output text; rejects with a
   * `ToolCallError` (`ToolNotFound`, `ToolExecution`, `ToolTimeout`, `ToolCancelled`) and nothing else.
   */
  callTool(name: string, argumentsJson: string, options?: CallToolOptions): Promise<string> {
    return dispatch(this.#registry, name, argumentsJson, options)
  }

  /** `callTool` as an Effect: typed failure channel, and interrupting the fiber cancels the tool. */
  callToolEffect(
    name: string,
    argumentsJson: string,
    options?: Omit<CallToolOptions, "signal">
  ): Effect.Effect<string, ToolCallError> {
    return Effect.tryPromise({
      try: (signal) => this.callTool(name, argumentsJson, { ...options, signal }),
      catch: (thrown) => (isToolCallError(thrown) ? thrown : executionError(name, thrown, this.getTool(name)?.meta.maxOutputBytes))
    })
  }
}

/**
 * A call's arguments: the model's text, or — from a caller that has parsed and checked it already (the Worker) —
 * the parsed object and, while it still spells that object, the text. A tool with `executeParsed` gets the
 * object; any other tool gets the text (printed from the object when the caller changed it).
 */
export type CallArguments =
  | string
  | {
      readonly value: ParsedArguments
      readonly text: string | undefined
      /**
       * Upper bounds of the value's nesting depth and size (values, as `measureValue` counts them), when the caller
       * parsed it from text it had bounded already: a typed tool's codec then skips measuring the value again.
       */
      readonly depthBound?: number
      readonly sizeBound?: number
    }

/**
 * @internal `callTool` with arguments the caller parsed already, so the text is parsed once on the whole path.
 * Used by the Worker; not exported from the package.
 */
export const callToolParsed = (
  handle: ToolServerHandle,
  name: string,
  args: CallArguments,
  options?: CallToolOptions
): Promise<string> => dispatch(readRegistry(handle), name, args, options)

/** @internal A registered tool's entry, without the copy `getTool` hands out. Used by the Worker's call path. */
export const entryOf = (handle: ToolServerHandle, name: string): ToolEntry | undefined => readRegistry(handle).entries.get(name)

/**
 * @internal `startTool`, except that a typed tool (`isTypedTool`) settles with its handler's value before it is
 * rendered: map what settles through `calledOutput` / `calledFailure` with the same `typed`. The caller's own
 * reaction renders it, so the tool's promise does not need one more promise (and tick) to render.
 */
export const startToolUnrendered = (tool: Tool, typed: boolean, args: CallArguments, context: ToolContext): unknown =>
  typed
    ? typeof args === "string"
      ? executeUnrendered(tool, args, context)
      : executeParsedUnrendered(tool, args, context)
    : startTool(tool, args, context)

/** @internal What a call started by `startToolUnrendered` resolved with, as the tool's own text (throws as rendering throws). */
export const calledOutput = (typed: boolean, value: unknown): unknown => (typed ? renderToolOutput(value) : value)

/** @internal What a call started by `startToolUnrendered` rejected with, as the tool's own `execute` rejects. */
export const calledFailure = (typed: boolean, thrown: unknown): unknown => (typed ? toToolError(thrown) : thrown)

/**
 * @internal Starts the tool on the form of the arguments it takes, and returns what it returned (not raced, not
 * mapped). May throw: plain JavaScript tools may do anything. The Worker uses it for calls it races against the
 * run's signal itself, once per batch (`src/worker/call-runner.ts`).
 */
export const startTool = (tool: Tool, args: CallArguments, context: ToolContext): unknown => {
  if (typeof args === "string") return tool.execute(args, context)
  if (typeof tool.executeParsed === "function") return tool.executeParsed(args.value, context)
  return tool.execute(args.text ?? JSON.stringify(args.value), context)
}

const dispatch = (registry: ToolRegistry, name: string, args: CallArguments, options: CallToolOptions | undefined): Promise<string> => {
  const entry = registry.entries.get(name)
  if (entry === undefined) return Promise.reject(new ToolNotFound({ toolName: name, message: `unknown tool "${name}"` }))
  const callId = options?.callId ?? `local_${++localCallCounter}`
  const signal = options?.signal
  if (options?.timeoutMs !== undefined || options?.observeOutput !== undefined || (signal === undefined && options?.maxOutputBytes !== undefined)) {
    return callGuarded(entry, callId, args, options as CallToolOptions)
  }
  if (signal === undefined) {
    // The hot path: no deadline, nothing to race — one promise from the tool, one to map its failure.
    try {
      const context = { callId, signal: NEVER_ABORTED, meta: entry.meta }
      if (isTypedTool(entry.tool)) {
        // Rendered here, in the one reaction that caps it.
        return Promise.resolve(startToolUnrendered(entry.tool, true, args, context)).then(
          (value: unknown) => {
            let text: string
            try {
              text = renderToolOutput(value)
            } catch (thrown) {
              return failed(entry, thrown)
            }
            return entry.limit(text)
          },
          (thrown: unknown) => failed(entry, toToolError(thrown))
        )
      }
      // Promise.resolve: a tool written in plain JavaScript may return a bare string (free for a native promise).
      return Promise.resolve(startTool(entry.tool, args, context)).then(entry.limit, (thrown: unknown) => failed(entry, thrown))
    } catch (thrown) {
      return failed(entry, thrown)
    }
  }
  return callWatched(entry, callId, args, signal, options?.maxOutputBytes)
}

/** A tool's failure as `ToolExecution`, capped at the tool's own limit or the default. */
const failed = (entry: ToolEntry, thrown: unknown): Promise<never> =>
  Promise.reject(executionError(entry.meta.name, thrown, entry.meta.maxOutputBytes ?? DEFAULT_TOOL_OUTPUT_BYTES))

/** The same variant with a capped message: the 50 MiB message of a failing tool is not kept anywhere. */
const capped = (error: ToolError, maxBytes: number): ToolError => {
  const message = limitOutput(error.message, maxBytes)
  if (message === error.message) return error
  return error._tag === "InvalidArgument"
    ? new InvalidArgument({ message })
    : error._tag === "Internal"
      ? new Internal({ message })
      : new ExecutionFailed({ message })
}

/** Whatever a tool failed with, as a `ToolExecution` whose message fits `maxBytes`. Never throws. */
export const executionError = (name: string, thrown: unknown, maxBytes: number = DEFAULT_TOOL_OUTPUT_BYTES): ToolExecution => {
  const error = capped(toToolError(thrown), maxBytes)
  return new ToolExecution({ toolName: name, error, message: error.message })
}

/** A tool's resolved value as capped text. `Tool` promises a string; plain JavaScript may resolve anything. */
export const outputText = (output: unknown, maxBytes: number): string =>
  limitOutput(typeof output === "string" ? output : describeThrown(output, Number.MAX_SAFE_INTEGER), maxBytes)

/** @internal The cap for one call: the tool's own, else the caller's, else the default. Throws `RangeError` for a bad cap. */
export const effectiveLimit = (meta: ToolMeta, requested: number | undefined): number =>
  meta.maxOutputBytes ?? (requested === undefined ? DEFAULT_TOOL_OUTPUT_BYTES : checkOutputLimit(requested, "maxOutputBytes"))

/** @internal A rejection from a tool passes through only if it is one of our call errors and small enough to keep. */
export const asCallError = (name: string, thrown: unknown, maxBytes: number): ToolCallError => {
  if (isToolCallError(thrown)) {
    try {
      // Read once, guarded: even a genuine instance may have had `message` redefined as a throwing getter.
      const message: unknown = thrown.message
      if (typeof message === "string" && limitOutput(message, maxBytes) === message) return thrown
    } catch {
      // described below like any other value
    }
  }
  return executionError(name, thrown, maxBytes)
}

/**
 * The call with an external signal and no deadline — every call a Worker makes. The tool gets the caller's own
 * signal (no controller, no listener of its own) and the call joins the one shared watcher of that signal, so
 * it costs a Set insertion and deletion rather than an EventTarget listener (see src/tool/abort-watch.ts). The
 * tool starts before the promise is built and the signal is checked again after: a tool that aborts it while
 * starting still ends the call as cancelled.
 */
const callWatched = (entry: ToolEntry, callId: string, args: CallArguments, signal: AbortSignal, requested: number | undefined): Promise<string> => {
  const name = entry.meta.name
  let maxBytes: number
  try {
    maxBytes = effectiveLimit(entry.meta, requested)
  } catch (thrown) {
    return Promise.reject(executionError(name, new Internal({ message: describeThrown(thrown) })))
  }
  if (signal.aborted) return Promise.reject(cancelledCall(name, signal.reason))
  const typed = isTypedTool(entry.tool)
  let running: Promise<unknown>
  try {
    const started = startToolUnrendered(entry.tool, typed, args, { callId, signal, meta: entry.meta })
    // Promise.resolve only for what is not a native promise: a tool written in plain JavaScript may return a bare string.
    running = started instanceof Promise ? started : Promise.resolve(started)
  } catch (thrown) {
    return Promise.reject(executionError(name, thrown, maxBytes))
  }
  if (signal.aborted) {
    // The tool aborted the signal while starting: what it settles with later is dropped, never unhandled.
    running.then(undefined, ignore)
    return Promise.reject(cancelledCall(name, signal.reason))
  }
  const promise = new Promise<string>(capture)
  new WatchedCall(name, typed, maxBytes, signal, capturedResolve as (output: string) => void, capturedReject as (error: unknown) => void).attach(running)
  return promise
}

/**
 * One `callWatched` call in flight: its own abort watch (no watch record, no closure for the abort), settled
 * by the first of the tool's settling and the signal's abort. After a cancel the tool may still settle: its
 * handlers find the call over, so a late rejection is no unhandled one.
 */
class WatchedCall implements AbortWatch {
  prev: AbortWatch | undefined = undefined
  next: AbortWatch | undefined = undefined
  list: WatchList | undefined = undefined
  readonly #name: string
  readonly #typed: boolean
  readonly #maxBytes: number
  readonly #signal: AbortSignal
  #resolve: ((output: string) => void) | undefined
  readonly #reject: (error: unknown) => void

  constructor(name: string, typed: boolean, maxBytes: number, signal: AbortSignal, resolve: (output: string) => void, reject: (error: unknown) => void) {
    this.#name = name
    this.#typed = typed
    this.#maxBytes = maxBytes
    this.#signal = signal
    this.#resolve = resolve
    this.#reject = reject
  }

  attach(running: Promise<unknown>): void {
    joinAbort(this.#signal, this)
    // Bound methods: two small objects, where two closures need a context as well (decision 0086).
    running.then(this.#fulfilled.bind(this), this.#rejected.bind(this))
  }

  #rejected(thrown: unknown): void {
    if (this.#resolve !== undefined) this.#fail(asCallError(this.#name, calledFailure(this.#typed, thrown), this.#maxBytes))
  }

  #fulfilled(output: unknown): void {
    const resolve = this.#resolve
    if (resolve === undefined) return
    let text: string
    try {
      text = outputText(calledOutput(this.#typed, output), this.#maxBytes)
    } catch (thrown) {
      this.#fail(asCallError(this.#name, thrown, this.#maxBytes))
      return
    }
    this.#resolve = undefined
    unwatchAbort(this)
    resolve(text)
  }

  #fail(error: unknown): void {
    if (this.#resolve === undefined) return
    this.#resolve = undefined
    unwatchAbort(this)
    this.#reject(error)
  }

  /** The signal aborted (called once by its watch list). */
  run(): void {
    this.#fail(cancelledCall(this.#name, this.#signal.reason))
  }
}

const ignore = (): void => undefined

/** `new Promise(capture)` leaves its resolving functions here: no executor closure per call on the signal path. */
let capturedResolve: ((output: string) => void) | undefined
let capturedReject: ((error: unknown) => void) | undefined
const capture = (resolve: (output: string) => void, reject: (error: unknown) => void): void => {
  capturedResolve = resolve
  capturedReject = reject
}

/** The caller's abort reason stays reachable as `cause` (the Worker's own `Cancelled`, or the application's value). */
const cancelledCall = (name: string, reason: unknown): ToolCancelled =>
  reason === undefined
    ? new ToolCancelled({ toolName: name, message: `call to "${name}" was cancelled` })
    : new ToolCancelled({ toolName: name, message: `call to "${name}" was cancelled`, cause: reason })

/**
 * The call with a deadline and/or an external signal: the tool is raced against both and never awaited past
 * them. Without a deadline the tool gets the caller's own signal (no controller, no listener of its own).
 */
const callGuarded = (entry: ToolEntry, callId: string, args: CallArguments, options: CallToolOptions): Promise<string> => {
  const name = entry.meta.name
  const outer = options.signal
  let maxBytes: number
  try {
    maxBytes = effectiveLimit(entry.meta, options.maxOutputBytes)
  } catch (thrown) {
    return Promise.reject(executionError(name, new Internal({ message: describeThrown(thrown) })))
  }
  const cancelled = (): ToolCancelled => cancelledCall(name, outer?.reason)
  if (outer?.aborted) return Promise.reject(cancelled())
  return new Promise<string>((resolve, reject) => {
    const timeoutMs = options.timeoutMs
    const controller = timeoutMs === undefined ? undefined : new AbortController()
    let timer: ReturnType<typeof setTimeout> | undefined
    let unwatch: (() => void) | undefined
    const finish = (): void => {
      unwatch?.()
      if (timer !== undefined) clearTimeout(timer)
    }
    if (outer !== undefined) {
      unwatch = whenAborted(outer, () => {
        finish()
        controller?.abort(outer.reason)
        reject(cancelled())
      })
    }
    if (controller !== undefined) {
      timer = setTimeout(() => {
        finish()
        const error = new ToolTimeout({ toolName: name, afterMs: timeoutMs ?? 0, message: `tool "${name}" timed out after ${timeoutMs} ms` })
        controller.abort(error)
        reject(error)
      }, timeoutMs)
    }
    const signal = controller?.signal ?? outer ?? NEVER_ABORTED
    let running: Promise<string>
    try {
      const context = { callId, signal, meta: entry.meta }
      if (options.observeOutput !== undefined) observeOutput(context, options.observeOutput)
      // Promise.resolve: a tool written in plain JavaScript may return a bare string.
      running = Promise.resolve(startTool(entry.tool, args, context)) as Promise<string>
    } catch (thrown) {
      finish()
      reject(executionError(name, thrown, maxBytes))
      return
    }
    // After a timeout or cancel the promise is already settled; a tool that ignored its signal and settles
    // late lands here harmlessly instead of as an unhandled rejection.
    running.then(
      (output: unknown) => {
        finish()
        resolve(outputText(output, maxBytes))
      },
      (thrown: unknown) => {
        finish()
        reject(asCallError(name, thrown, maxBytes))
      }
    )
  })
}

/**
 * Owns a name-sorted tool map. Hand out `handle()`s to share it; the Worker that owns the server registers
 * tools into it.
 *
 * @example
 * ```ts
 * const server = new ToolServer()
 * const worker = Worker.create({ client, toolServer: server }) // the worker registers, the server keeps
 * worker.registerTool(add)
 * const handle = server.handle()
 * console.log(handle.names(), await handle.callTool("add", '{"a":2,"b":3}', { timeoutMs: 1_000 })) // [ 'add' ] 5
 * ```
 */
export class ToolServer {
  private readonly root: ToolServerHandle

  constructor() {
    this.root = new ToolServerHandle(new ToolRegistry())
  }

  /** A new handle onto this server's tools (handles are cheap; clone freely). */
  handle(): ToolServerHandle {
    return this.root.clone()
  }
}
