import type { Usage } from "../llm/event.ts"
import { sumUsage } from "../llm/usage.ts"
import type { FunctionCallItem, Item } from "../llm/item.ts"
import type { Request, ToolSpec } from "../llm/request.ts"
import type { CacheReport } from "./cache-lock.ts"
import type { RunControl } from "./cancellation.ts"
import type { RequestContext } from "./hooks.ts"
import { RequestSignals, streamResponse } from "./response-stream.ts"
import { toWorkerError } from "./to-worker-error.ts"
import { type BatchEnd, settleBatch, unansweredCalls } from "./tool-execution.ts"
import { ownedOutputItem } from "./tool-outcome.ts"
import type { WorkerCore } from "./worker-core.ts"
import { CacheLockViolation, Cancelled, HookAborted, HookFailed, MaxTurnsExceeded, type WorkerError, WorkerDefect } from "./worker-error.ts"
import { describeSafely } from "./describe-safely.ts"
import { ownItem, ownItems } from "./owned-items.ts"

/** What every run that did not fail reports. */
export interface RunReport {
  /** The items this run appended to the history, in order. */
  readonly items: ReadonlyArray<Item>
  /**
   * Token usage summed over this run's requests (`sumUsage`: `totalTokens` stays input + output). The providers'
   * raw usage objects are per response: subscribers' `usage` events and OnStreamComplete carry them.
   */
  readonly usage: Usage
  /** One report per request of this run. */
  readonly cache: ReadonlyArray<CacheReport>
  /** Non-fatal problems, e.g. a cache-lock violation with `onViolation: "warn"`. */
  readonly warnings: ReadonlyArray<string>
}

/** A finished run, or a paused one with the hook's reason (narrow on `status`). */
export type RunResult =
  | (RunReport & { readonly status: "finished" })
  | (RunReport & { readonly status: "paused"; readonly pauseReason: string })

class Paused {
  constructor(readonly reason: string) {}
}

/**
 * One run, as in the spec's "A turn": prompt hooks, pending calls left by a pause, then request → stream →
 * tools until the model stops calling tools and the OnTurnEnd hooks let the run finish or pause. Failures are
 * mapped onto `WorkerError`, OnAbort hears about every one of them, and subscribers see them.
 */
