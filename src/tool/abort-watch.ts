/**
 * One abort listener per signal, however many calls wait on it. Node 20's EventTarget makes each
 * add/removeEventListener pair cost microseconds, which would dominate a tool call that takes one. The waiting
 * calls of a signal form a doubly linked list: joining and leaving it are a few field writes, with no hashing
 * (a `Set` of fresh closures gives each one an identity hash) and no closure to return.
 */
export interface AbortWatch {
  /** @internal */ run: (() => void) | undefined
  /** @internal */ prev: AbortWatch | undefined
  /** @internal */ next: AbortWatch | undefined
  /** @internal */ list: WatchList | undefined
}

interface WatchList {
  head: AbortWatch | undefined
}

const lists = new WeakMap<AbortSignal, WatchList>()

/** Runs `onAbort` (once) when `signal` aborts, until `unwatchAbort` is called on the returned watch. */
export const watchAbort = (signal: AbortSignal, onAbort: () => void): AbortWatch => {
  let list = lists.get(signal)
  if (list === undefined) {
    const created: WatchList = { head: undefined }
    signal.addEventListener(
      "abort",
      () => {
        let watch = created.head
        created.head = undefined
        while (watch !== undefined) {
          const next = watch.next
          const run = watch.run
          watch.run = undefined
          watch.list = undefined
          watch.prev = undefined
          watch.next = undefined
          run?.()
          watch = next
        }
      },
      { once: true }
    )
    lists.set(signal, created)
    list = created
  }
  const watch: AbortWatch = { run: onAbort, prev: undefined, next: list.head, list }
  if (list.head !== undefined) list.head.prev = watch
  list.head = watch
  return watch
}

/** Stops a watch; harmless when it already ran or was stopped. */
export const unwatchAbort = (watch: AbortWatch): void => {
  const list = watch.list
  if (list === undefined) return
  if (watch.prev === undefined) list.head = watch.next
  else watch.prev.next = watch.next
  if (watch.next !== undefined) watch.next.prev = watch.prev
  watch.run = undefined
  watch.list = undefined
  watch.prev = undefined
  watch.next = undefined
}

/** Runs `onAbort` when `signal` aborts; returns the function that stops watching. */
export const whenAborted = (signal: AbortSignal, onAbort: () => void): (() => void) => {
  const watch = watchAbort(signal, onAbort)
  return () => unwatchAbort(watch)
}
