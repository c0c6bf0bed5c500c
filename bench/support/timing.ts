import { do_not_optimize, measure } from "mitata"
import { calibrateKernel, coreSlowdown, kernelBestNs } from "./core-speed.ts"

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
/** The process's CPU time (user + system of every thread), in ns. */
export const cpuNow = (): number => {
  const used = process.cpuUsage()
  return (used.user + used.system) * 1e3
}

const clock: { readonly now?: () => number } = process.env["BENCH_CLOCK"] === "cpu" ? { now: cpuNow } : {}

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

export interface SteadyOptions {
  /** Rounds: every op is measured once per round, op after op. */
  readonly rounds?: number
  /** Samples per op and round (mitata's, after its own warm-up call; no GC before them). */
  readonly samples?: number
  /** Least run time per op and round, in ns of the benchmark's clock (for ops far shorter than a millisecond). */
  readonly cpuNsPerRound?: number
  /** Untimed runs of every op after the one full GC, before the first round: the heap grows back to its steady size. */
  readonly warmupRuns?: number
  /** A round whose kernel probe (before or after it) ran slower than this many times its best is measured again. */
  readonly maxSlowdown?: number
  /** How many times one op's round is measured again before it is kept as it is (and counted unsteady). */
  readonly maxRepeats?: number
  /**
   * Measurements taken again, at most, as a share of all op-rounds: on a machine that stays slow the comparison
   * costs at most this much more, and what it could not measure at speed is counted unsteady.
   */
  readonly maxRepeatShare?: number
  /** How long to wait, at most, for the core to be back at speed before one measurement (probing every 20 ms). */
  readonly maxWaitMs?: number
  /** The comparison's whole waiting budget, in ms per op-round. */
  readonly waitBudgetMsPerRound?: number
  /** Measurements at speed an op needs for its result to be taken from them alone. */
  readonly minAtSpeed?: number
  /**
   * On the wall clock, a measurement during which the process got less than this share of a core (CPU time over
   * wall time) counts as not at speed either: other processes took the core, and their time is in the samples.
   */
  readonly minCpuShare?: number
  /** The clock samples are read with, in ns; `BENCH_CLOCK`'s choice when absent. */
  readonly now?: () => number
}

/** How steady the core was while a comparison ran, from the kernel probed around every measurement. */
export interface Steadiness {
  /** Op-rounds kept (ops × rounds). */
  readonly rounds: number
  /** Measurements taken, repeats included. */
  readonly measured: number
  /** Measurements with the kernel within `maxSlowdown` of its best, judged against the final best probe. */
  readonly atSpeed: number
  /** Measurements taken again because the kernel ran slow around them. */
  readonly repeated: number
  /** Ops with fewer than `minAtSpeed` measurements at speed, reported from all their rounds. */
  readonly unsteadyOps: number
  readonly ops: number
  /** Whether samples were read on a CPU-time clock (then the core's share is not part of "at speed"). */
  readonly cpuClock: boolean
  readonly minAtSpeed: number
  /** Milliseconds spent waiting for the core before measuring. */
  readonly waitedMs: number
  /** The best kernel probe, in ns. */
  readonly kernelBestNs: number
}

/** One measurement of one op in one round, with the kernel's slowdown around it. */
export interface Attempt {
  readonly op: number
  readonly round: number
  readonly timing: Timing
  /** The slower of the two kernel probes around the measurement, in ns. */
  readonly kernelNs: number
  /** `kernelNs` relative to the best probe of the whole comparison. */
  readonly slowdown: number
  /**
   * The process's CPU time over the wall time the measurement took: under 1 when other processes held the core
   * (a wall-clock sample then counts their time too). GC helper threads can push it over 1.
   */
  readonly cpuShare: number
  readonly kept: boolean
}

export interface SteadyCompared extends Compared {
  /** Coefficient of variation of the per-round p50s the result is taken from. */
  readonly cv: number
  /** Whether the op had at least `minAtSpeed` measurements at speed (its result is theirs); else it is every kept round's. */
  readonly steady: boolean
  /** Its measurements at speed. */
  readonly atSpeed: number
}

