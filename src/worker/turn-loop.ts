import type { Usage } from "../llm/event.ts"
import type { FunctionCallItem, Item } from "../llm/item.ts"
import type { Request } from "../llm/request.ts"
import type { CacheReport } from "./cache-lock.ts"
import type { RunControl } from "./cancellation.ts"
import type { RequestContext } from "./hooks.ts"
import { streamResponse } from "./response-stream.ts"
import { toWorkerError } from "./to-worker-error.ts"
import { executeBatch, unansweredCalls } from "./tool-execution.ts"
import { toOutputItem } from "./tool-outcome.ts"
import type { WorkerCore } from "./worker-core.ts"
import { CacheLockViolation, HookAborted, MaxTurnsExceeded, type WorkerError } from "./worker-error.ts"

/** What every run that did not fail reports. */
interface RunReport {
  /** The items this run appended to the history, in order. */
  readonly items: ReadonlyArray<Item>
  /** Token usage summed over this run's requests. */
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

const USAGE_FIELDS = ["inputTokens", "outputTokens", "totalTokens", "cacheReadTokens", "cacheWriteTokens"] as const

const addUsage = (total: { -readonly [K in keyof Usage]: Usage[K] }, usage: Usage): void => {
  for (const field of USAGE_FIELDS) {
    const value = usage[field]
    if (value !== undefined) total[field] = (total[field] ?? 0) + value
  }
}

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
  const start = core.history.length
  const usage: { -readonly [K in keyof Usage]: Usage[K] } = {}
  const cache: Array<CacheReport> = []
  const warnings: Array<string> = []
  const report = (): RunReport => ({ items: core.history.slice(start), usage: { ...usage }, cache, warnings })
  const finished = (): RunResult => ({ status: "finished", ...report() })
  const paused = (pauseReason: string): RunResult => ({ status: "paused", pauseReason, ...report() })

  /** Runs one batch; appends its outputs (even when it failed), or keeps its decisions when it paused. */
  const settleCalls = async (calls: ReadonlyArray<FunctionCallItem>): Promise<void> => {
    const end = await executeBatch(core, calls, core.pending, signal)
    if (end.kind === "paused") {
      core.pending = new Map(end.decisions)
      throw new Paused(end.reason)
    }
    core.pending = new Map()
    // Results go right after the batch's last call, not at the end: items added while the run was paused (or a
    // history set with unanswered calls) must not separate calls from their results, which providers refuse.
    const ids = new Set(calls.map((call) => call.callId))
    const lastCall = core.history.findLastIndex((item) => item.type === "function_call" && ids.has(item.callId))
    core.history.splice(lastCall === -1 ? core.history.length : lastCall + 1, 0, ...end.outcomes.map(toOutputItem))
    for (const outcome of end.outcomes) core.hub.emit({ type: "tool_result", outcome })
    if (end.error !== undefined) throw end.error
  }

  core.hub.emit({ type: "status", status: "running" })
  try {
    control.throwIfCancelled()
    let prompt = input
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
    if (leftOver.length > 0) await settleCalls(leftOver)
    if (prompt !== undefined) core.history.push(prompt)

    for (let turn = 1; ; turn++) {
      control.throwIfCancelled()
      if (turn > core.settings.maxTurns) {
        throw new MaxTurnsExceeded({
          maxTurns: core.settings.maxTurns,
          message: `the run needed more than ${core.settings.maxTurns} model requests`
        })
      }
      const request = await prepareRequest(core, turn, signal)
      const { report, body } = checkRequest(core, request, turn)
      cache.push(report)
      core.hub.emit({ type: "cache_report", report })
      if (report.locked?.intact === false) {
        const message = "the request changes the cache-locked prefix (a locked item, the system prompt, the tools or the config was rewritten)"
        if (core.lock?.onViolation !== "warn") throw new CacheLockViolation({ kind: "prefix_bytes", message })
        warnings.push(message)
        core.hub.emit({ type: "warning", message })
      }

      core.hub.emit({ type: "turn_start", turn })
      const { response } = await streamResponse(core, request, body, turn, signal)
      addUsage(usage, response.usage)
      core.history.push(...response.items)
      const calls = response.items.filter((item): item is FunctionCallItem => item.type === "function_call")
      core.hub.emit({ type: "turn_end", turn, toolCalls: calls.length })
      if (calls.length > 0) {
        await settleCalls(calls)
        continue
      }
      const verdict = await core.hooks.run("OnTurnEnd", () => ({ turn, history: [...core.history] }), signal)
      if (verdict?._tag === "ContinueWith") {
        core.history.push(...verdict.items)
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
    const error: WorkerError = signal.aborted ? toWorkerError(signal.reason) : toWorkerError(thrown)
    core.hub.emit({ type: "error", error })
    core.hub.emit({ type: "status", status: "failed" })
    await core.hooks.notifyAbort({ reason: error._tag === "Cancelled" ? "Cancelled" : error.message, error })
    throw error
  }
}

/** The request for this turn: a copy of the context, offered to PreLlmRequest hooks (the history is untouched). */
const prepareRequest = async (core: WorkerCore, turn: number, signal: AbortSignal): Promise<Request> => {
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
  return {
    model: core.client.model,
    ...(context.systemPrompt === undefined ? {} : { systemPrompt: context.systemPrompt }),
    items: context.items,
    tools: context.tools,
    config: context.config,
    // While locked, providers with explicit cache markers (Anthropic) are told where the stable prefix ends.
    ...(core.lock === undefined ? {} : { promptCache: { prefixItems: core.lock.historyLength } })
  }
}

/** Verifies the tool set against the lock, and measures the body against the previous one and the locked prefix. */
const checkRequest = (core: WorkerCore, request: Request, turn: number): { readonly report: CacheReport; readonly body: string } => {
  const lock = core.lock
  if (lock !== undefined && core.tools.version !== lock.toolsVersion) {
    throw new CacheLockViolation({
      kind: "tool_set",
      message: `the tool set changed while cache-locked (version ${lock.toolsVersion} at lock, now ${core.tools.version})`
    })
  }
  const body = core.client.encodeRequest(request)
  return { report: core.bytes.measure(turn, Buffer.from(body, "utf8"), lock), body }
}
