import type { FunctionCallItem, Item } from "../llm/item.ts"
import { listBounded, quote } from "../schema/quote.ts"
import { limitOutput } from "../tool/output-limit.ts"
import { type ToolEntry, entryOf } from "../tool-server/tool-server.ts"
import { type Job, runJobs, soleCall } from "./call-runner.ts"
import type { ToolCall, ToolResult } from "./hooks.ts"
import { type ToolOutcome, cancelledOutcome, deniedOutcome, skippedOutcome } from "./tool-outcome.ts"
import type { WorkerCore } from "./worker-core.ts"
import { HookAborted, HookFailed, type WorkerError, cancelledBy } from "./worker-error.ts"
import { toWorkerError } from "./to-worker-error.ts"
import { describeSafely } from "./describe-safely.ts"
import { runToolPostHooks, runToolPreHooks } from "./tool-hooks.ts"
import { type PreparedArguments, prepareArguments } from "./prepared-arguments.ts"

/** A PreToolCall decision that outlives a pause: `resume()` honours it instead of asking the hooks again. */
export type PendingDecision =
  | { readonly kind: "run"; readonly arguments: string }
  | { readonly kind: "skip"; readonly reason: string }
  | { readonly kind: "deny"; readonly reason: string }

/**
 * The end of one batch. `outcomes` always holds one result per call, in model order, except when paused (then
 * nothing ran, and `decisions` holds what was decided before the pause). `error` ends the run after the
 * outcomes are recorded, so no call is ever left without a result.
 */
export type BatchEnd =
  | { readonly kind: "done"; readonly outcomes: ReadonlyArray<ToolOutcome>; readonly error?: WorkerError }
  | SoleEnd
  | { readonly kind: "paused"; readonly reason: string; readonly decisions: ReadonlyMap<string, PendingDecision> }

/**
 * The end of a batch of one call that ran on its own (`soleCall`): its one outcome, without an outcomes array
 * (the usual batch; the call in flight is its own end, decision 0086). `error` as for "done".
 */
export interface SoleEnd {
  readonly kind: "sole"
  readonly outcome: ToolOutcome
  readonly error: WorkerError | undefined
}


/**
 * Function calls in `history` that have no output yet, in history order. Each output answers one call: the
 * earliest unanswered call with its id before it. Ids the model sends are made unique before they enter history,
 * but a history set by the caller may still repeat one, and counting it answered twice would lose a call.
 */
export const unansweredCalls = (history: ReadonlyArray<Item>): Array<FunctionCallItem> => {
  const open = new Map<string, Array<FunctionCallItem>>()
  const order: Array<FunctionCallItem> = []
  for (const item of history) {
    if (item.type === "function_call") {
      const list = open.get(item.callId)
      if (list === undefined) open.set(item.callId, [item])
      else list.push(item)
      order.push(item)
    } else if (item.type === "function_call_output") {
      open.get(item.callId)?.shift()
    }
  }
  const left = new Set<FunctionCallItem>()
  for (const list of open.values()) for (const call of list) left.add(call)
  return order.filter((call) => left.has(call))
}

/** The model-facing error for a call of a tool this request did not offer: name and list both bounded. */
const unknownTool = (call: FunctionCallItem, offered: ReadonlySet<string>): ToolOutcome => ({
  callId: call.callId,
  name: call.name,
  status: "error",
  output: `Unknown tool ${quote(call.name)}. Available tools: ${listBounded([...offered], ", ", 20) || "(none)"}`,
  isError: true
})

/** The result of a call past `maxCallsPerResponse`: recorded (every call is answered) but never run. */
const overLimit = (call: FunctionCallItem, count: number, limit: number): ToolOutcome => ({
  callId: call.callId,
  name: call.name,
  status: "error",
  output: `Tool call not executed: the response made ${count} tool calls and at most ${limit} are executed per response`,
  isError: true
})