export const runTurns = async (core: WorkerCore, input: Item | undefined, control: RunControl): Promise<RunResult> => {
  const signal = control.signal
  const requests = new RequestSignals(signal)
  const start = core.history.length
  const usages: Array<Usage> = []
  const cache: Array<CacheReport> = []
  const warnings: Array<string> = []
  // Literals, not `{ status, ...report() }`: see `requestOf` on shapes reached through spreads.
  const finished = (): RunResult =>
    traced({ status: "finished", items: core.history.slice(start), usage: sumUsage(usages), cache, warnings })
  const paused = (pauseReason: string): RunResult =>
    traced({ status: "paused", pauseReason, items: core.history.slice(start), usage: sumUsage(usages), cache, warnings })
  core.trace = core.tracing.run(core.client)
  const traced = (result: RunResult): RunResult => {
    core.trace.finished(result)
    return result
  }

  /**
   * Records a batch's end: appends its outputs (even when it failed), or keeps its decisions when it paused, then
   * throws what ends the run. Run as part of the batch (`settleBatch`): a sole call's result is recorded from
   * within its tool's reaction, with no await of the batch in between (decision 0089).
   */
  const recordBatch = (end: BatchEnd, calls: ReadonlyArray<FunctionCallItem>): void => {
    if (end.kind === "paused") {
      core.pending = new Map(end.decisions)
      throw new Paused(end.reason)
    }
    if (core.pending.size > 0) core.pending = new Map()
    // Results go right after the batch's last call, not at the end: items added while the run was paused (or a
    // history set with unanswered calls) must not separate calls from their results, which providers refuse.
    const at = afterLastCall(core.history, calls)
    // Usually the batch's calls end the history and the results are appended; otherwise the history is rebuilt
    // around them (not `splice(at, 0, ...outputs)`: a response may carry thousands of calls, too many for call
    // arguments).
    if (end.kind === "sole") {
      // The usual batch, one call: no arrays on the way (decision 0086).
      const output = ownedOutputItem(end.outcome)
      if (at === core.history.length) core.history.push(output)
      else core.history = [...core.history.slice(0, at), output, ...core.history.slice(at)]
      core.hub.emit({ type: "tool_result", outcome: end.outcome })
    } else {
      const outputs = end.outcomes.map((outcome) => ownedOutputItem(outcome))
      if (at === core.history.length) for (const output of outputs) core.history.push(output)
      else core.history = [...core.history.slice(0, at), ...outputs, ...core.history.slice(at)]
      for (const outcome of end.outcomes) core.hub.emit({ type: "tool_result", outcome })
    }
    if (end.error !== undefined) throw end.error
  }

  /** Runs one batch and records it; settles once it is recorded (rejects with what ends the run). */
  const settleCalls = (calls: ReadonlyArray<FunctionCallItem>, offered: ReadonlySet<string>): Promise<void> =>
    settleBatch(core, calls, core.pending, signal, offered, recordBatch)

  core.hub.emit({ type: "status", status: "running" })
  try {
    control.throwIfCancelled()
    let prompt = input === undefined ? undefined : ownInput(input)
    if (prompt !== undefined) {
      const submitted = await core.hooks.run("OnPromptSubmit", () => ({ item: prompt as Item, history: [...core.history] }), signal, (r) => {
        if (r._tag !== "RewritePrompt") return "stop"
        prompt = r.item
        return "next"
      })
      if (submitted?._tag === "Cancel") {
        throw new HookAborted({ point: "OnPromptSubmit", reason: submitted.reason, message: `cancelled by an OnPromptSubmit hook: ${submitted.reason}` })
      }
    }
    const leftOver = unansweredCalls(core.history)
    if (leftOver.length > 0) await settleCalls(leftOver, core.offered ?? offeredTools(core, core.tools.toolDefinitionsSorted()))
    if (prompt !== undefined) core.history.push(prompt)

    for (let turn = 1; ; turn++) {
      control.throwIfCancelled()
      if (turn > core.settings.maxTurns) {
        throw new MaxTurnsExceeded({
          maxTurns: core.settings.maxTurns,
          message: `the run needed more than ${core.settings.maxTurns} model requests`
        })
      }
      const { request, rewritten } = await prepareRequest(core, turn, signal)
      const { report, body } = checkRequest(core, request, turn, rewritten)
      // Snapshot of what this request offers: the calls it produces may use these tools and no others.
      const offered = offeredTools(core, request.tools)
      core.offered = offered
      cache.push(report)
      core.hub.emit({ type: "cache_report", report })
      if (report.locked?.intact === false) {
        const message = "the request changes the cache-locked prefix (a locked item, the system prompt, the tools or the config was rewritten)"
        if (core.lock?.onViolation !== "warn") throw new CacheLockViolation({ kind: "prefix_bytes", message })
        warnings.push(message)
        core.hub.emit({ type: "warning", message })
      }

      core.hub.emit({ type: "turn_start", turn })
      const { response, items } = await streamResponse(core, request, body, turn, requests)
      usages.push(response.usage)
      for (const item of items) core.history.push(item)
      const calls = items.filter((item): item is FunctionCallItem => item.type === "function_call")
      core.hub.emit({ type: "turn_end", turn, toolCalls: calls.length })
      if (calls.length > 0) {
        await settleCalls(calls, offered)
        continue
      }
      const verdict = await core.hooks.run("OnTurnEnd", () => ({ turn, history: [...core.history] }), signal)
      if (verdict?._tag === "ContinueWith") {
        for (const item of verdict.items) core.history.push(item)
        continue
      }
      if (verdict?._tag === "Pause") throw new Paused(verdict.reason)
      core.hub.emit({ type: "status", status: "finished" })
      return finished()
    }
  } catch (thrown) {
    if (thrown instanceof Paused) {
      core.hub.emit({ type: "status", status: "paused" })
      return paused(thrown.reason)
    }
    // A Cancelled from the response stream carries the partial response: keep it rather than the signal's reason.
    const error: WorkerError = signal.aborted && !(thrown instanceof Cancelled) ? toWorkerError(signal.reason) : toWorkerError(thrown)
    core.trace.failed(error)
    core.hub.emit({ type: "error", error })
    core.hub.emit({ type: "status", status: "failed" })
    await core.hooks.notifyAbort({ reason: error._tag === "Cancelled" ? "Cancelled" : error.message, error })
    throw error
  } finally {
    requests.release()
  }
}

/** The index right after the last history item that is one of `calls` (by call id); the history's end if none is. */
const afterLastCall = (history: ReadonlyArray<Item>, calls: ReadonlyArray<FunctionCallItem>): number => {
  // Usually the batch's calls are the response just appended: the history ends with the batch's last call.
  if (calls.length > 0 && history.at(-1) === calls.at(-1)) return history.length
  const ids = new Set(calls.map((call) => call.callId))
  const lastCall = history.findLastIndex((item) => item.type === "function_call" && ids.has(item.callId))
  return lastCall === -1 ? history.length : lastCall + 1
}

