import { isLlmError } from "../llm/llm-error.ts"
import { describeSafely } from "./describe-safely.ts"
import { Cancelled, ClientFailed, type WorkerError, WorkerDefect, cancelledFor, isOwnWorkerError } from "./worker-error.ts"

/**
 * Maps whatever ended a run onto the `WorkerError` union; a cancelled client call is a `Cancelled` run. Never
 * throws: it runs while a failure is being handled, on values a client, hook or tool may have made hostile.
 */
export const toWorkerError = (thrown: unknown): WorkerError => {
  if (isOwnWorkerError(thrown)) return thrown
  try {
    if (isLlmError(thrown)) {
      const message: unknown = thrown.message
      if (thrown._tag === "LlmCancelled") {
        // The client was cancelled through the run's signal, whose reason is the run's own `Cancelled`.
        const reason: unknown = thrown.reason
        return reason instanceof Cancelled ? reason : cancelledFor(reason)
      }
      return new ClientFailed({ error: thrown, message: typeof message === "string" ? message : describeSafely(thrown) })
    }
  } catch {
    // A lookalike LLM error whose fields throw: a defect like any other unexpected value.
  }
  return new WorkerDefect({ message: `unexpected failure inside the worker: ${describeSafely(thrown)}`, cause: thrown })
}
