import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { eventsOf } from "../../src/llm/transport/event-batches.ts"
import type { EventBatch } from "../../src/llm/transport/event-batches.ts"

interface Source {
  readonly batches: AsyncGenerator<EventBatch<number>, void, undefined>
  readonly closed: () => boolean
}

/** A batch generator like the transport's: awaits between batches, may fail after them, records its `finally`. */
const source = (batches: ReadonlyArray<EventBatch<number>>, failWith?: Error): Source => {
  let closed = false
  async function* run(): AsyncGenerator<EventBatch<number>, void, undefined> {
    try {
      for (const batch of batches) {
        await null
        yield batch
      }
      if (failWith !== undefined) throw failWith
    } finally {
      closed = true
    }
  }
  return { batches: run(), closed: () => closed }
}

/** The reference: what the transport's generators did before batching, one generator step per event. */
async function* reference(src: Source, cancelled: () => Error | undefined): AsyncGenerator<number, void, undefined> {
  for await (const batch of src.batches) {
    for (const event of batch.events) {
      if (batch.cancellable) {
        const error = cancelled()
        if (error !== undefined) throw error
      }
      yield event
    }
  }
}

const collect = async (events: AsyncIterable<number>, onEvent: (event: number) => void = () => {}) => {
  const out: Array<number> = []
  try {
    for await (const event of events) {
      out.push(event)
      onEvent(event)
    }
    return { out, error: undefined }
  } catch (error) {
    return { out, error }
  }
}

/** A single source that is never retried: its failure is the caller's. */
const once = (src: Source) => [() => src.batches, (error: unknown) => Promise.reject(error)] as const

const batch = (events: ReadonlyArray<number>, cancellable = true): EventBatch<number> => ({ events, cancellable })

describe("eventsOf", () => {
  it("hands over every event of every batch in order, empty batches skipped", async () => {
    const src = source([batch([1, 2]), batch([]), batch([3]), batch([4, 5], false)])
    expect(await collect(eventsOf(...once(src), () => undefined))).toEqual({ out: [1, 2, 3, 4, 5], error: undefined })
    expect(src.closed()).toBe(true)
  })

  it("delivers a batch before the failure that followed it, then is done", async () => {
    const boom = new Error("boom")
    const src = source([batch([1, 2])], boom)
    const events = eventsOf(...once(src), () => undefined)
    expect(await collect(events)).toEqual({ out: [1, 2], error: boom })
    expect(await events.next()).toEqual({ value: undefined, done: true })
  })

  it("stops between two events of a cancellable batch and closes the source; closing batches are not stopped", async () => {
    let aborted = false
    const cancelled = () => (aborted ? new Error("cancelled") : undefined)
    const src = source([batch([1, 2, 3]), batch([4])])
    const result = await collect(eventsOf(...once(src), cancelled), (event) => {
      if (event === 1) aborted = true
    })
    expect(result.out).toEqual([1])
    expect((result.error as Error).message).toBe("cancelled")
    expect(src.closed()).toBe(true)

    aborted = false
    const closing = source([batch([1]), batch([2, 3], false)])
    const delivered = await collect(eventsOf(...once(closing), cancelled), () => {
      aborted = true
    })
    expect(delivered).toEqual({ out: [1, 2, 3], error: undefined })
  })

  it("closes the source when the consumer stops early", async () => {
    const src = source([batch([1, 2, 3]), batch([4])])
    for await (const event of eventsOf(...once(src), () => undefined)) if (event === 2) break
    expect(src.closed()).toBe(true)
  })

  it("goes on with the batches a retry gives after a failure, and ends with the error a retry refuses with", async () => {
    const first = source([batch([1])], new Error("dropped"))
    const second = source([batch([2, 3])], new Error("dropped again"))
    const errors: Array<string> = []
    const retry = async (error: unknown) => {
      errors.push((error as Error).message)
      if (errors.length === 1) return second.batches
      throw new Error("gave up")
    }
    const result = await collect(eventsOf(() => first.batches, retry, () => undefined))
    expect(result.out).toEqual([1, 2, 3])
    expect((result.error as Error).message).toBe("gave up")
    expect(errors).toEqual(["dropped", "dropped again"])
    expect(first.closed() && second.closed()).toBe(true)
    const refused = await collect(eventsOf(() => { throw new Error("not started") }, retry, () => undefined))
    expect(refused).toEqual({ out: [], error: new Error("not started") })
  })

  it("serves calls that do not wait for each other in order", async () => {
    const src = source([batch([1]), batch([]), batch([2, 3]), batch([4])])
    const events = eventsOf(...once(src), () => undefined)
    const results = await Promise.all([events.next(), events.next(), events.next(), events.next(), events.next(), events.next()])
    expect(results.map((r) => (r.done === true ? "done" : r.value))).toEqual([1, 2, 3, 4, "done", "done"])
  })

  it("yields what a generator yielding each event would, cancelled or failed anywhere (property)", async () => {
    const batches = fc.array(fc.record({ events: fc.array(fc.nat(99), { maxLength: 5 }), cancellable: fc.boolean() }), { maxLength: 8 })
    await fc.assert(
      fc.asyncProperty(batches, fc.option(fc.nat(40)), fc.boolean(), async (shape, cancelAfter, fails) => {
        const run = async (make: (src: Source, cancelled: () => Error | undefined) => AsyncIterable<number>) => {
          const src = source(shape, fails ? new Error("failed") : undefined)
          let seen = 0
          const cancelled = () => (cancelAfter !== null && seen > cancelAfter ? new Error("cancelled") : undefined)
          const result = await collect(make(src, cancelled), () => void seen++)
          return { out: result.out, error: (result.error as Error | undefined)?.message, closed: src.closed() }
        }
        expect(await run((src, cancelled) => eventsOf(...once(src), cancelled))).toEqual(await run(reference))
      }),
      { numRuns: 200 }
    )
  })
})
