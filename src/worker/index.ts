/** The worker layer's public names. */
export {
  Worker,
  MutableWorker,
  CacheLockedWorker,
  DEFAULT_MAX_PARALLEL_TOOLS,
  DEFAULT_MAX_CALLS_PER_RESPONSE
} from "./worker.ts"
export type { WorkerOptions, RunOptions, LockOptions, RunResult, StructuredRunOptions, StructuredRunResult } from "./worker.ts"
export type { RunReport } from "./turn-loop.ts"
export {
  Hook,
  OnPromptSubmit,
  PreLlmRequest,
  StreamHook,
  PreToolCall,
  PostToolCall,
  OnTurnEnd
} from "./hooks.ts"
export type {
  HookPoint,
  HookFn,
  HookInput,
  HookResult,
  HookSignatures,
  RequestContext,
  ToolCall,
  ToolResult,
  Continue,
  Cancel,
  Abort,
  RewritePrompt,
  RewriteRequest,
  RewriteArguments,
  Skip,
  Deny,
  Pause,
  RewriteResult,
  Finish,
  ContinueWith,
  PromptSubmitResult,
  PreLlmRequestResult,
  StreamHookResult,
  PreToolCallResult,
  PostToolCallResult,
  TurnEndResult,
  PromptSubmitInput,
  PreLlmRequestInput,
  StreamChunkInput,
  TextDeltaInput,
  ToolCallDeltaInput,
  StreamCompleteInput,
  PreToolCallInput,
  PostToolCallInput,
  TurnEndInput,
  AbortInput
} from "./hooks.ts"
export { ToolHook } from "./tool-hooks.ts"
export type {
  ToolHookPoint,
  ToolHookFn,
  ToolHookSignatures,
  TypedToolCall,
  ToolPreCallInput,
  ToolPostCallInput,
  ToolPreCallResult,
  ToolPostCallResult,
  RewriteToolArguments,
  RewriteToolOutput
} from "./tool-hooks.ts"
export type { Subscriber, WorkerEvent, WorkerEventOf, EventsOptions } from "./subscriber.ts"
export { DEFAULT_MAX_BUFFERED_EVENTS, DEFAULT_MAX_BUFFERED_CHARS } from "./subscriber.ts"
export { InvalidItem } from "./owned-items.ts"
export type { CacheReport, LockedPrefix } from "./cache-lock.ts"
export type { ToolOutcome, ToolResultStatus } from "./tool-outcome.ts"
export {
  StaleWorker,
  WorkerLocked,
  WorkerBusy,
  Cancelled,
  HookAborted,
  HookFailed,
  ClientFailed,
  MaxTurnsExceeded,
  CacheLockViolation,
  WorkerDefect,
  CallsPending,
  EventBufferOverflow,
  isWorkerError
} from "./worker-error.ts"
export type { WorkerError } from "./worker-error.ts"
