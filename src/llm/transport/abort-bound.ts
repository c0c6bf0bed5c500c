/**
 * Aborts that take effect whether or not `fetch` carries them (decision 0092).
 *
 * Node's `fetch` links a request to the caller's signal only through a weak reference to the request's own
 * controller (nodejs/undici#3644). After a collection, aborting the caller's signal can leave the request and its
 * body unaware: body reads keep resolving while a server keeps writing. A `fetch` of the user's may ignore the
 * signal in every phase. A deadline or a cancel must not depend on that link, so the helpers here end the
 * caller's wait themselves when the signal aborts. They release the connection through the body stream, whose
 * cancel does reach the request. The stream transport does the same without a listener (`attempt-abort.ts`).
 */

/** Swallows a rejection nobody waits for. */
export const ignore = (): undefined => undefined

/**
 * Cancels the body of a response that arrives after its call was given up, which closes its connection. A
 * `fetch` of the user's may answer anything (no `body`, a getter that throws, a failing cancel): nothing of it
 * escapes.
 */
export const cancelLateBody = (pending: Promise<Response>, reason: unknown): void => {
  pending.then((late) => late.body?.cancel(reason)).catch(ignore)
}

/**
 * `fetch(input, init)` whose promise rejects with the signal's reason as soon as `init.signal` aborts. A response
 * that arrives after the abort anyway has its body cancelled, which closes the connection.
 */
export const fetchBoundByAbort = (fetch: typeof globalThis.fetch, input: string | URL, init: RequestInit): Promise<Response> => {
  const signal = init.signal
  // A `fetch` of the user's may answer with a plain value: it is the response, as `await` would take it.
  const pending = Promise.resolve(fetch(input, init))
  if (signal == null) return pending
  return new Promise<Response>((resolve, reject) => {
    const onAbort = (): void => {
      reject(signal.reason)
      cancelLateBody(pending, signal.reason)
    }
    if (signal.aborted) {
      onAbort()
      return
    }
    signal.addEventListener("abort", onAbort, { once: true })
    pending.then(
      (response) => {
        signal.removeEventListener("abort", onAbort)
        resolve(response)
      },
      (thrown: unknown) => {
        signal.removeEventListener("abort", onAbort)
        reject(thrown)
      }
    )
  })
}

/**
 * Cancels `reader` when `signal` aborts, so a pending read resolves as done at once (and the connection is
 * released) even when the body never learns of the abort. Returns the function that stops watching. A read that
 * reports done while `signal.aborted` is the abort, not the end of the body: callers check for it.
 */
export const cancelReaderOnAbort = (reader: ReadableStreamDefaultReader<Uint8Array>, signal: AbortSignal): (() => void) => {
  const onAbort = (): void => {
    reader.cancel(signal.reason).catch(ignore)
  }
  if (signal.aborted) {
    onAbort()
    return ignore
  }
  signal.addEventListener("abort", onAbort, { once: true })
  return () => signal.removeEventListener("abort", onAbort)
}
