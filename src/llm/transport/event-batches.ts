/**
 * The transport works a read at a time: one read completes a batch of events. Handing each event over as its own
 * async-generator step costs a generator resume, an `await` and a promise per event at every generator level (the
 * retry loop and the attempt are two), which made the whole client path half as fast as decoding (decision 0075).
 * The transport's generators therefore yield batches, and `eventsOf` hands their events over one `next()` at a
 * time with an already-settled promise.
 */

/** The events one step of the transport completed. */
export interface EventBatch<E> {
  readonly events: ReadonlyArray<E>
  /**
   * Events read off the wire, which a cancel signal stops between one and the next (the consumer may cancel
   * while handling one); the closing events after a failure or the end are delivered whatever the signal says.
   */
  readonly cancellable: boolean
}

const DONE: IteratorReturnResult<void> = { value: undefined, done: true }

/** One source of batches: the transport's attempt at the request. */
export type Batches<E> = AsyncGenerator<EventBatch<E>, void, undefined>

/**
 * The events of the batches `start()` gives, one by one, as an async generator would yield them. When the
 * batches fail, `retry(error)` gives the batches to go on with (the next attempt; it rejects with the error the
 * caller gets instead) — so the retry loop costs nothing per batch, where a generator delegating to each attempt
 * would cost a step per batch. Before each event of a cancellable batch, `cancelled()` is asked: when it returns
 * an error, the batches' generator is closed (its `finally` blocks run: the request is aborted) and `next()`
 * rejects with that error. Stopping early (`return()`, a `break` out of `for await`) closes the batches'
 * generator too. Calls are served in order even when a caller does not wait for one `next()` before the next.
 */
export const eventsOf = <E>(
  start: () => Batches<E>,
  retry: (error: unknown) => Promise<Batches<E>>,
  cancelled: () => Error | undefined
): AsyncGenerator<E, void, undefined> => {
  let batches: Batches<E> | undefined
  let events: ReadonlyArray<E> = []
  let at = 0
  let cancellable = false
  let finished = false
  /** Calls not yet settled; while one is, a later call waits for it (`last`) rather than racing it. */
  let busy = 0
  let last: Promise<unknown> = Promise.resolve()

  const finish = (): void => {
    finished = true
    events = []
    at = 0
  }

  /** Ends the iteration early: the batches' generator is closed, so its `finally` blocks run. */
  const close = async (): Promise<void> => {
    finish()
    await batches?.return(undefined)
  }

  // The batches to read from: started at the first call (a refusal to start rejects that call).
  const pull = (): Promise<IteratorResult<E, void>> => {
    try {
      batches ??= start()
    } catch (error) {
      return Promise.resolve().then(() => onEnd(error))
    }
    return batches.next().then(onBatch, onFailure)
  }

  // A batch arrived: its first event, or the next batch's when it is empty. Runs before the caller's promise
  // settles, so `busy` is already down when the caller asks again.
  const onBatch = (next: IteratorResult<EventBatch<E>, void>): IteratorResult<E, void> | Promise<IteratorResult<E, void>> => {
    if (next.done === true) {
      busy--
      finish()
      return DONE
    }
    events = next.value.events
    cancellable = next.value.cancellable
    at = 0
    if (events.length === 0) return pull()
    return fromBatch()
  }

  // The batches failed: the next ones `retry` gives, or the end with its error.
  const onFailure = (error: unknown): Promise<IteratorResult<E, void>> =>
    retry(error).then((next) => {
      batches = next
      return pull()
    }, onEnd)

  const onEnd = (error: unknown): never => {
    busy--
    finish()
    throw error
  }

  // The next event of the current batch; cancellation closes the batches first and rejects.
  const fromBatch = (): IteratorResult<E, void> | Promise<IteratorResult<E, void>> => {
    const error = cancellable ? cancelled() : undefined
    if (error !== undefined) {
      return close().then(
        () => onEnd(error),
        () => onEnd(error)
      )
    }
    busy--
    return { value: events[at++] as E, done: false }
  }

  // Each call: an event at hand, or the next batch; `busy` counts calls whose result has not settled yet.
  const step = (): Promise<IteratorResult<E, void>> => {
    if (finished) {
      busy--
      return Promise.resolve(DONE)
    }
    if (at < events.length) return Promise.resolve(fromBatch())
    return pull()
  }

  const queued = (run: () => Promise<IteratorResult<E, void>>): Promise<IteratorResult<E, void>> => {
    // Only a caller that did not wait for the previous call waits here, behind it.
    const result = busy === 0 ? run() : last.then(run, run)
    busy++
    last = result
    return result
  }

  const iterator: AsyncGenerator<E, void, undefined> = {
    next: () => {
      // The common case: one caller waiting for each step, an event at hand: a settled promise, nothing queued.
      if (busy === 0 && !finished && at < events.length && !(cancellable && cancelled() !== undefined)) {
        return Promise.resolve({ value: events[at++] as E, done: false })
      }
      return queued(step)
    },
    return: (value?: void | PromiseLike<void>) =>
      queued(async () => {
        try {
          await close()
          await value
          return DONE
        } finally {
          busy--
        }
      }),
    throw: (error?: unknown) =>
      queued(async () => {
        try {
          await close()
        } finally {
          busy--
        }
        throw error
      }),
    [Symbol.asyncIterator]() {
      return iterator
    },
    // `await using` closes it like `return()` (Node 20 defines the symbol; its own generators lack the method).
    [Symbol.asyncDispose]: async () => {
      await iterator.return(undefined)
    }
  }
  return iterator
}
