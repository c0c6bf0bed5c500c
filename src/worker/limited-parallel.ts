/**
 * `Promise.all(items.map(run))` with at most `limit` runs in flight; results keep the order of `items`. A model
 * may ask for thousands of calls in one response, and starting them all at once would start thousands of tool
 * bodies (sockets, processes, memory) at once. `run` must not reject (the worker's per-call runner turns every
 * failure into that call's result).
 */
export const mapLimited = <A, B>(items: ReadonlyArray<A>, limit: number, run: (item: A) => Promise<B>): Promise<Array<B>> =>
  // The usual batch (one call, a few) fits the limit: no lanes, one promise per call and one for the batch.
  items.length <= limit ? Promise.all(items.map((item) => run(item))) : inLanes(items, limit, run)

const inLanes = async <A, B>(items: ReadonlyArray<A>, limit: number, run: (item: A) => Promise<B>): Promise<Array<B>> => {
  const results = new Array<B>(items.length)
  let next = 0
  const lane = async (): Promise<void> => {
    while (next < items.length) {
      const at = next++
      results[at] = await run(items[at] as A)
    }
  }
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane))
  return results
}
