import type { FunctionCallItem } from "../llm/item.ts"
import { anchorShapes } from "../llm/shape-anchor.ts"
import { NO_TOOL_TRACE, type ToolTrace } from "../telemetry/worker-tracing.ts"
import { type AbortWatch, type WatchList, joinAbort, unwatchAbort, watchAbort } from "../tool/abort-watch.ts"
import { executeParsedUnrendered, isTypedTool } from "../tool/define-tool.ts"
import { limitOutput } from "../tool/output-limit.ts"
import { describeThrown } from "../tool/tool-constructors.ts"
import type { ToolMeta } from "../tool/tool-meta.ts"
import type { Tool } from "../tool/tool.ts"
import {
  type CallArguments,
  type CallToolOptions,
  type ToolEntry,
  asCallError,
  calledFailure,
  calledOutput,
  callToolParsed,
  effectiveLimit,
  entryOf,
  executionError,
  outputText,
  startTool
} from "../tool-server/tool-server.ts"
import { describeSafely } from "./describe-safely.ts"
import type { PreparedArguments } from "./prepared-arguments.ts"
import type { BatchEnd, SettleBatch, SoleEnd } from "./tool-execution.ts"
import { type ToolOutcome, cancelledOutcome } from "./tool-outcome.ts"
import type { WorkerCore } from "./worker-core.ts"
import { type WorkerError, cancelledBy } from "./worker-error.ts"

/**
 * Running a batch's calls against the run's signal, once the hooks (if any) have decided which run: the
 * batch watches the signal once, each call attaches its two handlers to the tool's promise, and every call
 * ends with exactly one result. `settleBatch` (tool-execution.ts) decides; this module runs.
 */

/** A call to run, at its position in the batch. `observe` receives a typed tool's return value for typed PostToolCall hooks. */
export interface Job {
  readonly at: number
  readonly call: FunctionCallItem
  readonly meta: ToolMeta
  readonly tool: Tool
  readonly args: PreparedArguments
  readonly observe?: (value: unknown) => void
}

/**
 * The end of a batch whose calls all have a result: `error` is the run's cancellation when its signal has
 * aborted by now (the outcomes stand; the run ends after they are recorded).
 */
const batchEnd = (calls: ReadonlyArray<FunctionCallItem>, fixed: Array<ToolOutcome | undefined>, signal: AbortSignal): BatchEnd => {
  for (let at = 0; at < fixed.length; at++) {
    if (fixed[at] === undefined) {
      const call = calls[at] as FunctionCallItem
      fixed[at] = cancelledOutcome(call.callId, call.name, "Cancelled")
    }
  }
  const outcomes = fixed as Array<ToolOutcome>
  return signal.aborted ? { kind: "done", outcomes, error: cancelledBy(signal) } : { kind: "done", outcomes }
}

/** The result of a call the run's cancellation stopped, or did not let start. */
const cancelledCall = (call: FunctionCallItem): ToolOutcome => cancelledOutcome(call.callId, call.name, "the run was cancelled")

/**
 * Runs the jobs, at most `maxParallelTools` at once, and resolves once every one has its result in `fixed` (at
 * its position; the other positions are filled already). The batch watches the run's signal once, whatever its
 * number of calls: when the signal aborts, every call still running (or not started) gets the cancelled result
 * at once and the batch ends; a tool that ignores its signal is not waited for, and what it settles with later is
 * dropped. Never rejects: whatever goes wrong in one call is that call's result.
 */
export const runJobs = (
  core: WorkerCore,
  calls: ReadonlyArray<FunctionCallItem>,
  jobs: ReadonlyArray<Job>,
  fixed: Array<ToolOutcome | undefined>,
  signal: AbortSignal
): Promise<BatchEnd> => {
  if (jobs.length === 0 || signal.aborted) {
    for (const job of jobs) fixed[job.at] = cancelledCall(job.call)
    return Promise.resolve(batchEnd(calls, fixed, signal))
  }
  return new Promise<BatchEnd>((resolve) => new BatchRun(core, calls, jobs, fixed, signal, resolve).start())
}

/** Shared by every call that starts without failing: what the tracing seam's `within` is handed back. */
const STARTED: Promise<void> = Promise.resolve()

/**
 * One batch's calls in flight. A class, so a batch allocates one object and its per-call work is a few field
 * writes: each call joins no listener and builds no promise of its own, it only attaches its two handlers to
 * the tool's promise.
 */
