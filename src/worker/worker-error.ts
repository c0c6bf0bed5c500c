import { Data } from "effect"
import type { LlmError } from "../llm/llm-error.ts"

/** The worker object was replaced by `lock()` / `unlock()`; use the worker those calls returned. */
export class StaleWorker extends Data.TaggedError("StaleWorker")<{ readonly method: string; readonly message: string }> {}

/** A Mutable-only operation was called on a cache-locked worker (reachable only from plain JS or a cast). */
export class WorkerLocked extends Data.TaggedError("WorkerLocked")<{ readonly method: string; readonly message: string }> {}

/** `run` / `resume` was called while another run of the same worker is in progress. */
export class WorkerBusy extends Data.TaggedError("WorkerBusy")<{ readonly message: string }> {}

/** The run was cancelled (`worker.cancel()`, the run's signal, or fiber interruption). */
export class Cancelled extends Data.TaggedError("Cancelled")<{ readonly message: string }> {}

/** A hook ended the run on purpose (cancel / abort, or a stream hook's pause). */
export class HookAborted extends Data.TaggedError("HookAborted")<{
  readonly point: string
  readonly reason: string
  readonly message: string
}> {}

/** A hook threw, rejected, failed its Effect, or returned something that is not a result of its hook point. */
export class HookFailed extends Data.TaggedError("HookFailed")<{
  readonly point: string
  readonly message: string
  readonly cause: unknown
}> {}

/** The LLM client failed (after its own retries). */
export class ClientFailed extends Data.TaggedError("ClientFailed")<{ readonly error: LlmError; readonly message: string }> {}

/** The run made more model requests than `maxTurns` allows. */
export class MaxTurnsExceeded extends Data.TaggedError("MaxTurnsExceeded")<{ readonly maxTurns: number; readonly message: string }> {}

/** A request while cache-locked would change the locked prefix (bytes, tool set). */
export class CacheLockViolation extends Data.TaggedError("CacheLockViolation")<{
  readonly kind: "prefix_bytes" | "tool_set"
  readonly message: string
}> {}

/** A bug or an unexpected throw inside the worker machinery (e.g. a scheme refusing to encode the request). */
export class WorkerDefect extends Data.TaggedError("WorkerDefect")<{ readonly message: string; readonly cause: unknown }> {}

/** Every way a run can fail. */
export type WorkerError =
  | Cancelled
  | HookAborted
  | HookFailed
  | ClientFailed
  | MaxTurnsExceeded
  | CacheLockViolation
  | WorkerBusy
  | StaleWorker
  | WorkerDefect

const RUN_TAGS: ReadonlySet<string> = new Set([
  "Cancelled",
  "HookAborted",
  "HookFailed",
  "ClientFailed",
  "MaxTurnsExceeded",
  "CacheLockViolation",
  "WorkerBusy",
  "StaleWorker",
  "WorkerDefect"
])

export const isWorkerError = (u: unknown): u is WorkerError =>
  typeof u === "object" && u !== null && RUN_TAGS.has((u as { _tag?: string })._tag ?? "")
