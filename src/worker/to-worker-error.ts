import { isLlmError } from "../llm/llm-error.ts"
import { describeThrown } from "../tool/tool-constructors.ts"
import { Cancelled, ClientFailed, type WorkerError, WorkerDefect, isWorkerError } from "./worker-error.ts"

/** Maps whatever ended a run onto the `WorkerError` union; a cancelled client call is a `Cancelled` run. */
export const toWorkerError = (thrown: unknown): WorkerError => {
  if (isWorkerError(thrown)) return thrown
  if (isLlmError(thrown)) {
    return thrown._tag === "LlmCancelled"
      ? new Cancelled({ message: "Cancelled" })
      : new ClientFailed({ error: thrown, message: thrown.message })
  }
  return new WorkerDefect({ message: `unexpected failure inside the worker: ${describeThrown(thrown)}`, cause: thrown })
}
