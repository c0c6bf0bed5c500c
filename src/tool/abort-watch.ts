/**
 * One abort listener per signal, however many calls wait on it. Node 20's EventTarget makes each
 * add/removeEventListener pair cost microseconds, which would dominate a tool call that takes one; a Set
 * insertion and deletion per call costs nanoseconds.
 */
const watchers = new WeakMap<AbortSignal, Set<() => void>>()

/** Runs `onAbort` when `signal` aborts; returns the function that stops watching. */
export const whenAborted = (signal: AbortSignal, onAbort: () => void): (() => void) => {
  let waiting = watchers.get(signal)
  if (waiting === undefined) {
    const set = new Set<() => void>()
    signal.addEventListener(
      "abort",
      () => {
        for (const run of set) run()
        set.clear()
      },
      { once: true }
    )
    watchers.set(signal, set)
    waiting = set
  }
  const set = waiting
  set.add(onAbort)
  return () => {
    set.delete(onAbort)
  }
}
