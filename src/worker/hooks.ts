import type { Effect } from "effect"
import type { Event, RawUsage, Usage } from "../llm/event.ts"
import type { Item } from "../llm/item.ts"
import type { RequestConfig, ToolSpec } from "../llm/request.ts"
import type { Tool } from "../tool/tool.ts"
import type { ToolMeta } from "../tool/tool-meta.ts"
import type { ToolResultStatus } from "./tool-outcome.ts"
import type { WorkerError } from "./worker-error.ts"

/**
 * The ten hook points. Each point has its own input and its own result union, so control flow that means nothing
 * at a point (a PostToolCall "skip", a stream "pause") cannot be written. Hooks of one point run in registration
 * order. Rewrites are applied and the chain goes on (the next hook sees the rewritten value); a terminal result
 * (cancel, abort, skip, deny, pause, continueWith) stops the chain and decides.
 */

export interface Continue { readonly _tag: "Continue" }
export interface Cancel { readonly _tag: "Cancel"; readonly reason: string }
export interface Abort { readonly _tag: "Abort"; readonly reason: string }
export interface RewritePrompt { readonly _tag: "RewritePrompt"; readonly item: Item }
export interface RewriteRequest { readonly _tag: "RewriteRequest"; readonly context: RequestContext }
export interface RewriteArguments { readonly _tag: "RewriteArguments"; readonly arguments: string }
export interface Skip { readonly _tag: "Skip"; readonly reason: string }
export interface Deny { readonly _tag: "Deny"; readonly reason: string }
export interface Pause { readonly _tag: "Pause"; readonly reason: string }
export interface RewriteResult { readonly _tag: "RewriteResult"; readonly output: string; readonly isError?: boolean }
export interface Finish { readonly _tag: "Finish" }
export interface ContinueWith { readonly _tag: "ContinueWith"; readonly items: ReadonlyArray<Item> }

/** The request as PreLlmRequest hooks see it: a private copy; rewriting it never touches the stored history. */
export interface RequestContext {
  systemPrompt: string | undefined
  items: Array<Item>
  tools: ReadonlyArray<ToolSpec>
  config: RequestConfig
}

/** A tool call as the model made it. PreToolCall hooks may edit `arguments` in place (or return `rewriteArguments`). */
export interface ToolCall {
  readonly callId: string
  readonly name: string
  arguments: string
}

/**
 * A tool call's result. PostToolCall hooks may edit `output` and `isError` in place (or return `rewriteResult`);
 * the status follows the error flag.
 */
export interface ToolResult {
  readonly status: ToolResultStatus
  output: string
  isError: boolean
}

export interface PromptSubmitInput { readonly item: Item; readonly history: ReadonlyArray<Item> }
export interface PreLlmRequestInput { readonly turn: number; readonly context: RequestContext }
export interface StreamChunkInput { readonly turn: number; readonly event: Event }
export interface TextDeltaInput { readonly turn: number; readonly index: number; readonly text: string }
export interface ToolCallDeltaInput {
  readonly turn: number
  readonly index: number
  readonly callId: string
  readonly name: string
  readonly json: string
}
export interface StreamCompleteInput {
  readonly turn: number
  readonly eventCount: number
  readonly usage: Usage
  /** The provider's own usage object of this response (bounded copy), when its scheme passed one on. */
  readonly rawUsage?: RawUsage
}
export interface PreToolCallInput { readonly call: ToolCall; readonly meta: ToolMeta; readonly tool: Tool }
export interface PostToolCallInput {
  readonly call: Readonly<ToolCall>
  readonly result: ToolResult
  readonly meta: ToolMeta
  readonly tool: Tool
}
export interface TurnEndInput { readonly turn: number; readonly history: ReadonlyArray<Item> }
export interface AbortInput { readonly reason: string; readonly error: WorkerError }

export type PromptSubmitResult = Continue | RewritePrompt | Cancel
export type PreLlmRequestResult = Continue | RewriteRequest | Cancel
export type StreamHookResult = Continue | Abort
export type PreToolCallResult = Continue | RewriteArguments | Skip | Deny | Pause | Abort
export type PostToolCallResult = Continue | RewriteResult | Abort
export type TurnEndResult = Finish | ContinueWith | Pause

