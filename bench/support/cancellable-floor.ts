/**
 * The least a hand-written call needs to be cancellable: a promise of its own, settled by the first of the
 * handler's settling and the signal's abort, so that a handler that ignores the signal is not waited for. The
 * signal is watched per call in the cheapest correct way measured (decision 0086): one abort listener per
 * signal, and each call in flight is a node of that signal's linked list (joining and leaving are a few field
 * writes). Also measured, and slower: a listener added and removed per call, and a `Set` or `Map` of the
 * pending calls' rejecters behind one listener. A `Promise.race` against one shared "aborted" promise per
 * signal is not correct: every call leaves a reaction on that promise, which never settles while the signal
 * does not abort, so memory grows with every call.
 */

interface Pending {
  head: CancellableCall | undefined
}

/** `new Promise(capture)` leaves the resolving functions here: no executor closure per call. */
let capturedResolve: ((text: string) => void) | undefined
let capturedReject: ((error: unknown) => void) | undefined
const capture = (resolve: (text: string) => void, reject: (error: unknown) => void): void => {
  capturedResolve = resolve
  capturedReject = reject
}

const lists = new WeakMap<AbortSignal, Pending>()

const pendingOf = (signal: AbortSignal): Pending => {
  let list = lists.get(signal)
  if (list === undefined) {
    const created: Pending = { head: undefined }
    signal.addEventListener(
      "abort",
      () => {
        for (let call = created.head; call !== undefined; call = created.head) call.cancel(signal.reason)
      },
      { once: true }
    )
    lists.set(signal, created)
    list = created
  }
  return list
}

/** One call in flight: a node of its signal's list until it settles, whichever comes first. */
class CancellableCall {
  prev: CancellableCall | undefined = undefined
  next: CancellableCall | undefined
  list: Pending | undefined
  readonly #resolve: (text: string) => void
  readonly #reject: (error: unknown) => void

  constructor(list: Pending, resolve: (text: string) => void, reject: (error: unknown) => void) {
    this.next = list.head
    this.list = list
    this.#resolve = resolve
    this.#reject = reject
    if (list.head !== undefined) list.head.prev = this
    list.head = this
  }

  /** Leaves the list; false when the call has ended already. */
  #leave(): boolean {
    const list = this.list
    if (list === undefined) return false
    if (this.prev === undefined) list.head = this.next
    else this.prev.next = this.next
    if (this.next !== undefined) this.next.prev = this.prev
    this.list = undefined
    this.prev = undefined
    this.next = undefined
    return true
  }

  fulfilled(value: unknown): void {
    if (!this.#leave()) return
    let text: string
    try {
      text = JSON.stringify(value)
    } catch (thrown) {
      this.#reject(thrown)
      return
    }
    this.#resolve(text)
  }

  rejected(thrown: unknown): void {
    if (this.#leave()) this.#reject(thrown)
  }

  cancel(reason: unknown): void {
    if (this.#leave()) this.#reject(new Error("cancelled", { cause: reason }))
  }
}

/**
 * `handler`'s promise as the call's output text, ended at once (rejected) when `signal` aborts first. What the
 * handler settles with after that is dropped, never unhandled.
 */
export const cancellable = (signal: AbortSignal, running: Promise<unknown>): Promise<string> => {
  if (signal.aborted) {
    running.then(undefined, () => undefined)
    return Promise.reject(new Error("cancelled", { cause: signal.reason }))
  }
  const promise = new Promise<string>(capture)
  const call = new CancellableCall(pendingOf(signal), capturedResolve as (text: string) => void, capturedReject as (error: unknown) => void)
  running.then(
    (value: unknown) => call.fulfilled(value),
    (thrown: unknown) => call.rejected(thrown)
  )
  return promise
}