/**
 * One batch of tool calls: PreToolCall hooks one call at a time in model order, the allowed calls in parallel
 * (at most `maxParallelTools` at once), then PostToolCall hooks one result at a time in model order. Only tools
 * in `offered` — those the request that produced the calls offered the model — run; others are unknown tools,
 * even if registered since (another worker sharing the server may register tools mid-run). Calls past
 * `maxCallsPerResponse` get an error result without running.
 */
export const executeBatch = (
  core: WorkerCore,
  calls: ReadonlyArray<FunctionCallItem>,
  decided: ReadonlyMap<string, PendingDecision>,
  signal: AbortSignal,
  offered: ReadonlySet<string>
): Promise<BatchEnd> => settleBatch(core, calls, decided, signal, offered, theEnd)

/** How a batch's end is settled when its caller wants the end itself (`executeBatch`). */
const theEnd = (end: BatchEnd): BatchEnd => end

/** What a batch's end is handed to: the caller's handling of it (the turn loop records the results there). */
export type SettleBatch<R> = (end: BatchEnd, calls: ReadonlyArray<FunctionCallItem>) => R

/**
 * `executeBatch`, with the caller's handling of the end (`settle`: the turn loop records the results) run as part
 * of the batch: the promise resolves with what `settle` returns, or rejects with what it throws. A batch of one
 * call that runs on its own (`soleCall`) is settled from within the tool's reaction, so its caller awaits one
 * promise with no reaction or frame of its own in between (decision 0089); every other batch is settled in a
 * reaction on the batch's end. `settle` never runs inside the signal's `abort()`: a cancelled sole call is
 * settled a microtask after the abort, as an awaited end would be.
 */
export const settleBatch = <R>(
  core: WorkerCore,
  calls: ReadonlyArray<FunctionCallItem>,
  decided: ReadonlyMap<string, PendingDecision>,
  signal: AbortSignal,
  offered: ReadonlySet<string>,
  settle: SettleBatch<R>
): Promise<R> => {
  try {
    return directBatch(core, calls, decided, signal, offered, settle) ?? settledWith(executeWithHooks(core, calls, decided, signal, offered), calls, settle)
  } catch (thrown) {
    return Promise.reject(thrown)
  }
}

/** A batch's end handed to `settle`; no reaction when the caller wants the end itself. */
const settledWith = <R>(end: Promise<BatchEnd>, calls: ReadonlyArray<FunctionCallItem>, settle: SettleBatch<R>): Promise<R> =>
  (settle as unknown) === theEnd ? (end as unknown as Promise<R>) : end.then((ended) => settle(ended, calls))

/**
 * The batch when no hook can see it (none at PreToolCall or PostToolCall, no typed hook for any of its tools)
 * and nothing was decided before a pause: each call's arguments are prepared and the calls run, with nothing in
 * between — no decision records, no hook inputs, no async frame. Undefined when the batch needs the hooks' path.
 * Its results are those `executeWithHooks` gives the same batch (test/worker/direct-batch.property.test.ts).
 */
const directBatch = <R>(
  core: WorkerCore,
  calls: ReadonlyArray<FunctionCallItem>,
  decided: ReadonlyMap<string, PendingDecision>,
  signal: AbortSignal,
  offered: ReadonlySet<string>,
  settle: SettleBatch<R>
): Promise<R> | undefined => {
  const count = calls.length
  if (decided.size !== 0 || count > core.settings.maxCallsPerResponse || core.hooks.has("PreToolCall") || core.hooks.has("PostToolCall")) {
    return undefined
  }
  let fixed: Array<ToolOutcome | undefined> | undefined
  let jobs: Array<Job> | undefined
  for (let at = 0; at < count; at++) {
    const call = calls[at] as FunctionCallItem
    const entry = offered.has(call.name) ? entryOf(core.tools, call.name) : undefined
    if (entry !== undefined && !core.toolHooks.empty && (core.toolHooks.has("PreToolCall", call.name) || core.toolHooks.has("PostToolCall", call.name))) {
      return undefined
    }
    const args = entry === undefined ? undefined : prepareArguments(core, entry.meta.schema, call.arguments)
    // The usual batch: one call that parsed (no array, no job record).
    if (count === 1 && entry !== undefined && args?.ok === true) {
      const sole = soleCall(core, calls, entry, args.args, signal, settle)
      if (sole !== undefined) return sole
    }
    fixed ??= new Array<ToolOutcome | undefined>(count)
    jobs ??= []
    // Unknown tools skip the hooks, as on the general path: there is no meta or instance to show them.
    if (entry === undefined || args === undefined) fixed[at] = unknownTool(call, offered)
    else jobs.push({ at, call, meta: entry.meta, tool: entry.tool, args })
  }
  return settledWith(runJobs(core, calls, jobs ?? [], fixed ?? [], signal), calls, settle)
}

