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

/** Go on as if the hook were not there. */
export interface Continue { readonly _tag: "Continue" }
/** End the run as cancelled before the model is asked (OnPromptSubmit, PreLlmRequest). */
export interface Cancel { readonly _tag: "Cancel"; readonly reason: string }
/** End the run with `HookAborted` (stream hooks, PreToolCall, PostToolCall). */
export interface Abort { readonly _tag: "Abort"; readonly reason: string }
/** Send this item instead of the submitted prompt. */
export interface RewritePrompt { readonly _tag: "RewritePrompt"; readonly item: Item }
/** Send this request context instead (a rewrite of a cache-locked prefix fails the request). */
export interface RewriteRequest { readonly _tag: "RewriteRequest"; readonly context: RequestContext }
/** Run the tool with these arguments (JSON text, decoded by the tool's schema like the model's). */
export interface RewriteArguments { readonly _tag: "RewriteArguments"; readonly arguments: string }
/** Do not run the call; the model gets a result saying it was skipped, with `reason`. */
export interface Skip { readonly _tag: "Skip"; readonly reason: string }
/** Do not run the call; the model gets an error result saying it was denied, with `reason`. */
export interface Deny { readonly _tag: "Deny"; readonly reason: string }
/** End the run as paused; `resume()` continues from here. */
export interface Pause { readonly _tag: "Pause"; readonly reason: string }
/** Send the model this output (and error flag) instead of the tool's. */
export interface RewriteResult { readonly _tag: "RewriteResult"; readonly output: string; readonly isError?: boolean }
/** End the run here (the default at OnTurnEnd). */
export interface Finish { readonly _tag: "Finish" }
/** Append these items and ask the model again. */
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

/** What an OnPromptSubmit hook receives: the submitted prompt item and the history before it. */
export interface PromptSubmitInput { readonly item: Item; readonly history: ReadonlyArray<Item> }
/** What a PreLlmRequest hook receives: the request number within the run and a private copy of the request. */
export interface PreLlmRequestInput { readonly turn: number; readonly context: RequestContext }
/** What an OnStreamChunk hook receives: every neutral event of the response as it arrives. */
export interface StreamChunkInput { readonly turn: number; readonly event: Event }
/** What an OnTextDelta hook receives: a piece of the text block `index`. */
export interface TextDeltaInput { readonly turn: number; readonly index: number; readonly text: string }
/** What an OnToolCallDelta hook receives: a fragment of the call's JSON arguments. */
export interface ToolCallDeltaInput {
  readonly turn: number
  readonly index: number
  readonly callId: string
  readonly name: string
  readonly json: string
}
/** What an OnStreamComplete hook receives when a response ends: how many events it had and its usage. */
export interface StreamCompleteInput {
  readonly turn: number
  readonly eventCount: number
  readonly usage: Usage
  /** The provider's own usage object of this response (bounded copy), when its scheme passed one on. */
  readonly rawUsage?: RawUsage
}
/** What a PreToolCall hook receives: the call as the model made it, and the tool it names. */
export interface PreToolCallInput { readonly call: ToolCall; readonly meta: ToolMeta; readonly tool: Tool }
/** What a PostToolCall hook receives: the call, its result (editable in place, or rewrite it), and the tool. */
export interface PostToolCallInput {
  readonly call: Readonly<ToolCall>
  readonly result: ToolResult
  readonly meta: ToolMeta
  readonly tool: Tool
}
/** What an OnTurnEnd hook receives after a response without tool calls: the request number and the history. */
export interface TurnEndInput { readonly turn: number; readonly history: ReadonlyArray<Item> }
/** What an OnAbort hook observes when a run fails or is cancelled: the reason and the error. */
export interface AbortInput { readonly reason: string; readonly error: WorkerError }

/** What an OnPromptSubmit hook may decide. */
export type PromptSubmitResult = Continue | RewritePrompt | Cancel
/** What a PreLlmRequest hook may decide. */
export type PreLlmRequestResult = Continue | RewriteRequest | Cancel
/** What a stream hook (OnStreamChunk, OnTextDelta, OnToolCallDelta, OnStreamComplete) may decide. */
export type StreamHookResult = Continue | Abort
/** What a PreToolCall hook may decide. */
export type PreToolCallResult = Continue | RewriteArguments | Skip | Deny | Pause | Abort
/** What a PostToolCall hook may decide. */
export type PostToolCallResult = Continue | RewriteResult | Abort
/** What an OnTurnEnd hook may decide. */
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