class BatchRun {
  readonly #core: WorkerCore
  readonly #calls: ReadonlyArray<FunctionCallItem>
  readonly #jobs: ReadonlyArray<Job>
  readonly #fixed: Array<ToolOutcome | undefined>
  readonly #signal: AbortSignal
  readonly #resolve: (end: BatchEnd) => void
  /** Each started call's span; ended exactly once, with the call's result. */
  readonly #traces: Array<ToolTrace | undefined>
  #watch: AbortWatch | undefined
  /** Next job to start, jobs running, jobs without a result. */
  #next = 0
  #running = 0
  #left: number
  /** Set once the batch has resolved (all results in, or cancelled): nothing is recorded after. */
  #over = false
  #pumping = false
  /** What a call's start produced synchronously (a refusal, a throw), recorded after the tracing context is left. */
  #early: ToolOutcome | undefined

  constructor(
    core: WorkerCore,
    calls: ReadonlyArray<FunctionCallItem>,
    jobs: ReadonlyArray<Job>,
    fixed: Array<ToolOutcome | undefined>,
    signal: AbortSignal,
    resolve: (end: BatchEnd) => void
  ) {
    this.#core = core
    this.#calls = calls
    this.#jobs = jobs
    this.#fixed = fixed
    this.#signal = signal
    this.#resolve = resolve
    this.#traces = new Array<ToolTrace | undefined>(jobs.length)
    this.#left = jobs.length
  }

  start(): void {
    // Before any tool starts: a tool that aborts the run's signal while starting cancels the batch.
    this.#watch = watchAbort(this.#signal, this.#cancel)
    this.#pump()
  }