/**
 * The general batch: hooks, decisions kept over a pause, calls past the limit. @internal Exported for the
 * property test that holds `directBatch` to it (test/worker/direct-batch.property.test.ts).
 */
export const executeWithHooks = async (
  core: WorkerCore,
  calls: ReadonlyArray<FunctionCallItem>,
  decided: ReadonlyMap<string, PendingDecision>,
  signal: AbortSignal,
  offered: ReadonlySet<string>
): Promise<BatchEnd> => {
  // Per call, by position in the batch (plain arrays: this runs for every tool call, and a batch is usually one).
  const count = calls.length
  const decisions = new Array<PendingDecision | undefined>(count)
  const prepared = new Array<{ readonly entry: ToolEntry; readonly args: PreparedArguments } | undefined>(count)
  const fixed = new Array<ToolOutcome | undefined>(count)
  const failAll = (error: WorkerError, reason: string): BatchEnd => ({
    kind: "done",
    outcomes: calls.map((call, at) => fixed[at] ?? synthetic(call, decisions[at], reason)),
    error
  })

  const lookup = (name: string): ToolEntry | undefined => (offered.has(name) ? entryOf(core.tools, name) : undefined)
  const limit = core.settings.maxCallsPerResponse
  if (count > limit) {
    core.hub.emit({
      type: "warning",
      message: `the model made ${count} tool calls in one response; calls after the first ${limit} get an error result (maxCallsPerResponse)`
    })
  }

  for (let at = 0; at < count; at++) {
    const call = calls[at] as FunctionCallItem
    if (at >= limit) {
      fixed[at] = overLimit(call, count, limit)
      continue
    }
    const previous = decided.size === 0 ? undefined : decided.get(call.callId)
    if (previous !== undefined) {
      decisions[at] = previous
      continue
    }
    const entry = lookup(call.name)
    if (entry === undefined) {
      // Unknown tools skip the hooks: there is no meta or instance to show them.
      fixed[at] = unknownTool(call, offered)
      continue
    }
    // Checked and parsed once, here, before the hooks: a hook may be handed the parsed value, and without a
    // rewrite the tool gets this same value (no second parse anywhere on the way).
    let args = prepareArguments(core, entry.meta.schema, call.arguments)
    let verdict
    if (core.hooks.has("PreToolCall") || core.toolHooks.has("PreToolCall", call.name)) {
      const editable: ToolCall = { callId: call.callId, name: call.name, arguments: call.arguments }
      try {
        verdict = await core.hooks.run("PreToolCall", () => ({ call: editable, meta: entry.meta, tool: entry.tool }), signal, (r) => {
          if (r._tag !== "RewriteArguments") return "stop"
          editable.arguments = r.arguments
          return "next"
        })
        let edited = editedArguments(editable)
        if (verdict === undefined || verdict._tag === "RewriteArguments" || verdict._tag === "Continue") {
          const typed = await runToolPreHooks(core, entry, call, edited, signal)
          edited = typed.arguments
          verdict = typed.verdict ?? verdict
        }
        if (edited !== args.text) args = prepareArguments(core, entry.meta.schema, edited)
      } catch (thrown) {
        const error = toWorkerError(thrown)
        return failAll(error, error.message)
      }
    }
    prepared[at] = { entry, args }
    if (verdict === undefined || verdict._tag === "RewriteArguments" || verdict._tag === "Continue") {
      decisions[at] = { kind: "run", arguments: args.text }
    } else if (verdict._tag === "Skip") {
      decisions[at] = { kind: "skip", reason: verdict.reason }
    } else if (verdict._tag === "Deny") {
      decisions[at] = { kind: "deny", reason: verdict.reason }
    } else if (verdict._tag === "Pause") {
      const kept = new Map(decided)
      decisions.forEach((decision, i) => {
        if (decision !== undefined) kept.set((calls[i] as FunctionCallItem).callId, decision)
      })
      return { kind: "paused", reason: verdict.reason, decisions: kept }
    } else {
      const reason = `aborted by a PreToolCall hook: ${verdict.reason}`
      return failAll(new HookAborted({ point: "PreToolCall", reason: verdict.reason, message: reason }), reason)
    }
  }

  const toRun: Array<Job> = []
  // The values typed tools returned, by position, for the calls whose tool has typed PostToolCall hooks.
  const values = new Map<number, unknown>()
  for (let at = 0; at < count; at++) {
    const decision = decisions[at]
    if (decision === undefined) continue
    const call = calls[at] as FunctionCallItem
    if (decision.kind !== "run") {
      fixed[at] = synthetic(call, decision, "")
      continue
    }
    const entry = lookup(call.name)
    if (entry === undefined) {
      fixed[at] = unknownTool(call, offered)
      continue
    }
    // Prepared again when the tool was replaced while hooks ran, or the decision was taken before a pause (resume
    // kept only its text).
    const ready = prepared[at]
    const args = ready !== undefined && ready.entry === entry ? ready.args : prepareArguments(core, entry.meta.schema, decision.arguments)
    const observe = core.toolHooks.has("PostToolCall", call.name) && core.toolHooks.for("PostToolCall", call.name, entry.tool).length > 0
      ? (value: unknown): void => void values.set(at, value)
      : undefined
    toRun.push({ at, call, meta: entry.meta, tool: entry.tool, args, ...(observe === undefined ? {} : { observe }) })
  }

  const ran = await runJobs(core, calls, toRun, fixed, signal)
  if (ran.kind === "done" && ran.error !== undefined) return ran
  if (signal.aborted) return failAll(cancelledBy(signal), "Cancelled")

  // Typed PostToolCall hooks first (they see the handler's value), then the plain ones (they see the text).
  for (const job of values.size === 0 ? [] : toRun) {
    const outcome = fixed[job.at] as ToolOutcome
    if (outcome.status !== "ok" || !values.has(job.at)) continue
    let typed
    try {
      typed = await runToolPostHooks(core, { meta: job.meta, tool: job.tool, arguments: job.args.text }, job.call, values.get(job.at), signal)
    } catch (thrown) {
      const error = toWorkerError(thrown)
      return failAll(error, error.message)
    }
    if (typed.output !== undefined) {
      fixed[job.at] = rewritten(outcome, { status: outcome.status, output: typed.output, isError: false }, job.meta.maxOutputBytes ?? core.settings.maxToolOutputBytes)
    }
    if (typed.abort !== undefined) {
      const reason = `aborted by a PostToolCall hook for tool ${quote(job.call.name)}: ${typed.abort.reason}`
      return failAll(new HookAborted({ point: "PostToolCall", reason: typed.abort.reason, message: reason }), reason)
    }
  }

  // Without PostToolCall hooks every outcome stands as it is: its output is already capped, its status set.
  for (const job of core.hooks.has("PostToolCall") ? toRun : []) {
    const outcome = fixed[job.at] as ToolOutcome
    const result: ToolResult = { status: outcome.status, output: outcome.output, isError: outcome.isError }
    const editable: ToolCall = { callId: job.call.callId, name: job.call.name, arguments: job.args.text }
    const cap = job.meta.maxOutputBytes ?? core.settings.maxToolOutputBytes
    let verdict
    try {
      verdict = await core.hooks.run("PostToolCall", () => ({ call: editable, result, meta: job.meta, tool: job.tool }), signal, (r) => {
        if (r._tag !== "RewriteResult") return "stop"
        result.output = r.output
        if (r.isError !== undefined) result.isError = r.isError
        return "next"
      })
    } catch (thrown) {
      fixed[job.at] = rewrittenGuarded(outcome, result, cap)
      const error = toWorkerError(thrown)
      return failAll(error, error.message)
    }
    try {
      fixed[job.at] = rewrittenGuarded(outcome, result, cap, true)
    } catch (thrown) {
      fixed[job.at] = outcome
      const error = toWorkerError(thrown)
      return failAll(error, error.message)
    }
    if (verdict?._tag === "Abort") {
      const reason = `aborted by a PostToolCall hook: ${verdict.reason}`
      return failAll(new HookAborted({ point: "PostToolCall", reason: verdict.reason, message: reason }), reason)
    }
  }
  return { kind: "done", outcomes: fixed as Array<ToolOutcome> }
}

