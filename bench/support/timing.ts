import { do_not_optimize, measure } from "mitata"

export interface Timing {
  /** Mean time per operation, in nanoseconds (includes the GC the operation causes). */
  readonly avg: number
  readonly p50: number
  readonly p99: number
}

/** mitata counts CPU time in nanoseconds; its default is ~0.64 s per measurement. */
const DEFAULT_CPU_NS = 642e6

/**
 * The clock samples are read with. Wall time by default (mitata's own); `BENCH_CLOCK=cpu` reads the process's CPU
 * time instead (`process.cpuUsage`, user + system of every thread, so GC helper threads and worker threads count),
 * which a machine shared with other jobs inflates far less: on 2 loaded cores the wall clock also counts the time
 * the process waited for a core. Every contender of a run is read with the same clock. Microsecond resolution:
 * fine for mitata's batched samples (thousands of calls each), coarse for single calls under ~50 µs.
 */
const clock: { readonly now?: () => number } =
  process.env["BENCH_CLOCK"] === "cpu"
    ? {
        now: (): number => {
          const used = process.cpuUsage()
          return (used.user + used.system) * 1e3
        }
      }
    : {}

/** What `clock` reads, for a benchmark's header. */
export const clockName = (): string => (clock.now === undefined ? "wall clock" : "process CPU time (`BENCH_CLOCK=cpu`)")

/**
 * Calls `op` and hands its result to mitata's sink, so the JIT cannot drop the work as dead code. Arity matters:
 * mitata reads a one-argument function as an iterator-style benchmark, so the no-input form takes none.
 */
const kept = (op: () => unknown) => (): unknown => {
  const result = op()
  do_not_optimize(result)
  return result
}

const keptWith = <I>(op: (input: I) => unknown) => (input: I): unknown => {
  const result = op(input)
  do_not_optimize(result)
  return result
}

const timingOf = (stats: { readonly avg: number; readonly p50: number; readonly p99: number }): Timing => ({
  avg: stats.avg,
  p50: stats.p50,
  p99: stats.p99
})

/** Times one operation (sync or async) with mitata: warm-up, then samples for at least `cpuNs` of run time. */
export const timeOp = async (op: () => unknown, cpuNs = DEFAULT_CPU_NS, minSamples?: number): Promise<Timing> =>
  timingOf(await measure(kept(op), { min_cpu_time: cpuNs, ...clock, ...(minSamples === undefined ? {} : { min_samples: minSamples }) }))

/**
 * Times `op` on a fresh input per iteration; building the input (`setup`) is not counted. Used where the
 * operation caches by identity, so every timed call must see a value it has never seen.
 */
export const timeOpWithFreshInput = async <I>(
  setup: () => I,
  op: (input: I) => unknown,
  cpuNs = DEFAULT_CPU_NS,
  minSamples?: number
): Promise<Timing> =>
  timingOf(
    await measure(
      function* () {
        yield { [0]: setup, bench: keptWith(op) }
      },
      { min_cpu_time: cpuNs, ...clock, ...(minSamples === undefined ? {} : { min_samples: minSamples }) }
    )
  )

export interface Compared extends Timing {
  /** Median over rounds of (this op's p50 / the first op's p50 in the same round). */
  readonly ratio: number
  readonly ratioMin: number
  readonly ratioMax: number
}

const median = (xs: ReadonlyArray<number>): number => {
  const s = [...xs].sort((a, b) => a - b)
  const mid = s.length >> 1
  return s.length % 2 === 1 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2
}

/** An operation to compare: plain, or run on a fresh input per iteration whose building is not timed. */
export type Op = (() => unknown) | { readonly setup: () => unknown; readonly run: (input: never) => unknown }

const timeAny = (op: Op, cpuNs: number, minSamples: number | undefined): Promise<Timing> =>
  typeof op === "function"
    ? timeOp(op, cpuNs, minSamples)
    : timeOpWithFreshInput(op.setup, op.run as (input: unknown) => unknown, cpuNs, minSamples)

/**
 * Times several operations in interleaved rounds and reports medians. On a shared or busy machine the load
 * shifts during a run; measuring every op in every round and taking each round's ratio of medians (p50, which
 * a preempted sample moves less than the mean) to the first op keeps the ratios honest when absolute times move.
 */
export const compareOps = async (
  ops: ReadonlyArray<Op>,
  rounds = 21,
  cpuNsPerRound = 40e6,
  minSamples?: number
): Promise<ReadonlyArray<Compared>> => {
  const perOp: Array<Array<Timing>> = ops.map(() => [])
  for (let round = 0; round < rounds; round++) {
    for (const [i, op] of ops.entries()) (perOp[i] as Array<Timing>).push(await timeAny(op, cpuNsPerRound, minSamples))
  }
  const base = perOp[0] as ReadonlyArray<Timing>
  return perOp.map((timings) => {
    const ratios = timings.map((t, r) => t.p50 / (base[r] as Timing).p50)
    return {
      avg: median(timings.map((t) => t.avg)),
      p50: median(timings.map((t) => t.p50)),
      p99: median(timings.map((t) => t.p99)),
      ratio: median(ratios),
      ratioMin: Math.min(...ratios),
      ratioMax: Math.max(...ratios)
    }
  })
}
