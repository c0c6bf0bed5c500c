/**
 * One abort listener per signal, however many calls wait on it. Node 20's EventTarget makes each
 * add/removeEventListener pair cost microseconds, which would dominate a tool call that takes one. The waiting
 * calls of a signal form a doubly linked list: joining and leaving it are a few field writes, with no hashing
 * (a `Set` of fresh closures gives each one an identity hash) and no closure to return. A hot caller may be its
 * own watch (`joinAbort`): a class with the three links and a `run` method, so watching allocates nothing.
 */
export interface AbortWatch {
  /** Called once, when the signal aborts while the watch is joined. */
  run(): void
  /** @internal */ prev: AbortWatch | undefined
  /** @internal */ next: AbortWatch | undefined
  /** @internal Set while joined: the list the watch is in. */
  list: WatchList | undefined
}

/** @internal */
export interface WatchList {
  head: AbortWatch | undefined
}

const lists = new WeakMap<AbortSignal, WatchList>()

/**
 * Runs every watch joined when the signal aborted, each once, in order from the newest. The joined watches move
 * to a list of their own first: one a handler unwatches is still unlinked properly (and never run), and one
 * joined while they run (the signal has aborted already) waits on the signal's list, as before it aborted.
 */
const drain = (list: WatchList): void => {
  const draining: WatchList = { head: list.head }
  list.head = undefined
  for (let watch = draining.head; watch !== undefined; watch = watch.next) watch.list = draining
  for (let watch = draining.head; watch !== undefined; watch = draining.head) {
    draining.head = watch.next
    if (watch.next !== undefined) watch.next.prev = undefined
    watch.list = undefined
    watch.next = undefined
    watch.run()
  }
}

/** Joins `watch` (not joined anywhere) to `signal`'s list: its `run` is called once if the signal aborts before `unwatchAbort`. */
export const joinAbort = (signal: AbortSignal, watch: AbortWatch): void => {
  let list = lists.get(signal)
  if (list === undefined) {
    const created: WatchList = { head: undefined }
    signal.addEventListener("abort", () => drain(created), { once: true })
    lists.set(signal, created)
    list = created
  }
  watch.prev = undefined
  watch.next = list.head
  watch.list = list
  if (list.head !== undefined) list.head.prev = watch
  list.head = watch
}

/** Runs `onAbort` (once) when `signal` aborts, until `unwatchAbort` is called on the returned watch. */
export const watchAbort = (signal: AbortSignal, onAbort: () => void): AbortWatch => {
  const watch: AbortWatch = { run: onAbort, prev: undefined, next: undefined, list: undefined }
  joinAbort(signal, watch)
  return watch
}

/** Stops a watch; harmless when it already ran or was stopped. */
export const unwatchAbort = (watch: AbortWatch): void => {
  const list = watch.list
  if (list === undefined) return
  if (watch.prev === undefined) list.head = watch.next
  else watch.prev.next = watch.next
  if (watch.next !== undefined) watch.next.prev = watch.prev
  watch.list = undefined
  watch.prev = undefined
  watch.next = undefined
}

/** Runs `onAbort` when `signal` aborts; returns the function that stops watching. */
export const whenAborted = (signal: AbortSignal, onAbort: () => void): (() => void) => {
  const watch = watchAbort(signal, onAbort)
  return () => unwatchAbort(watch)
}
