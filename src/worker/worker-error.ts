import { TaggedError } from "../error/tagged-error.ts"
import type { LlmError } from "../llm/llm-error.ts"
import { describeSafely } from "./describe-safely.ts"
import type { PartialResponse } from "../timeline/assistant-response.ts"

/**
 * The worker object was replaced by `lock()` / `unlock()` (`retiredBy`); use the worker that call returned. The
 * message names both objects: `worker.lock(); worker.run(…)` is the usual way to get here.
 */
export class StaleWorker extends TaggedError("StaleWorker")<{
  readonly method: string
  readonly retiredBy: "lock" | "unlock"
  readonly message: string
}> {}

/** A Mutable-only operation was called on a cache-locked worker (reachable only from plain JS or a cast). */
export class WorkerLocked extends TaggedError("WorkerLocked")<{ readonly method: string; readonly message: string }> {}

/** `run` / `resume` was called while another run of the same worker is in progress. */
export class WorkerBusy extends TaggedError("WorkerBusy")<{ readonly message: string }> {}

/**
 * The run was cancelled (`worker.cancel()`, the run's signal, or fiber interruption). `reason` (also `cause`):
 * the run signal's `reason`, or what was passed to `worker.cancel(reason)`; absent when none was given.
 * `partial`: when a response was streaming, what it had produced (text, reasoning, usage so far); none of it
 * entered history.
 */
export class Cancelled extends TaggedError("Cancelled")<{
  readonly message: string
  readonly partial?: PartialResponse
  readonly reason?: unknown
  readonly cause?: unknown
}> {}

/** @internal A `Cancelled` for `reason` (undefined: none given). The message names the reason, bounded. */
export const cancelledFor = (reason: unknown, partial?: PartialResponse): Cancelled => {
  const extra = partial === undefined ? {} : { partial }
  if (reason === undefined) return new Cancelled({ message: "Cancelled", ...extra })
  return new Cancelled({ message: `Cancelled (${describeSafely(reason)})`, reason, cause: reason, ...extra })
}

/**
 * @internal The cancellation a run signal stands for: the run aborts its signal with its own `Cancelled`, which
 * is returned as it is (a caller's signal is forwarded into it); any other reason is wrapped.
 */
export const cancelledBy = (signal: AbortSignal, partial?: PartialResponse): Cancelled => {
  const reason: unknown = signal.reason
  if (reason instanceof Cancelled) return partial === undefined ? reason : cancelledFor(reason.reason, partial)
  return cancelledFor(reason, partial)
}

/**
 * A hook ended the run on purpose (cancel / abort, or a stream hook's pause). `partial`: when a stream hook
 * aborted a response, what it had produced until then.
 */
export class HookAborted extends TaggedError("HookAborted")<{
  readonly point: string
  readonly reason: string
  readonly message: string
  readonly partial?: PartialResponse
}> {}

/** A hook threw, rejected, failed its Effect, or returned something that is not a result of its hook point. */
export class HookFailed extends TaggedError("HookFailed")<{
  readonly point: string
  readonly message: string
  readonly cause: unknown
}> {}

/**
 * The LLM client failed (after its own retries). `partial`: when the failure came while the response streamed,
 * what it had produced until then (text, reasoning, usage so far); none of it entered history.
 */
export class ClientFailed extends TaggedError("ClientFailed")<{
  readonly error: LlmError
  readonly message: string
  readonly partial?: PartialResponse
}> {}

/** The run made more model requests than `maxTurns` allows. */
export class MaxTurnsExceeded extends TaggedError("MaxTurnsExceeded")<{ readonly maxTurns: number; readonly message: string }> {}

/** A request while cache-locked would change the locked prefix (bytes, tool set). */
export class CacheLockViolation extends TaggedError("CacheLockViolation")<{
  readonly kind: "prefix_bytes" | "tool_set"
  readonly message: string
}> {}

/** A bug or an unexpected throw inside the worker machinery (e.g. a scheme refusing to encode the request). */
export class WorkerDefect extends TaggedError("WorkerDefect")<{ readonly message: string; readonly cause: unknown }> {}

/**
 * `lock()` was called while tool calls in the history have no result (a paused batch, or a history set with
 * unanswered calls). Their results would have to be inserted inside the locked prefix; `resume()` first (or
 * drop the calls with `truncateHistory`). See decision 0018.
 */
export class CallsPending extends TaggedError("CallsPending")<{
  readonly callIds: ReadonlyArray<string>
  readonly message: string
}> {}

/**
 * An `events()` iterator was not read fast enough and its buffer reached its bound; events after that point were
 * dropped. The iterator yields everything buffered before the loss, then throws this, then is done.
 */
export class EventBufferOverflow extends TaggedError("EventBufferOverflow")<{
  readonly limit: "events" | "chars"
  readonly max: number
  readonly message: string
}> {}

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

/** By tag, as for any tagged error. Never throws, whatever `u` is (a throwing `_tag` getter, a revoked Proxy). */
export const isWorkerError = (u: unknown): u is WorkerError => {
  try {
    if (typeof u !== "object" || u === null) return false
    const tag: unknown = (u as { _tag?: unknown })._tag
    return typeof tag === "string" && RUN_TAGS.has(tag)
  } catch {
    return false
  }
}

const RUN_CLASSES = [Cancelled, HookAborted, HookFailed, ClientFailed, MaxTurnsExceeded, CacheLockViolation, WorkerBusy, StaleWorker, WorkerDefect]

/**
 * True only for instances of the worker's own error classes: what a run rejects with must be one, not a lookalike
 * `{ _tag: "Cancelled" }` a client or tool threw. Never throws (`instanceof` on a revoked Proxy would).
 */
export const isOwnWorkerError = (u: unknown): u is WorkerError => {
  try {
    return RUN_CLASSES.some((c) => u instanceof c)
  } catch {
    return false
  }
}
