import type { FunctionCallItem, Item } from "../llm/item.ts"
import { restoreStrictArguments, usesOpenAiStrictMode } from "../schema/provider-tools.ts"
import type { JsonSchema } from "../schema/json-schema.ts"
import { jsonTextDepth, tooDeepMessage } from "../schema/json-depth.ts"
import { listBounded, quote } from "../schema/quote.ts"
import { describeThrown } from "../tool/tool-constructors.ts"
import { limitOutput } from "../tool/output-limit.ts"
import type { Tool } from "../tool/tool.ts"
import type { ToolMeta } from "../tool/tool-meta.ts"
import type { ToolCall, ToolResult } from "./hooks.ts"
import {
  type ToolOutcome,
  cancelledOutcome,
  deniedOutcome,
  skippedOutcome
} from "./tool-outcome.ts"
import type { WorkerCore } from "./worker-core.ts"
import { HookAborted, HookFailed, type WorkerError, cancelledBy } from "./worker-error.ts"
import { toWorkerError } from "./to-worker-error.ts"
import { describeSafely } from "./describe-safely.ts"
import { mapLimited } from "./limited-parallel.ts"
import { runToolPostHooks, runToolPreHooks } from "./tool-hooks.ts"

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
  | { readonly kind: "paused"; readonly reason: string; readonly decisions: ReadonlyMap<string, PendingDecision> }

type Resolved = { readonly call: FunctionCallItem; readonly meta: ToolMeta; readonly tool: Tool }
/** A call to run. `observe` receives a typed tool's return value when typed PostToolCall hooks want it. */
type Job = Resolved & { readonly arguments: string; readonly observe?: (value: unknown) => void }

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
 * `runOne` behind a guard: whatever goes wrong while checking or running one call (a stack overflow, a hostile
 * value thrown by the tool, a describer that throws) becomes that call's error result. A failure here must never
 * end the run, or the unanswered call would be replayed by every later run and fail the same way.
 */
const runGuarded = async (
  core: WorkerCore,
  job: Job,
  signal: AbortSignal
): Promise<ToolOutcome> => {
  if (signal.aborted) return cancelledOutcome(job.call.callId, job.call.name, "the run was cancelled")
  const trace = core.trace.tool({ callId: job.call.callId, name: job.call.name, arguments: job.arguments })
  let outcome: ToolOutcome
  try {
    outcome = await trace.within(() => runOne(core, job, signal))
  } catch (thrown) {
    outcome = {
      callId: job.call.callId,
      name: job.call.name,
      status: "error",
      output: `Tool "${job.call.name}" failed: ${describeSafely(thrown)}`,
      isError: true
    }
  }
  trace.ended(outcome)
  return outcome
}

/**
 * One batch of tool calls: PreToolCall hooks one call at a time in model order, the allowed calls in parallel
 * (at most `maxParallelTools` at once), then PostToolCall hooks one result at a time in model order. Only tools
 * in `offered` — those the request that produced the calls offered the model — run; others are unknown tools,
 * even if registered since (another worker sharing the server may register tools mid-run). Calls past
 * `maxCallsPerResponse` get an error result without running.
 */