/** Input and result of every hook point. OnAbort only observes: it cannot change how the run ends. */
export interface HookSignatures {
  OnPromptSubmit: { input: PromptSubmitInput; result: PromptSubmitResult }
  PreLlmRequest: { input: PreLlmRequestInput; result: PreLlmRequestResult }
  OnStreamChunk: { input: StreamChunkInput; result: StreamHookResult }
  OnTextDelta: { input: TextDeltaInput; result: StreamHookResult }
  OnToolCallDelta: { input: ToolCallDeltaInput; result: StreamHookResult }
  OnStreamComplete: { input: StreamCompleteInput; result: StreamHookResult }
  PreToolCall: { input: PreToolCallInput; result: PreToolCallResult }
  PostToolCall: { input: PostToolCallInput; result: PostToolCallResult }
  OnTurnEnd: { input: TurnEndInput; result: TurnEndResult }
  OnAbort: { input: AbortInput; result: void }
}

export type HookPoint = keyof HookSignatures
export type HookInput<P extends HookPoint> = HookSignatures[P]["input"]
export type HookResult<P extends HookPoint> = HookSignatures[P]["result"]

/**
 * A hook: a plain or async function, or one returning an Effect. Returning nothing means "continue" ("finish"
 * for OnTurnEnd). Throwing, rejecting or failing ends the run with `HookFailed`.
 */
export type HookFn<P extends HookPoint> = (
  input: HookInput<P>
) => HookResult<P> | void | Promise<HookResult<P> | void> | Effect.Effect<HookResult<P> | void, unknown>

const CONTINUE: Continue = Object.freeze({ _tag: "Continue" })

/** The result every decision hook may return. */
export const Hook = {
  continue: (): Continue => CONTINUE
} as const

export const OnPromptSubmit = {
  continue: Hook.continue,
  rewrite: (item: Item): RewritePrompt => ({ _tag: "RewritePrompt", item }),
  cancel: (reason: string): Cancel => ({ _tag: "Cancel", reason })
} as const

export const PreLlmRequest = {
  continue: Hook.continue,
  rewrite: (context: RequestContext): RewriteRequest => ({ _tag: "RewriteRequest", context }),
  cancel: (reason: string): Cancel => ({ _tag: "Cancel", reason })
} as const

/** Results for OnStreamChunk, OnTextDelta, OnToolCallDelta and OnStreamComplete. There is no pause mid-stream. */
export const StreamHook = {
  continue: Hook.continue,
  abort: (reason: string): Abort => ({ _tag: "Abort", reason })
} as const

export const PreToolCall = {
  continue: Hook.continue,
  rewriteArguments: (argumentsJson: string): RewriteArguments => ({ _tag: "RewriteArguments", arguments: argumentsJson }),
  /** Not run; the model gets a result saying it was skipped. */
  skip: (reason: string): Skip => ({ _tag: "Skip", reason }),
  /** Not run; the model gets an error result saying it was denied. */
  deny: (reason: string): Deny => ({ _tag: "Deny", reason }),
  /** The run ends as paused; decisions made so far in this batch are kept for `resume()`. */
  pause: (reason = "paused"): Pause => ({ _tag: "Pause", reason }),
  abort: (reason: string): Abort => ({ _tag: "Abort", reason })
} as const

export const PostToolCall = {
  continue: Hook.continue,
  rewriteResult: (output: string, isError?: boolean): RewriteResult =>
    isError === undefined ? { _tag: "RewriteResult", output } : { _tag: "RewriteResult", output, isError },
  /** Ends the run after every result of the batch is recorded. */
  abort: (reason: string): Abort => ({ _tag: "Abort", reason })
} as const

export const OnTurnEnd = {
  finish: (): Finish => ({ _tag: "Finish" }),
  /** Append these items and ask the model again (self-correction). */
  continueWith: (items: ReadonlyArray<Item>): ContinueWith => ({ _tag: "ContinueWith", items }),
  pause: (reason = "paused"): Pause => ({ _tag: "Pause", reason })
} as const