/** The run's input as an owned item; a value that is not an item fails the run (typed) instead of a later encode. */
const ownInput = (input: Item): Item => {
  try {
    return ownItem(input)
  } catch (thrown) {
    throw new WorkerDefect({ message: `the run's input is not a valid item: ${describeSafely(thrown)}`, cause: thrown })
  }
}

/** Per tool array: the registry hands out one frozen array per tool-set version, so this is computed once each. */
const offeredCache = new WeakMap<ReadonlyArray<ToolSpec>, ReadonlySet<string>>()

/**
 * The tools a request offers: the names in its tool list that are registered now. The Worker refuses every tool
 * change while it runs (`idle` in worker.ts), so this set stays valid for the calls the request produces.
 */
const offeredTools = (core: WorkerCore, tools: ReadonlyArray<ToolSpec>): ReadonlySet<string> => {
  const cached = Object.isFrozen(tools) ? offeredCache.get(tools) : undefined
  if (cached !== undefined) return cached
  const names = new Set<string>()
  for (const spec of tools) if (core.tools.getTool(spec.name) !== undefined) names.add(spec.name)
  if (Object.isFrozen(tools)) offeredCache.set(tools, names)
  return names
}

/**
 * The request for this turn: a copy of the context, offered to PreLlmRequest hooks (the history is untouched).
 * `rewritten` says whether a hook may have changed it (so an encoding failure is that hook's).
 */
const prepareRequest = async (core: WorkerCore, turn: number, signal: AbortSignal): Promise<{ readonly request: Request; readonly rewritten: boolean }> => {
  let context: RequestContext = {
    systemPrompt: core.systemPrompt,
    items: [...core.history],
    tools: core.tools.toolDefinitionsSorted(),
    config: core.config
  }
  const verdict = await core.hooks.run("PreLlmRequest", () => ({ turn, context }), signal, (r) => {
    if (r._tag !== "RewriteRequest") return "stop"
    context = r.context
    return "next"
  })
  if (verdict?._tag === "Cancel") {
    throw new HookAborted({ point: "PreLlmRequest", reason: verdict.reason, message: `cancelled by a PreLlmRequest hook: ${verdict.reason}` })
  }
  const rewritten = core.hooks.has("PreLlmRequest")
  let items = context.items
  if (rewritten) {
    // Hooks may also edit the context in place and continue: what they left is read once, as theirs to answer for.
    try {
      items = ownItems(context.items)
      if (context.systemPrompt !== undefined && typeof context.systemPrompt !== "string") throw new TypeError("systemPrompt must be a string")
    } catch (thrown) {
      throw new HookFailed({ point: "PreLlmRequest", message: `PreLlmRequest hook left an invalid request: ${describeSafely(thrown)}`, cause: thrown })
    }
  }
  // While locked, providers with explicit cache markers (Anthropic) are told where the stable prefix ends.
  const promptCache = core.lock === undefined ? undefined : { prefixItems: core.lock.historyLength }
  return { request: requestOf(core.client.model, context.systemPrompt, items, context.tools, context.config, promptCache), rewritten }
}

/**
 * A request with its optional fields present only when set, as one of four object literals rather than spreads:
 * a literal's shape is kept by the function that makes it, whereas the shapes spreads reach through transitions
 * die with the last request at every full collection and take the code optimised for them along (decision 0085).
 */
const requestOf = (
  model: string,
  systemPrompt: string | undefined,
  items: ReadonlyArray<Item>,
  tools: ReadonlyArray<ToolSpec>,
  config: Request["config"],
  promptCache: Request["promptCache"]
): Request => {
  if (systemPrompt === undefined) return promptCache === undefined ? { model, items, tools, config } : { model, items, tools, config, promptCache }
  return promptCache === undefined ? { model, systemPrompt, items, tools, config } : { model, systemPrompt, items, tools, config, promptCache }
}

/** Verifies the tool set against the lock, and measures the body against the previous one and the locked prefix. */
const checkRequest = (
  core: WorkerCore,
  request: Request,
  turn: number,
  rewritten: boolean
): { readonly report: CacheReport; readonly body: string } => {
  const lock = core.lock
  if (lock !== undefined && core.tools.version !== lock.toolsVersion) {
    throw new CacheLockViolation({
      kind: "tool_set",
      message: `the tool set changed while cache-locked (version ${lock.toolsVersion} at lock, now ${core.tools.version})`
    })
  }
  let body: string
  try {
    body = core.client.encodeRequest(request)
  } catch (thrown) {
    // The history and settings the worker owns always encode; a request a hook rewrote may not.
    if (!rewritten) throw thrown
    throw new HookFailed({ point: "PreLlmRequest", message: `the request a PreLlmRequest hook left cannot be encoded: ${describeSafely(thrown)}`, cause: thrown })
  }
  return { report: core.bytes.measure(turn, body, lock), body }
}