export const executeBatch = async (
  core: WorkerCore,
  calls: ReadonlyArray<FunctionCallItem>,
  decided: ReadonlyMap<string, PendingDecision>,
  signal: AbortSignal,
  offered: ReadonlySet<string>
): Promise<BatchEnd> => {
  const decisions = new Map<string, PendingDecision>()
  const fixed = new Map<string, ToolOutcome>()
  const failAll = (error: WorkerError, reason: string): BatchEnd => ({
    kind: "done",
    outcomes: calls.map((call) => fixed.get(call.callId) ?? synthetic(call, decisions.get(call.callId), reason)),
    error
  })

  const lookup = (name: string) => (offered.has(name) ? core.tools.getTool(name) : undefined)
  const limit = core.settings.maxCallsPerResponse
  if (calls.length > limit) {
    core.hub.emit({
      type: "warning",
      message: `the model made ${calls.length} tool calls in one response; calls after the first ${limit} get an error result (maxCallsPerResponse)`
    })
  }

  for (const [at, call] of calls.entries()) {
    if (at >= limit) {
      fixed.set(call.callId, overLimit(call, calls.length, limit))
      continue
    }
    const previous = decided.get(call.callId)
    if (previous !== undefined) {
      decisions.set(call.callId, previous)
      continue
    }
    const entry = lookup(call.name)
    if (entry === undefined) {
      // Unknown tools skip the hooks: there is no meta or instance to show them.
      fixed.set(call.callId, unknownTool(call, offered))
      continue
    }
    const editable: ToolCall = { callId: call.callId, name: call.name, arguments: call.arguments }
    let verdict
    let edited: string
    try {
      verdict = await core.hooks.run("PreToolCall", () => ({ call: editable, meta: entry.meta, tool: entry.tool }), signal, (r) => {
        if (r._tag !== "RewriteArguments") return "stop"
        editable.arguments = r.arguments
        return "next"
      })
      edited = editedArguments(editable)
      if (verdict === undefined || verdict._tag === "RewriteArguments" || verdict._tag === "Continue") {
        const typed = await runToolPreHooks(core, entry, call, edited, signal)
        edited = typed.arguments
        verdict = typed.verdict ?? verdict
      }
    } catch (thrown) {
      const error = toWorkerError(thrown)
      return failAll(error, error.message)
    }
    if (verdict === undefined || verdict._tag === "RewriteArguments" || verdict._tag === "Continue") {
      decisions.set(call.callId, { kind: "run", arguments: edited })
    } else if (verdict._tag === "Skip") {
      decisions.set(call.callId, { kind: "skip", reason: verdict.reason })
    } else if (verdict._tag === "Deny") {
      decisions.set(call.callId, { kind: "deny", reason: verdict.reason })
    } else if (verdict._tag === "Pause") {
      return { kind: "paused", reason: verdict.reason, decisions: new Map([...decided, ...decisions]) }
    } else {
      const reason = `aborted by a PreToolCall hook: ${verdict.reason}`
      return failAll(new HookAborted({ point: "PreToolCall", reason: verdict.reason, message: reason }), reason)
    }
  }

  const toRun: Array<Job> = []
  const values = new Map<string, unknown>()
  for (const call of calls) {
    const decision = decisions.get(call.callId)
    if (decision === undefined) continue
    if (decision.kind !== "run") {
      fixed.set(call.callId, synthetic(call, decision, ""))
      continue
    }
    const entry = lookup(call.name)
    if (entry === undefined) {
      fixed.set(call.callId, unknownTool(call, offered))
      continue
    }
    const typedPost = core.toolHooks.for("PostToolCall", call.name, entry.tool).length > 0
    const observe = typedPost ? (value: unknown): void => void values.set(call.callId, value) : undefined
    toRun.push({ call, meta: entry.meta, tool: entry.tool, arguments: decision.arguments, ...(observe === undefined ? {} : { observe }) })
  }

  const executed = await mapLimited(toRun, core.settings.maxParallelTools, (job) => runGuarded(core, job, signal))
  executed.forEach((outcome) => fixed.set(outcome.callId, outcome))
  if (signal.aborted) return failAll(cancelledBy(signal), "Cancelled")

  for (const job of toRun) {
    let outcome = fixed.get(job.call.callId) as ToolOutcome
    if (outcome.status === "ok" && values.has(job.call.callId)) {
      let typed
      try {
        typed = await runToolPostHooks(core, job, job.call, values.get(job.call.callId), signal)
      } catch (thrown) {
        const error = toWorkerError(thrown)
        return failAll(error, error.message)
      }
      if (typed.output !== undefined) {
        outcome = rewritten(outcome, { status: outcome.status, output: typed.output, isError: false }, job.meta.maxOutputBytes ?? core.settings.maxToolOutputBytes)
        fixed.set(job.call.callId, outcome)
      }
      if (typed.abort !== undefined) {
        const reason = `aborted by a PostToolCall hook for tool ${quote(job.call.name)}: ${typed.abort.reason}`
        return failAll(new HookAborted({ point: "PostToolCall", reason: typed.abort.reason, message: reason }), reason)
      }
    }
    const result: ToolResult = { status: outcome.status, output: outcome.output, isError: outcome.isError }
    const editable: ToolCall = { callId: job.call.callId, name: job.call.name, arguments: job.arguments }
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
      fixed.set(job.call.callId, rewrittenGuarded(outcome, result, cap))
      const error = toWorkerError(thrown)
      return failAll(error, error.message)
    }
    try {
      fixed.set(job.call.callId, rewrittenGuarded(outcome, result, cap, true))
    } catch (thrown) {
      fixed.set(job.call.callId, outcome)
      const error = toWorkerError(thrown)
      return failAll(error, error.message)
    }
    if (verdict?._tag === "Abort") {
      const reason = `aborted by a PostToolCall hook: ${verdict.reason}`
      return failAll(new HookAborted({ point: "PostToolCall", reason: verdict.reason, message: reason }), reason)
    }
  }
  return { kind: "done", outcomes: calls.map((call) => fixed.get(call.callId) as ToolOutcome) }
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

