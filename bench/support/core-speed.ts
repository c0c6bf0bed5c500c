/**
 * How fast the core runs right now, read from a fixed kernel (decision 0091). This machine's cores run slow in
 * stretches of up to about a second (decision 0088: the kernel below ran more than 1.25× its best in 44 % of
 * samples on a loaded day), and CPU time does not hide it: the process is not waiting, the core is slower. A
 * benchmark that times the kernel next to every measurement can tell a measurement taken in a slow stretch from
 * one taken at the machine's normal speed.
 *
 * The kernel is an L1-resident `Float64Array` loop: no allocation, no GC, no branches that depend on data, the same
 * work on every call, so its time tracks the core's speed and nothing else. One probe is the fastest of a few
 * short calls on the wall clock: a preemption by another process lands in one call and the minimum drops it, while
 * a slow stretch, which lasts far longer than a probe, slows every call.
 */
import { do_not_optimize } from "mitata"

const CELLS = 512
const PASSES = 48
/** Calls per probe; the probe keeps the fastest. */
const CALLS_PER_PROBE = 5

const cells = new Float64Array(CELLS)
for (let i = 0; i < CELLS; i++) cells[i] = 1 + i / CELLS

/** The fixed work: about 25k dependent multiply-adds on 4 KiB, ~40–80 µs on this machine. */
const kernel = (): number => {
  let acc = 0
  for (let pass = 0; pass < PASSES; pass++) {
    for (let i = 0; i < CELLS; i++) {
      const v = (cells[i] as number) * 0.999_999 + 1e-7
      cells[i] = v
      acc += v
    }
  }
  return acc
}

/** One probe: the kernel's fastest call out of `CALLS_PER_PROBE`, in nanoseconds of wall time. */
export const probeKernelNs = (): number => {
  let best = Infinity
  for (let call = 0; call < CALLS_PER_PROBE; call++) {
    const t0 = process.hrtime.bigint()
    do_not_optimize(kernel())
    const ns = Number(process.hrtime.bigint() - t0)
    if (ns < best) best = ns
  }
  return best
}

/**
 * The fastest probe seen in this process: the core's normal speed. Kept across measurements (the kernel is the
 * same everywhere), so a benchmark's later cells are judged against what its earlier ones saw.
 */
let bestNs = Infinity

/** Probes the core and returns how much slower it is than its best (1 = as fast as ever seen). */
export const coreSlowdown = (): { readonly ns: number; readonly slowdown: number } => {
  const ns = probeKernelNs()
  if (ns < bestNs) bestNs = ns
  return { ns, slowdown: ns / bestNs }
}

/** The best probe so far, in nanoseconds (Infinity before the first). */
export const kernelBestNs = (): number => bestNs

/** Probes until the kernel settles (`count` probes, 1 ms apart): the first reference before any measurement. */
export const calibrateKernel = async (count = 20): Promise<number> => {
  for (let i = 0; i < count; i++) {
    coreSlowdown()
    await new Promise((resolve) => setTimeout(resolve, 1))
  }
  return bestNs
}
