import { availableParallelism } from "node:os"
import type { ResourceLimits } from "node:worker_threads"
import { Piscina } from "piscina"
import { whenAborted } from "../tool/abort-watch.ts"
import { describeThrown } from "../tool/describe-thrown.ts"
import { ExecutionFailed } from "../tool/tool-error.ts"

/** What the thread entry (thread-entry.mjs) is sent: plain, structured-cloneable data only. */
export interface IsolatedTask {
  /** A `file:` URL of the handler's module. */
  readonly module: string
  readonly exportName: string
  /** The arguments as the tool's schema decoded them, in the main thread. */
  readonly args: unknown
  readonly callId: string
}

/** What the thread entry answers: always plain strings, so the reply itself cannot fail to clone. */
export type IsolatedReply = { readonly ok: true; readonly output: string } | { readonly ok: false; readonly message: string }

/** Size and per-thread resource limits of an `IsolationPool`. */
export interface IsolationPoolOptions {
  /** Threads at most, each running one call at a time. Default: the machine's available parallelism. */
  readonly maxThreads?: number
  /** Threads kept started while idle. Default 0: an idle pool holds no threads (and never holds the process). */
  readonly minThreads?: number
  /** How long an idle thread above `minThreads` is kept for the next call, in ms. Default 30,000. */
  readonly idleTimeoutMs?: number
  /**
   * Calls allowed to wait for a free thread; past it a call fails at once with `ExecutionFailed`. Default
   * `maxThreads` squared (piscina's "auto").
   */
  readonly maxQueue?: number
  /**
   * V8 limits per thread (heap sizes in MB, stack in MB). A handler that exceeds them kills only its thread and
   * its call fails with `ExecutionFailed`. Default: Node's defaults.
   */
  readonly resourceLimits?: ResourceLimits
  /** Node flags for the threads (e.g. `["--import", "tsx"]` to load TypeScript handler modules). Default: none. */
  readonly execArgv?: ReadonlyArray<string>
}

const ENTRY = new URL("./thread-entry.mjs", import.meta.url).href
const DEFAULT_IDLE_TIMEOUT_MS = 30_000

const positiveInteger = (value: number | undefined, name: string, min: number): void => {
  if (value !== undefined && !(Number.isInteger(value) && value >= min)) {
    throw new RangeError(`IsolationPool: ${name} must be an integer >= ${min}, got ${String(value)}`)
  }
}

/**
 * Worker threads for tools that must be stoppable: a call that times out or is cancelled terminates the thread
 * running it (V8 stops even a busy loop), and the pool starts a fresh one for the next call. One pool can serve
 * many tools; threads are started on demand and never keep the process alive while idle.
 */
export class IsolationPool {
  readonly #pool: Piscina<IsolatedTask, IsolatedReply>
  #closed = false

  constructor(options: IsolationPoolOptions = {}) {
    positiveInteger(options.maxThreads, "maxThreads", 1)
    positiveInteger(options.minThreads, "minThreads", 0)
    positiveInteger(options.idleTimeoutMs, "idleTimeoutMs", 0)
    positiveInteger(options.maxQueue, "maxQueue", 0)
    const maxThreads = options.maxThreads ?? Math.max(1, availableParallelism())
    const minThreads = Math.min(options.minThreads ?? 0, maxThreads)
    this.#pool = new Piscina<IsolatedTask, IsolatedReply>({
      filename: ENTRY,
      maxThreads,
      minThreads,
      idleTimeout: options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS,
      maxQueue: options.maxQueue ?? "auto",
      execArgv: [...(options.execArgv ?? [])],
      ...(options.resourceLimits === undefined ? {} : { resourceLimits: options.resourceLimits })
    })
    // A thread that dies while running nothing is reported here; with no listener the event would be thrown.
    this.#pool.on("error", () => {})
  }

  /** Threads currently started (for monitoring and tests). */
  get threadCount(): number {
    return this.#pool.threads.length
  }

  /** Calls waiting for a free thread. */
  get queueSize(): number {
    return this.#pool.queueSize
  }

  /**
   * Runs one task; `signal` aborting terminates its thread (or drops it from the queue). Any failure of the
   * machinery — a thread that crashed or exited, arguments that cannot be cloned, a full queue, a closed pool —
   * rejects with `ExecutionFailed`.
   * @internal Used by `defineIsolatedTool`.
   */
  run(task: IsolatedTask, signal: AbortSignal): Promise<IsolatedReply> {
    if (this.#closed) return Promise.reject(new ExecutionFailed({ message: "the isolation pool is closed" }))
    // Piscina adds a listener per task to the signal it is given; many parallel calls share one run signal, so
    // each gets its own controller, fed by the shared per-signal watcher.
    const controller = new AbortController()
    const unwatch = signal.aborted ? undefined : whenAborted(signal, () => controller.abort(signal.reason))
    if (signal.aborted) controller.abort(signal.reason)
    return this.#pool.run(task, { signal: controller.signal }).then(
      (reply) => {
        unwatch?.()
        return reply
      },
      (thrown: unknown) => {
        unwatch?.()
        throw new ExecutionFailed({ message: `the tool's thread failed: ${describeThrown(thrown)}` })
      }
    )
  }

  /** Terminates every thread; running calls fail, later calls are refused. */
  async close(): Promise<void> {
    this.#closed = true
    await this.#pool.destroy()
  }
}

let shared: IsolationPool | undefined

/** The pool isolated tools use when given none: created on first use, with the default options. */
export const defaultIsolationPool = (): IsolationPool => {
  shared ??= new IsolationPool()
  return shared
}
