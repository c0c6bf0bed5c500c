import type { FunctionCallItem, Item } from "../llm/item.ts"
import { restoreStrictArguments, usesOpenAiStrictMode } from "../schema/provider-tools.ts"
import type { JsonSchema } from "../schema/json-schema.ts"
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
import { Cancelled, HookAborted, type WorkerError } from "./worker-error.ts"
import { toWorkerError } from "./to-worker-error.ts"

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

/** Function calls in `history` that have no output yet, in history order. */
export const unansweredCalls = (history: ReadonlyArray<Item>): Array<FunctionCallItem> => {
  const answered = new Set<string>()
  for (const item of history) if (item.type === "function_call_output") answered.add(item.callId)
  return history.filter((item): item is FunctionCallItem => item.type === "function_call" && !answered.has(item.callId))
}

/**
 * One batch of tool calls: PreToolCall hooks one call at a time in model order, the allowed calls in parallel,
 * then PostToolCall hooks one result at a time in model order.
 */
export const executeBatch = async (
  core: WorkerCore,
  calls: ReadonlyArray<FunctionCallItem>,
  decided: ReadonlyMap<string, PendingDecision>,
  signal: AbortSignal
): Promise<BatchEnd> => {
  const decisions = new Map<string, PendingDecision>()
  const fixed = new Map<string, ToolOutcome>()
  const failAll = (error: WorkerError, reason: string): BatchEnd => ({
    kind: "done",
    outcomes: calls.map((call) => fixed.get(call.callId) ?? synthetic(call, decisions.get(call.callId), reason)),
    error
  })

  for (const call of calls) {
    const previous = decided.get(call.callId)
    if (previous !== undefined) {
      decisions.set(call.callId, previous)
      continue
    }
    const entry = core.tools.getTool(call.name)
    if (entry === undefined) {
      // Unknown tools skip the hooks: there is no meta or instance to show them.
      fixed.set(call.callId, {
        callId: call.callId,
        name: call.name,
        status: "error",
        output: `Unknown tool "${call.name}". Available tools: ${core.tools.names().join(", ") || "(none)"}`,
        isError: true
      })
      continue
    }
    const editable: ToolCall = { callId: call.callId, name: call.name, arguments: call.arguments }
    let verdict
    try {
      verdict = await core.hooks.run("PreToolCall", () => ({ call: editable, meta: entry.meta, tool: entry.tool }), signal, (r) => {
        if (r._tag !== "RewriteArguments") return "stop"
        editable.arguments = r.arguments
        return "next"
      })
    } catch (thrown) {
      const error = toWorkerError(thrown)
      return failAll(error, error.message)
    }
    if (verdict === undefined || verdict._tag === "RewriteArguments" || verdict._tag === "Continue") {
      decisions.set(call.callId, { kind: "run", arguments: editable.arguments })
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

  const toRun: Array<Resolved & { readonly arguments: string }> = []
  for (const call of calls) {
    const decision = decisions.get(call.callId)
    if (decision === undefined) continue
    if (decision.kind !== "run") {
      fixed.set(call.callId, synthetic(call, decision, ""))
      continue
    }
    const entry = core.tools.getTool(call.name)
    if (entry === undefined) {
      fixed.set(call.callId, { callId: call.callId, name: call.name, status: "error", output: `Unknown tool "${call.name}"`, isError: true })
      continue
    }
    toRun.push({ call, meta: entry.meta, tool: entry.tool, arguments: decision.arguments })
  }

  const executed = await Promise.all(toRun.map((job) => runOne(core, job, signal)))
  executed.forEach((outcome) => fixed.set(outcome.callId, outcome))
  if (signal.aborted) return failAll(new Cancelled({ message: "Cancelled" }), "Cancelled")

  for (const job of toRun) {
    const outcome = fixed.get(job.call.callId) as ToolOutcome
    const result: ToolResult = { status: outcome.status, output: outcome.output, isError: outcome.isError }
    const editable: ToolCall = { callId: job.call.callId, name: job.call.name, arguments: job.arguments }
    let verdict
    try {
      verdict = await core.hooks.run("PostToolCall", () => ({ call: editable, result, meta: job.meta, tool: job.tool }), signal, (r) => {
        if (r._tag !== "RewriteResult") return "stop"
        result.output = r.output
        if (r.isError !== undefined) result.isError = r.isError
        return "next"
      })
    } catch (thrown) {
      fixed.set(job.call.callId, rewritten(outcome, result, job.meta.maxOutputBytes ?? core.settings.maxToolOutputBytes))
      const error = toWorkerError(thrown)
      return failAll(error, error.message)
    }
    fixed.set(job.call.callId, rewritten(outcome, result, job.meta.maxOutputBytes ?? core.settings.maxToolOutputBytes))
    if (verdict?._tag === "Abort") {
      const reason = `aborted by a PostToolCall hook: ${verdict.reason}`
      return failAll(new HookAborted({ point: "PostToolCall", reason: verdict.reason, message: reason }), reason)
    }
  }
  return { kind: "done", outcomes: calls.map((call) => fixed.get(call.callId) as ToolOutcome) }
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
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch (thrown) {
    return { ok: false, problem: `the arguments are not valid JSON (${describeThrown(thrown)})` }
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
  job: Resolved & { readonly arguments: string },
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
      ...(timeoutMs === undefined ? {} : { timeoutMs })
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
