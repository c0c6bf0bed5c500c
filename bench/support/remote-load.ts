import { spawn, type ChildProcess } from "node:child_process"
import { readFileSync } from "node:fs"
import { createInterface } from "node:readline"
import { fileURLToPath } from "node:url"

/** Closed-loop load: `concurrency` callers, each issuing its next call when the last one settles. */
export interface LoadResult {
  readonly calls: number
  readonly errors: number
  readonly seconds: number
  readonly p50Ms: number
  readonly p99Ms: number
}

export const runLoad = async (call: () => Promise<boolean>, concurrency: number, seconds: number): Promise<LoadResult> => {
  const latencies: Array<number> = []
  let errors = 0
  const started = performance.now()
  const end = started + seconds * 1000
  const loop = async () => {
    while (performance.now() < end) {
      const t0 = performance.now()
      const ok = await call().catch(() => false)
      latencies.push(performance.now() - t0)
      if (!ok) errors++
    }
  }
  await Promise.all(Array.from({ length: concurrency }, loop))
  const elapsed = (performance.now() - started) / 1000
  latencies.sort((a, b) => a - b)
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? Number.NaN
  return { calls: latencies.length, errors, seconds: elapsed, p50Ms: at(0.5), p99Ms: at(0.99) }
}

/** The benchmark plugin's process, as the benchmarks see it. */
export interface PluginChild {
  readonly child: ChildProcess
  /** Where its callback server listens. */
  readonly origin: string
  rssBytes(): number
  /** CPU time (user + system) the process has used so far, in µs; NaN where /proc is not there (not Linux). */
  cpuMicros(): number
  stop(): Promise<void>
}

/** Clock ticks per second of /proc/<pid>/stat's utime and stime: 100 on every Linux configuration Node supports. */
const CLOCK_TICKS = 100

/** Starts the benchmark plugin as its own process and waits for it to register with `hostUrl`. */
export const startPluginChild = async (hostUrl: string): Promise<PluginChild> => {
  // The sibling of this file: compiled (dist-bench/) when the benchmarks run built, the source under a loader.
  const script = fileURLToPath(new URL(`./remote-plugin-child${import.meta.url.endsWith(".ts") ? ".ts" : ".js"}`, import.meta.url))
  const child = spawn(process.execPath, [...process.execArgv.filter((a) => a !== "--expose-gc"), script, hostUrl], { stdio: ["ignore", "pipe", "inherit"] })
  const origin = await new Promise<string>((resolve, reject) => {
    child.once("exit", (code) => reject(new Error(`the plugin child exited (${String(code)}) before it was ready`)))
    createInterface({ input: child.stdout! }).on("line", (line) => {
      if (line.startsWith("ready ")) resolve(line.slice(6))
    })
  })
  const rssBytes = (): number => {
    const status = readFileSync(`/proc/${child.pid}/status`, "utf8")
    return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? Number.NaN) * 1024
  }
  const cpuMicros = (): number => {
    try {
      // Fields after the parenthesised command name: utime and stime are the 12th and 13th.
      const fields = readFileSync(`/proc/${child.pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? []
      return ((Number(fields[11]) + Number(fields[12])) * 1e6) / CLOCK_TICKS
    } catch {
      return Number.NaN
    }
  }
  const stop = async () => {
    const exited = new Promise((r) => child.once("exit", r))
    child.kill("SIGTERM")
    await exited
  }
  return { child, origin, rssBytes, cpuMicros, stop }
}

/** A comma-separated list of positive integers from the environment (`4,8,16`), or `fallback`. */
export const envIntegers = (name: string, fallback: ReadonlyArray<number>): ReadonlyArray<number> => {
  const given = (process.env[name] ?? "").split(",").map((v) => Math.round(Number(v.trim()))).filter((v) => Number.isFinite(v) && v > 0)
  return given.length > 0 ? given : fallback
}

export const envSeconds = (name: string, fallback: number): number => {
  const v = Number(process.env[name])
  return Number.isFinite(v) && v > 0 ? v : fallback
}