export interface SteadyComparison {
  readonly results: ReadonlyArray<SteadyCompared>
  readonly steadiness: Steadiness
  /** Every measurement taken, repeated ones included: the figures behind `steadiness`. */
  readonly attempts: ReadonlyArray<Attempt>
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

const runOnce = async (op: Op): Promise<void> => {
  if (typeof op === "function") do_not_optimize(await op())
  else do_not_optimize(await op.run(op.setup() as never))
}

const measureNoGc = async (op: Op, samples: number, cpuNs: number, now: { readonly now?: () => number }): Promise<Timing> => {
  const options = { gc: false, min_samples: samples, min_cpu_time: cpuNs, ...now }
  return timingOf(
    typeof op === "function"
      ? await measure(kept(op), options)
      : await measure(
          function* () {
            yield { [0]: op.setup, bench: keptWith(op.run as (input: unknown) => unknown) }
          },
          options
        )
  )
}

/** Coefficient of variation (standard deviation / mean). */
export const coefficientOfVariation = (xs: ReadonlyArray<number>): number => {
  if (xs.length < 2) return 0
  const mean = xs.reduce((a, b) => a + b, 0) / xs.length
  const variance = xs.reduce((a, b) => a + (b - mean) ** 2, 0) / (xs.length - 1)
  return Math.sqrt(variance) / mean
}

/**
 * `compareOps` that knows when the core ran slow (decision 0091). One full GC and `warmupRuns` untimed runs of
 * every op first; then `rounds` rounds of `samples` samples per op with no GC before them (mitata's `gc()` before
 * every measurement left the heap to regrow during the samples, decision 0083). A fixed kernel
 * (support/core-speed.ts) is probed right before and right after every measurement: when the core is slow before,
 * it waits (up to `maxWaitMs`) for it to come back; when the kernel ran more than `maxSlowdown` × its best around a
 * measurement, that op's round is measured again, up to `maxRepeats` times, so what is reported was measured at
 * the machine's normal speed; on the wall clock a measurement during which the process got less than `minCpuShare`
 * of a core counts as slow too (other processes' time is in its samples). Each op reports the median of its
 * measurements at speed, repeats included, when it has `minAtSpeed` of them, else of all its rounds, marked
 * unsteady. Nothing is scaled: a figure is either measured at speed or said not to be.
 * Repeats and waits have budgets (`maxRepeatShare`, `waitBudgetMsPerRound`), so a machine that stays slow costs a
 * bounded amount of extra time and shows up as unsteady rounds in the result instead.
 */
export const compareOpsSteady = async (ops: ReadonlyArray<Op>, options: SteadyOptions = {}): Promise<SteadyComparison> => {
  const rounds = options.rounds ?? 15
  const samples = options.samples ?? 12
  const cpuNs = options.cpuNsPerRound ?? 0
  const warmupRuns = options.warmupRuns ?? 12
  const maxSlowdown = options.maxSlowdown ?? 1.25
  const maxRepeats = options.maxRepeats ?? 3
  const maxWaitMs = options.maxWaitMs ?? 300
  const minAtSpeed = Math.min(options.minAtSpeed ?? 4, rounds)
  const minCpuShare = options.minCpuShare ?? 0.85
  const now = options.now === undefined ? clock : { now: options.now }
  // Read on CPU time, a sample does not count the time other processes held the core: only the kernel decides.
  const cpuClock = now.now !== undefined
  let repeatBudget = Math.ceil((options.maxRepeatShare ?? 0.25) * ops.length * rounds)
  let waitBudgetMs = (options.waitBudgetMsPerRound ?? 20) * ops.length * rounds
  if (kernelBestNs() === Infinity) await calibrateKernel()
  if (typeof globalThis.gc === "function") globalThis.gc()
  for (const op of ops) {
    for (let i = 0; i < warmupRuns; i++) await runOnce(op)
    coreSlowdown()
  }
  const measured: Array<Omit<Attempt, "slowdown">> = []
  let repeated = 0
  let waitedMs = 0
  for (let round = 0; round < rounds; round++) {
    for (const [i, op] of ops.entries()) {
      for (let attempt = 0; ; attempt++) {
        let before = coreSlowdown()
        for (let waited = 0; before.slowdown > maxSlowdown && waited < maxWaitMs && waitBudgetMs > 0; waited += 20) {
          await sleep(20)
          waitedMs += 20
          waitBudgetMs -= 20
          before = coreSlowdown()
        }
        const wall0 = process.hrtime.bigint()
        const cpu0 = cpuNow()
        const timing = await measureNoGc(op, samples, cpuNs, now)
        const cpuShare = (cpuNow() - cpu0) / Number(process.hrtime.bigint() - wall0)
        const after = coreSlowdown()
        const kernelNs = Math.max(before.ns, after.ns)
        const fast = kernelNs / kernelBestNs() <= maxSlowdown && (cpuClock || cpuShare >= minCpuShare)
        const keep = fast || attempt === maxRepeats || repeatBudget === 0
        measured.push({ op: i, round, timing, kernelNs, cpuShare, kept: keep })
        if (keep) break
        repeated++
        repeatBudget--
      }
    }
  }
  // Judged against the best probe of the whole run: an early round may have looked steady against a best that
  // later probes beat.
  const best = kernelBestNs()
  const attempts: ReadonlyArray<Attempt> = measured.map((a) => ({ ...a, slowdown: a.kernelNs / best }))
  const kept = attempts.filter((a) => a.kept)
  // What each op reports: its measurements at speed, repeated ones included, when it has enough of them; else its
  // kept rounds as they came, and the op is counted unsteady (the table can mark it).
  const atSpeed = (a: Attempt): boolean => a.slowdown <= maxSlowdown && (cpuClock || a.cpuShare >= minCpuShare)
  const pools = ops.map((_, i) => {
    const steady = attempts.filter((a) => a.op === i && atSpeed(a))
    return steady.length >= minAtSpeed ? { rows: steady, steady: true } : { rows: kept.filter((a) => a.op === i), steady: false }
  })
  const baseP50 = median((pools[0] as { readonly rows: ReadonlyArray<Attempt> }).rows.map((a) => a.timing.p50))
  const keptBase = kept.filter((a) => a.op === 0)
  const results = pools.map(({ rows, steady }, i) => {
    const p50s = rows.map((a) => a.timing.p50)
    const roundRatios = kept.filter((a) => a.op === i).map((a, r) => a.timing.p50 / (keptBase[r] as Attempt).timing.p50)
    return {
      avg: median(rows.map((a) => a.timing.avg)),
      p50: median(p50s),
      p99: median(rows.map((a) => a.timing.p99)),
      ratio: median(p50s) / baseP50,
      ratioMin: Math.min(...roundRatios),
      ratioMax: Math.max(...roundRatios),
      cv: coefficientOfVariation(p50s),
      steady,
      atSpeed: attempts.filter((a) => a.op === i && atSpeed(a)).length
    }
  })
  return {
    results,
    steadiness: {
      rounds: kept.length,
      atSpeed: attempts.filter(atSpeed).length,
      measured: attempts.length,
      repeated,
      unsteadyOps: results.filter((r) => !r.steady).length,
      ops: ops.length,
      cpuClock,
      minAtSpeed,
      waitedMs,
      kernelBestNs: best
    },
    attempts
  }
}

/** A table's footnote, from the `steadiness` of its comparisons: lets a reader see whether the core stayed at speed. */
export const steadinessNote = (all: ReadonlyArray<Steadiness>, rounds: number, samples: number): string => {
  const sum = (pick: (s: Steadiness) => number) => all.reduce((a, s) => a + pick(s), 0)
  const measured = sum((s) => s.measured)
  const atSpeed = sum((s) => s.atSpeed)
  const repeated = sum((s) => s.repeated)
  const unsteady = sum((s) => s.unsteadyOps)
  const best = Math.min(...all.map((s) => s.kernelBestNs))
  const waited = sum((s) => s.waitedMs)
  const least = [...new Set(all.map((s) => s.minAtSpeed))].join(" or ")
  return (
    `Core speed (decision 0091): every op measured in ${rounds} rounds of ${samples} samples after one GC and a warm-up, a fixed kernel ` +
    `(best ${(best / 1e3).toFixed(1)} µs) probed before and after each measurement, which is at speed when the kernel ran within 1.25× its best around it` +
    (all.every((s) => s.cpuClock) ? "; " : " and, on the wall clock, the process held the core (CPU time ≥ 0.85× wall time); ") +
    `${repeated} of ${measured} measurements were repeats of a round that was not, ` +
    `${(waited / 1e3).toFixed(1)} s spent waiting for the core. ${atSpeed} of ${measured} (${((100 * atSpeed) / measured).toFixed(0)} %) ran at speed; each figure is the median of its op's measurements at speed` +
    (unsteady === 0
      ? `, and every op had at least ${least}: a steady run.`
      : `, except ${unsteady} of ${sum((s) => s.ops)} ops with fewer than ${least} at speed, whose figures take all their rounds and are marked \`~\`: the core ran slow through them, read them as low.`)
  )
}
