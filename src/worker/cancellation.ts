import { anchorShapes } from "../llm/shape-anchor.ts"
import { type AbortWatch, unwatchAbort, watchAbort, whenAborted } from "../tool/abort-watch.ts"
import { cancelledBy, cancelledFor } from "./worker-error.ts"

/**
 * The cancellation scope of ONE run. Each run gets a fresh controller, linked to the caller's signal for the
 * run's lifetime only, so a `cancel()` while idle or left over from an earlier run can never reach a later run.
 */
export class RunControl {
  readonly #controller = new AbortController()
  readonly #external: AbortSignal | undefined
  readonly #forward = (): void => this.cancel(this.#external?.reason)

  constructor(external: AbortSignal | undefined) {
    this.#external = external
    if (external?.aborted) this.cancel(external.reason)
    else external?.addEventListener("abort", this.#forward, { once: true })
  }

  get signal(): AbortSignal {
    return this.#controller.signal
  }

  get cancelled(): boolean {
    return this.#controller.signal.aborted
  }

  /** `reason`: the caller signal's reason, or what `worker.cancel(reason)` was given; kept on the `Cancelled`. */
  cancel(reason?: unknown): void {
    this.#controller.abort(cancelledFor(reason))
  }

  throwIfCancelled(): void {
    if (this.cancelled) throw cancelledBy(this.#controller.signal)
  }

  /** Detaches from the caller's signal; the run is over. */
  dispose(): void {
    this.#external?.removeEventListener("abort", this.#forward)
  }
}

/**
 * Awaits `promise` unless `signal` fires first, in which case it rejects with `onAbort()` at once and the
 * promise is left to settle on its own (its rejection is swallowed). This is what keeps a client or hook that
 * ignores its signal from holding the run hostage. It runs once per stream event, so it watches the signal
 * through the shared per-signal watcher rather than adding an EventTarget listener each time.
 */
export const raceAbort = <A>(promise: Promise<A>, signal: AbortSignal, onAbort: () => unknown): Promise<A> => {
  if (signal.aborted) {
    promise.catch(() => undefined)
    return Promise.reject(onAbort())
  }
  return new Promise<A>((resolve, reject) => {
    const stop = whenAborted(signal, () => reject(onAbort()))
    promise.then(
      (value) => {
        stop()
        resolve(value)
      },
      (error: unknown) => {
        stop()
        reject(error)
      }
    )
  })
}

/**
 * `raceAbort` for a sequence of promises awaited one after another (a stream's `next()` calls): one abort watch
 * for the whole sequence instead of a watch, two settle closures and a stop function per promise. The watch
 * rejects whichever promise is being awaited when the signal fires; `stop()` must be called when the sequence ends.
 */
export class AbortRace {
  #reject: ((reason: unknown) => void) | undefined = undefined
  readonly #watch: AbortWatch

  constructor(
    readonly signal: AbortSignal,
    readonly onAbort: () => unknown
  ) {
    this.#watch = watchAbort(signal, () => {
      const reject = this.#reject
      this.#reject = undefined
      reject?.(onAbort())
    })
  }

  /** Settles as `promise` does, or rejects with `onAbort()` as soon as the signal fires (the promise left to settle). */
  next<A>(promise: Promise<A>): Promise<A> {
    if (this.signal.aborted) {
      promise.catch(() => undefined)
      return Promise.reject(this.onAbort())
    }
    return new Promise<A>((resolve, reject) => {
      this.#reject = reject
      // After an abort the promise's own outcome is ignored (a settled promise stays settled) and never unhandled.
      promise.then(resolve, reject)
    })
  }

  stop(): void {
    this.#reject = undefined
    unwatchAbort(this.#watch)
  }
}

// Made per run and dead between runs: one of each kept so V8 keeps their shapes and the code optimised for them,
// Node's AbortController, AbortSignal and abort-listener shapes included (`shape-anchor.ts`).
// The run's signal is anchored as a run leaves it: watched by a stream's race (and by a request's signals,
// anchored in response-stream.ts).
const anchoredRun = new RunControl(undefined)
anchorShapes(anchoredRun, new AbortRace(anchoredRun.signal, () => undefined), new RunControl(new AbortController().signal))
