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

/** Starts the benchmark plugin as its own process and waits for it to register with `hostUrl`. */
export const startPluginChild = async (hostUrl: string): Promise<{ child: ChildProcess; origin: string; rssBytes: () => number; stop: () => Promise<void> }> => {
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
  const stop = async () => {
    const exited = new Promise((r) => child.once("exit", r))
    child.kill("SIGTERM")
    await exited
  }
  return { child, origin, rssBytes, stop }
}

export const envSeconds = (name: string, fallback: number): number => {
  const v = Number(process.env[name])
  return Number.isFinite(v) && v > 0 ? v : fallback
}