  /** Starts calls while lanes are free. A loop, not recursion: thousands of calls may settle synchronously. */
  #pump(): void {
    if (this.#pumping) return
    this.#pumping = true
    const limit = this.#core.settings.maxParallelTools
    while (!this.#over && this.#running < limit && this.#next < this.#jobs.length) this.#startNext()
    this.#pumping = false
  }

  #startNext(): void {
    const i = this.#next++
    const job = this.#jobs[i] as Job
    this.#running++
    this.#early = undefined
    try {
      const trace = this.#core.trace.tool({ callId: job.call.callId, name: job.call.name, arguments: job.args.text })
      this.#traces[i] = trace
      const args = job.args
      if (args.ok) trace.within(() => this.#launch(i, job, args.args))
      else this.#early = invalidArguments(job.call, args.problem)
    } catch (thrown) {
      this.#early = crashedOutcome(job.call, thrown)
    }
    if (this.#early !== undefined) this.#settle(i, this.#early)
  }

  /** Starts one call's tool (inside its span's context) and attaches its handlers; a synchronous end goes to `#early`. */
  #launch(i: number, job: Job, args: CallArguments & object): Promise<void> {
    const { call, meta } = job
    const core = this.#core
    const settings = core.settings
    const signal = this.#signal
    const timeoutMs = deadlineOf(settings, call.name)
    const entry = entryOf(core.tools, call.name)
    let maxBytes: number | undefined
    if (entry !== undefined && timeoutMs === undefined && job.observe === undefined) {
      try {
        maxBytes = effectiveLimit(entry.meta, settings.maxToolOutputBytes)
      } catch {
        // a cap the tool server refuses: its own call below reports it
      }
    }
    if (entry === undefined || maxBytes === undefined) {
      // A deadline (a timer per call), an output observer for typed hooks, or a tool replaced or removed since
      // the batch was prepared: the tool server's own call, which knows all of these.
      const base: CallToolOptions =
        timeoutMs === undefined
          ? { callId: call.callId, signal, maxOutputBytes: settings.maxToolOutputBytes }
          : { callId: call.callId, signal, maxOutputBytes: settings.maxToolOutputBytes, timeoutMs }
      const options: CallToolOptions = job.observe === undefined ? base : { ...base, observeOutput: job.observe }
      callToolParsed(core.tools, call.name, args, options).then(
        (output) => this.#settle(i, okOutcome(call, String(output))),
        (thrown: unknown) => this.#settle(i, failedSafely(call, meta, settings.maxToolOutputBytes, thrown))
      )
      return STARTED
    }
    // The tool server's signal path without its per-call race: this batch watches the signal for every call.
    const typed = isTypedTool(entry.tool)
    let running: Promise<unknown>
    try {
      // Promise.resolve: a tool written in plain JavaScript may return a bare string.
      const context = { callId: call.callId, signal, meta: entry.meta }
      running = typed ? executeParsedUnrendered(entry.tool, args, context) : Promise.resolve(startTool(entry.tool, args, context))
    } catch (thrown) {
      this.#early = failedSafely(call, meta, settings.maxToolOutputBytes, executionError(call.name, thrown, maxBytes))
      return STARTED
    }
    const cap = maxBytes
    running.then(
      (output: unknown) => this.#settle(i, calledOutcome(call, meta, settings.maxToolOutputBytes, typed, output, cap)),
      (thrown: unknown) =>
        this.#settle(i, failedSafely(call, meta, settings.maxToolOutputBytes, asCallError(call.name, calledFailure(typed, thrown), cap)))
    )
    return STARTED
  }

  /** Records call `i`'s result (once), ends its span, and starts the next call or ends the batch. */
  #settle(i: number, outcome: ToolOutcome): void {
    if (this.#over) return
    const at = (this.#jobs[i] as Job).at
    if (this.#fixed[at] !== undefined) return
    this.#fixed[at] = outcome
    endTrace(this.#traces[i], outcome)
    this.#running--
    if (--this.#left === 0) {
      this.#over = true
      unwatchAbort(this.#watch as AbortWatch)
      this.#resolve(batchEnd(this.#calls, this.#fixed, this.#signal))
    } else {
      this.#pump()
    }
  }

  /** The run's signal aborted: every call without a result is cancelled now, and the batch ends. */
  readonly #cancel = (): void => {
    if (this.#over) return
    this.#over = true
    const jobs = this.#jobs
    for (let i = 0; i < jobs.length; i++) {
      const job = jobs[i] as Job
      if (this.#fixed[job.at] !== undefined) continue
      const outcome = cancelledCall(job.call)
      this.#fixed[job.at] = outcome
      endTrace(this.#traces[i], outcome)
    }
    this.#resolve(batchEnd(this.#calls, this.#fixed, this.#signal))
  }
}

/** Ends a call's span; a tracer that throws must not take the call's result (or the run) with it. */
const endTrace = (trace: ToolTrace | undefined, outcome: ToolOutcome): void => {
  try {
    trace?.ended(outcome)
  } catch {
    // telemetry is best effort
  }
}

/** What a started call resolved with, as its result: the tool's text capped, or the failure rendering it raised. */
const calledOutcome = (call: FunctionCallItem, meta: ToolMeta, maxToolOutputBytes: number, typed: boolean, output: unknown, maxBytes: number): ToolOutcome => {
  let text: string
  try {
    text = outputText(calledOutput(typed, output), maxBytes)
  } catch (thrown) {
    return failedSafely(call, meta, maxToolOutputBytes, asCallError(call.name, thrown, maxBytes))
  }
  return okOutcome(call, text)
}

const okOutcome = (call: FunctionCallItem, output: string): ToolOutcome => ({ callId: call.callId, name: call.name, status: "ok", output, isError: false })

const invalidArguments = (call: FunctionCallItem, problem: string): ToolOutcome => ({
  callId: call.callId,
  name: call.name,
  status: "error",
  output: `Invalid arguments for tool "${call.name}": ${problem}`,
  isError: true
})

/** A failed call's result; describing a hostile thrown value may itself throw, and that is the call's crash. */
const failedSafely = (call: FunctionCallItem, meta: ToolMeta, maxToolOutputBytes: number, thrown: unknown): ToolOutcome => {
  try {
    return failedOutcome(call, meta, maxToolOutputBytes, thrown)
  } catch (crash) {
    return crashedOutcome(call, crash)
  }
}

const failedOutcome = (call: FunctionCallItem, meta: ToolMeta, maxToolOutputBytes: number, thrown: unknown): ToolOutcome => {
  const tag = (thrown as { _tag?: string })._tag
  const message = limitOutput(describeThrown(thrown, Number.MAX_SAFE_INTEGER), meta.maxOutputBytes ?? maxToolOutputBytes)
  if (tag === "ToolTimeout") return { callId: call.callId, name: call.name, status: "timeout", output: message, isError: true }
  if (tag === "ToolCancelled") return cancelledCall(call)
  return { callId: call.callId, name: call.name, status: "error", output: message, isError: true }
}

/** `new Promise(capture)` leaves the promise's resolving functions here, so no executor closure is made per call. */
let capturedResolve: ((value: unknown) => void) | undefined
let capturedReject: ((error: unknown) => void) | undefined
const capture = (resolve: (value: unknown) => void, reject: (error: unknown) => void): void => {
  capturedResolve = resolve
  capturedReject = reject
}

/**
 * The usual batch — one call, no hook, no deadline, arguments that parsed — without the batch machinery: what
 * `runJobs` does for one job, its end handed to `settle` as soon as the call ends (`settleBatch`). Undefined when
 * the call needs more (a deadline, a cap the tool server refuses, a run already cancelled): then `runJobs` runs it.
 */
export const soleCall = <R>(
  core: WorkerCore,
  calls: ReadonlyArray<FunctionCallItem>,
  entry: ToolEntry,
  args: CallArguments & object,
  signal: AbortSignal,
  settle: SettleBatch<R>
): Promise<R> | undefined => {
  const settings = core.settings
  const call = calls[0] as FunctionCallItem
  if (signal.aborted || deadlineOf(settings, call.name) !== undefined) return undefined
  let maxBytes: number
  try {
    maxBytes = effectiveLimit(entry.meta, settings.maxToolOutputBytes)
  } catch {
    return undefined
  }
  const promise = new Promise<R>(capture as (resolve: (value: R) => void, reject: (error: unknown) => void) => void)
  new SoleCall(core, calls, entry, maxBytes, signal, settle, capturedResolve as (value: unknown) => void, capturedReject as (error: unknown) => void).start(args)
  return promise
}

/** A sole call's outcome until it has one: the call is over once its outcome is another. */
const UNSET: ToolOutcome = Object.freeze({ callId: "", name: "", status: "error", output: "", isError: true })

/**
 * One sole call in flight, and then its batch's end. A class that is its own abort watch and its own `SoleEnd`:
 * the call allocates this object, the tool's context and the two handlers on the tool's promise — no watch
 * record, no closure for the abort or the span, no end record or outcomes array (decision 0086). The first of
 * the tool's settling and the run's abort ends it; the other finds it over. Its end goes to `settle` at once
 * from the tool's reaction — the turn loop records the result there, with no await of the batch in between
 * (decision 0089) — and a microtask after an abort, never inside the signal's `abort()`.
 */
class SoleCall<R> implements AbortWatch, SoleEnd {
  prev: AbortWatch | undefined = undefined
  next: AbortWatch | undefined = undefined
  list: WatchList | undefined = undefined
  readonly kind = "sole"
  /** Set once, when the call ends (before its end is settled); `UNSET` while the call runs. */
  outcome: ToolOutcome = UNSET
  /** The run's cancellation, when its signal ended the call (the outcome stands; the run ends after recording it). */
  error: WorkerError | undefined = undefined
  readonly #core: WorkerCore
  readonly #calls: ReadonlyArray<FunctionCallItem>
  readonly #entry: ToolEntry
  readonly #maxBytes: number
  readonly #signal: AbortSignal
  readonly #settle: SettleBatch<R>
  readonly #resolve: (value: unknown) => void
  readonly #reject: (error: unknown) => void
  #trace: ToolTrace | undefined = undefined
  #typed = false

  constructor(
    core: WorkerCore,
    calls: ReadonlyArray<FunctionCallItem>,
    entry: ToolEntry,
    maxBytes: number,
    signal: AbortSignal,
    settle: SettleBatch<R>,
    resolve: (value: unknown) => void,
    reject: (error: unknown) => void
  ) {
    this.#core = core
    this.#calls = calls
    this.#entry = entry
    this.#maxBytes = maxBytes
    this.#signal = signal
    this.#settle = settle
    this.#resolve = resolve
    this.#reject = reject
  }

  get #call(): FunctionCallItem {
    return this.#calls[0] as FunctionCallItem
  }

  start(args: CallArguments & object): void {
    // Before the tool starts: a tool that aborts the run's signal while starting cancels the call.
    joinAbort(this.#signal, this)
    let early: ToolOutcome | undefined
    try {
      // The call item spells what the span records: no hook rewrote its arguments.
      const trace = this.#core.trace.tool(this.#call)
      this.#trace = trace
      early = trace === NO_TOOL_TRACE ? this.#launch(args) : launchWithin(trace, this, args)
    } catch (thrown) {
      early = crashedOutcome(this.#call, thrown)
    }
    if (early !== undefined && this.#end(early)) this.#settled()
  }

  /** Starts the tool and attaches its handlers; the outcome of a synchronous failure, else undefined. */
  #launch(args: CallArguments & object): ToolOutcome | undefined {
    const call = this.#call
    const entry = this.#entry
    const meta = entry.meta
    const typed = isTypedTool(entry.tool)
    this.#typed = typed
    let running: Promise<unknown>
    try {
      const context = { callId: call.callId, signal: this.#signal, meta }
      if (typed) {
        // The typed tool's one entry for a parsed call: check, handler, its value unrendered (decision 0089).
        running = executeParsedUnrendered(entry.tool, args, context)
      } else {
        const started = startTool(entry.tool, args, context)
        // Promise.resolve only for what is not a native promise: a tool written in plain JavaScript may return a bare string.
        running = started instanceof Promise ? started : Promise.resolve(started)
      }
    } catch (thrown) {
      return failedSafely(call, meta, this.#core.settings.maxToolOutputBytes, executionError(call.name, thrown, this.#maxBytes))
    }
    // Bound methods: two small objects, where two closures need a context as well (decision 0086).
    running.then(this.#fulfilled.bind(this), this.#rejected.bind(this))
    return undefined
  }

  #fulfilled(output: unknown): void {
    if (this.outcome !== UNSET) return
    const outcome = calledOutcome(this.#call, this.#entry.meta, this.#core.settings.maxToolOutputBytes, this.#typed, output, this.#maxBytes)
    if (this.#end(outcome)) this.#settled()
  }

  #rejected(thrown: unknown): void {
    if (this.outcome !== UNSET) return
    const call = this.#call
    const outcome = failedSafely(call, this.#entry.meta, this.#core.settings.maxToolOutputBytes, asCallError(call.name, calledFailure(this.#typed, thrown), this.#maxBytes))
    if (this.#end(outcome)) this.#settled()
  }

  /**
   * The run's signal aborted (called by the signal's watch list, once). The only way a call ends while the signal
   * is aborted: the abort runs every joined watch at once, and this call joined before its tool started, so a
   * tool's settling (a microtask later) or a synchronous failure of its start finds the call over by then. The
   * end is settled a microtask later, outside the caller's `abort()`: what `settle` does (the turn loop records
   * the result and tells subscribers) must not run inside `worker.cancel()`.
   */
  run(): void {
    if (this.outcome !== UNSET) return
    this.error = cancelledBy(this.#signal)
    if (this.#end(cancelledCall(this.#call))) queueMicrotask(this.#settled.bind(this))
  }

  static launch(sole: SoleCall<unknown>, args: CallArguments & object): ToolOutcome | undefined {
    return sole.#launch(args)
  }

  /** Ends the call with `outcome` (once: false when it was over already) and its span. */
  #end(outcome: ToolOutcome): boolean {
    if (this.outcome !== UNSET) return false
    this.outcome = outcome
    unwatchAbort(this)
    // The untraced worker's span is the no-op one: nothing to end.
    const trace = this.#trace
    if (trace !== NO_TOOL_TRACE) endTrace(trace, outcome)
    return true
  }

  /** Hands the ended call, as its batch's end, to `settle`; the batch's promise follows what that does. */
  #settled(): void {
    let settled: R
    try {
      settled = this.#settle(this, this.#calls)
    } catch (thrown) {
      this.#reject(thrown)
      return
    }
    this.#resolve(settled)
  }
}

// A sole call dies with its batch; without a live instance a full collection frees its shapes and throws away the
// optimised abort-watch and batch code that checks for them (decision 0080).
anchorShapes(new SoleCall(undefined as never, undefined as never, undefined as never, 0, undefined as never, () => undefined, () => undefined, () => undefined))

/** A traced sole call: its tool starts inside the span's context, so spans the tool starts are its children. */
const launchWithin = (trace: ToolTrace, sole: SoleCall<unknown>, args: CallArguments & object): ToolOutcome | undefined => {
  let early: ToolOutcome | undefined
  void trace.within(() => {
    early = SoleCall.launch(sole, args)
    return STARTED
  })
  return early
}

/** A call's deadline: its tool's own (own keys only, so a tool named "constructor" finds none on Object.prototype), else the worker's. */
const deadlineOf = (settings: WorkerCore["settings"], name: string): number | undefined =>
  Object.hasOwn(settings.toolTimeouts, name) ? settings.toolTimeouts[name] : settings.toolTimeoutMs


const crashedOutcome = (call: FunctionCallItem, thrown: unknown): ToolOutcome => ({
  callId: call.callId,
  name: call.name,
  status: "error",
  output: `Tool "${call.name}" failed: ${describeSafely(thrown)}`,
  isError: true
})

