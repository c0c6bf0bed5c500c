import type { FunctionCallOutputItem } from "../llm/item.ts"
import { stampItem } from "../llm/item-memo.ts"
import { ownItem } from "./owned-items.ts"

/** How a tool call ended. Every call the model makes ends in exactly one of these. */
export type ToolResultStatus = "ok" | "error" | "timeout" | "cancelled" | "skipped" | "denied"

/** One call's final result, as recorded in history and reported to subscribers. */
export interface ToolOutcome {
  readonly callId: string
  readonly name: string
  readonly status: ToolResultStatus
  readonly output: string
  readonly isError: boolean
}

export const toOutputItem = (outcome: ToolOutcome): FunctionCallOutputItem => ({
  type: "function_call_output",
  callId: outcome.callId,
  output: outcome.output,
  isError: outcome.isError
})

/**
 * The history's own result item for `outcome`: what `ownItem(toOutputItem(outcome))` gives (frozen, owned), built
 * once instead of built and then copied. Every outcome the Worker makes holds its own strings and flag; anything
 * else (never expected) takes `ownItem`'s checked copy and fails the way it would.
 */
export const ownedOutputItem = (outcome: ToolOutcome): FunctionCallOutputItem => {
  const { callId, output, isError } = outcome
  if (typeof callId !== "string" || typeof output !== "string" || typeof isError !== "boolean") {
    return ownItem(toOutputItem(outcome)) as FunctionCallOutputItem
  }
  const item: FunctionCallOutputItem = { type: "function_call_output", callId, output, isError }
  stampItem(item)
  return Object.freeze(item)
}

/** Synthetic results: written so the model can tell what happened and why the tool did not give an answer. */
export const skippedOutcome = (callId: string, name: string, reason: string): ToolOutcome => ({
  callId,
  name,
  status: "skipped",
  output: `Tool call skipped (not executed): ${reason}`,
  isError: false
})

export const deniedOutcome = (callId: string, name: string, reason: string): ToolOutcome => ({
  callId,
  name,
  status: "denied",
  output: `Tool call denied (not executed): ${reason}`,
  isError: true
})

export const cancelledOutcome = (callId: string, name: string, reason: string): ToolOutcome => ({
  callId,
  name,
  status: "cancelled",
  output: `Tool call cancelled: ${reason}`,
  isError: true
})