/** Checks the argument text is a JSON object before the tool sees it; the model gets the precise problem. */
const checkArguments = (core: WorkerCore, schema: JsonSchema, text: string): { ok: true; text: string } | { ok: false; problem: string } => {
  // Before anything recursive (the parser, strict-mode restore, re-serialisation, the tool's own decoder): the
  // model controls the nesting, and a few KiB of brackets overflow the stack of any recursive walker.
  const maxDepth = core.settings.maxArgumentDepth
  if (jsonTextDepth(text, maxDepth) > maxDepth) return { ok: false, problem: tooDeepMessage("arguments", maxDepth) }
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch (thrown) {
    return { ok: false, problem: `the arguments are not valid JSON (${describeSafely(thrown)})` }
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    const kind = parsed === null ? "null" : Array.isArray(parsed) ? "an array" : `a ${typeof parsed}`
    return { ok: false, problem: `the arguments must be a JSON object, got ${kind}` }
  }
  // OpenAI strict mode makes every property required and sends null for the optional ones: undo that, for the
  // tools that were sent strict (a non-strict tool's schema forbids that null, and the decoder must say so).
  if (core.client.scheme.startsWith("openai") && usesOpenAiStrictMode(schema)) return { ok: true, text: JSON.stringify(restoreStrictArguments(schema, parsed)) }
  return { ok: true, text }
}

const runOne = async (
  core: WorkerCore,
  job: Job,
  signal: AbortSignal
): Promise<ToolOutcome> => {
  const { call, meta } = job
  const base = { callId: call.callId, name: call.name }
  const checked = checkArguments(core, meta.schema, job.arguments)
  if (!checked.ok) {
    return { ...base, status: "error", output: `Invalid arguments for tool "${call.name}": ${checked.problem}`, isError: true }
  }
  const timeoutMs = core.settings.toolTimeouts[call.name] ?? core.settings.toolTimeoutMs
  try {
    const output = await core.tools.callTool(call.name, checked.text, {
      callId: call.callId,
      signal,
      maxOutputBytes: core.settings.maxToolOutputBytes,
      ...(timeoutMs === undefined ? {} : { timeoutMs }),
      ...(job.observe === undefined ? {} : { observeOutput: job.observe })
    })
    return { ...base, status: "ok", output: String(output), isError: false }
  } catch (thrown) {
    const tag = (thrown as { _tag?: string })._tag
    const message = limitOutput(describeThrown(thrown, Number.MAX_SAFE_INTEGER), meta.maxOutputBytes ?? core.settings.maxToolOutputBytes)
    if (tag === "ToolTimeout") return { ...base, status: "timeout", output: message, isError: true }
    if (tag === "ToolCancelled") return cancelledOutcome(call.callId, call.name, "the run was cancelled")
    return { ...base, status: "error", output: message, isError: true }
  }
}
