import { cancelLateBody, ignore } from "./abort-bound.ts"

/**
 * The abort of one streamed attempt, carried to the transport's own waits as well as to `fetch` (decision 0092).
 *
 * A deadline or a cancel aborts the attempt's signal, and `fetch` is meant to turn that into a rejected request
 * or body read. Node's fetch can miss it: it follows the caller's signal through a weak reference that a
 * collection may clear (nodejs/undici#3644). Then a stream of keep-alives outlives its deadline. So `abort()`
 * also rejects the pending `fetch` itself and cancels the body reader (a pending read then reports done, and the
 * cancel reaches the request and closes its connection).
 *
 * Every abort of an attempt goes through `abort()`, so nothing listens on the signal: the two listeners per
 * attempt that `abort-bound.ts` would add cost about 5 µs on Node 20, where this costs about 2 µs
 * (bench/short-answer.ts).
 */
export class AttemptAbort {
  readonly #controller = new AbortController()
  #reader: ReadableStreamDefaultReader<Uint8Array> | undefined
  #rejectFetch: ((reason: unknown) => void) | undefined

  /** The signal handed to `fetch`. */
  get signal(): AbortSignal {
    return this.#controller.signal
  }

  /** Aborts the attempt once: the signal, a pending `fetch` and the watched reader. */
  abort(reason?: unknown): void {
    if (this.#controller.signal.aborted) return
    this.#controller.abort(reason)
    const why: unknown = this.#controller.signal.reason
    this.#rejectFetch?.(why)
    this.#reader?.cancel(why).catch(ignore)
  }

  /**
   * `fetch(input, init)` with this attempt's signal, rejecting with the abort's reason as soon as the attempt is
   * aborted whether or not `fetch` notices. A response that still arrives has its body cancelled.
   */
  fetch(fetch: typeof globalThis.fetch, input: string, init: Omit<RequestInit, "signal">): Promise<Response> {
    if (this.#controller.signal.aborted) return Promise.reject(this.#controller.signal.reason)
    // A `fetch` of the user's may answer with a plain value: it is the response, as `await` would take it.
    const pending = Promise.resolve(fetch(input, { ...init, signal: this.#controller.signal }))
    return new Promise<Response>((resolve, reject) => {
      this.#rejectFetch = (reason) => {
        reject(reason)
        cancelLateBody(pending, reason)
      }
      pending.then(
        (response) => {
          this.#rejectFetch = undefined
          resolve(response)
        },
        (thrown: unknown) => {
          this.#rejectFetch = undefined
          reject(thrown)
        }
      )
    })
  }

  /**
   * Cancels `reader` when the attempt is aborted. A read that reports done while `signal.aborted` is that
   * cancel, not the end of the body: the reading loop checks for it.
   */
  watch(reader: ReadableStreamDefaultReader<Uint8Array>): void {
    this.#reader = reader
  }
}