/** A PreToolCall hook may edit `call.arguments` in place; what it left there must still be argument text. */
const editedArguments = (editable: ToolCall): string => {
  let value: unknown
  try {
    value = editable.arguments
  } catch (thrown) {
    throw new HookFailed({ point: "PreToolCall", message: `PreToolCall hook left unreadable arguments: ${describeSafely(thrown)}`, cause: thrown })
  }
  if (typeof value !== "string") {
    throw new HookFailed({ point: "PreToolCall", message: `PreToolCall hook set call.arguments to a ${typeof value}, not a string`, cause: value })
  }
  return value
}

/**
 * `rewritten` for what PostToolCall hooks edited in place: an output that is not a string (or a field that cannot
 * be read) is the hook's failure when `strict`, else (the run is failing anyway) the tool's own outcome stands.
 */
const rewrittenGuarded = (outcome: ToolOutcome, result: ToolResult, maxOutputBytes: number, strict = false): ToolOutcome => {
  let output: unknown
  let isError: unknown
  try {
    output = result.output
    isError = result.isError
  } catch (thrown) {
    if (!strict) return outcome
    throw new HookFailed({ point: "PostToolCall", message: `PostToolCall hook left an unreadable result: ${describeSafely(thrown)}`, cause: thrown })
  }
  if (typeof output !== "string") {
    if (!strict) return outcome
    throw new HookFailed({ point: "PostToolCall", message: `PostToolCall hook set result.output to a ${typeof output}, not a string`, cause: output })
  }
  return rewritten(outcome, { status: result.status, output, isError: Boolean(isError) }, maxOutputBytes)
}

/**
 * An outcome after PostToolCall hooks: their output and error flag, with the status following the flag (an "ok"
 * result a hook marks as an error becomes "error", and back); timeout, cancelled and the rest stay as they were.
 */
const rewritten = (outcome: ToolOutcome, result: ToolResult, maxOutputBytes: number): ToolOutcome => {
  const isError = Boolean(result.isError)
  const status = isError && outcome.status === "ok" ? "error" : !isError && outcome.status === "error" ? "ok" : outcome.status
  // Hooks may lengthen a result: the cap holds for what is finally sent and kept.
  return { ...outcome, status, output: limitOutput(String(result.output), maxOutputBytes), isError }
}

/** The result of a call that did not (or will no longer) run. */
const synthetic = (call: FunctionCallItem, decision: PendingDecision | undefined, reason: string): ToolOutcome => {
  if (decision?.kind === "skip") return skippedOutcome(call.callId, call.name, decision.reason)
  if (decision?.kind === "deny") return deniedOutcome(call.callId, call.name, decision.reason)
  return cancelledOutcome(call.callId, call.name, reason)
}