/** The name of a hook point: `"PreToolCall"`, `"OnTurnEnd"`… */
export type HookPoint = keyof HookSignatures
/** What a hook at point `P` receives. */
export type HookInput<P extends HookPoint> = HookSignatures[P]["input"]
/** What a hook at point `P` may return (besides nothing, which means continue). */
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
  /** Go on unchanged. */
  continue: (): Continue => CONTINUE
} as const

/** Results of an OnPromptSubmit hook: continue, rewrite the prompt, or cancel the run. */
export const OnPromptSubmit = {
  /** Go on unchanged. */
  continue: Hook.continue,
  /** Send `item` instead of the submitted prompt. */
  rewrite: (item: Item): RewritePrompt => ({ _tag: "RewritePrompt", item }),
  /** End the run as cancelled, with `reason`. */
  cancel: (reason: string): Cancel => ({ _tag: "Cancel", reason })
} as const

/** Results of a PreLlmRequest hook: continue, rewrite the request context, or cancel the run. */
export const PreLlmRequest = {
  /** Go on unchanged. */
  continue: Hook.continue,
  /** Send `context` instead of the request the worker built. */
  rewrite: (context: RequestContext): RewriteRequest => ({ _tag: "RewriteRequest", context }),
  /** End the run as cancelled, with `reason`. */
  cancel: (reason: string): Cancel => ({ _tag: "Cancel", reason })
} as const

/** Results for OnStreamChunk, OnTextDelta, OnToolCallDelta and OnStreamComplete. There is no pause mid-stream. */
export const StreamHook = {
  /** Go on unchanged. */
  continue: Hook.continue,
  /** End the run with `HookAborted`, with `reason`. */
  abort: (reason: string): Abort => ({ _tag: "Abort", reason })
} as const

/**
 * Results of a PreToolCall hook: continue, rewrite the arguments, skip or deny the call, pause or abort the run.
 *
 * @example
 * ```ts
 * worker.addHook("PreToolCall", ({ call }) =>
 *   call.name === "delete_file" ? PreToolCall.deny("deleting is not allowed here") : PreToolCall.continue())
 * ```
 */
export const PreToolCall = {
  /** Go on unchanged. */
  continue: Hook.continue,
  /** Run the call with these arguments instead (JSON text, checked against the tool's schema). */
  rewriteArguments: (argumentsJson: string): RewriteArguments => ({ _tag: "RewriteArguments", arguments: argumentsJson }),
  /** Not run; the model gets a result saying it was skipped. */
  skip: (reason: string): Skip => ({ _tag: "Skip", reason }),
  /** Not run; the model gets an error result saying it was denied. */
  deny: (reason: string): Deny => ({ _tag: "Deny", reason }),
  /** The run ends as paused; decisions made so far in this batch are kept for `resume()`. */
  pause: (reason = "paused"): Pause => ({ _tag: "Pause", reason }),
  /** End the run with `HookAborted` without running this call, with `reason`. */
  abort: (reason: string): Abort => ({ _tag: "Abort", reason })
} as const

/** Results of a PostToolCall hook: continue, rewrite the result, or abort the run after the batch. */
export const PostToolCall = {
  /** Go on unchanged. */
  continue: Hook.continue,
  /** Send the model `output` (and, when given, the error flag) instead of the tool's result. */
  rewriteResult: (output: string, isError?: boolean): RewriteResult =>
    isError === undefined ? { _tag: "RewriteResult", output } : { _tag: "RewriteResult", output, isError },
  /** Ends the run after every result of the batch is recorded. */
  abort: (reason: string): Abort => ({ _tag: "Abort", reason })
} as const

/** Results of an OnTurnEnd hook: finish, continue with more items, or pause. */
export const OnTurnEnd = {
  /** End the run. */
  finish: (): Finish => ({ _tag: "Finish" }),
  /** Append these items and ask the model again (self-correction). */
  continueWith: (items: ReadonlyArray<Item>): ContinueWith => ({ _tag: "ContinueWith", items }),
  /** End the run as paused; `resume()` continues. */
  pause: (reason = "paused"): Pause => ({ _tag: "Pause", reason })
} as const
