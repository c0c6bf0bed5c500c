import { spawn } from "node:child_process"
import { fileURLToPath } from "node:url"
import type { ProbePlanEntry } from "./memory-probe.ts"

const REPO = fileURLToPath(new URL("../../..", import.meta.url))
const PROBE = fileURLToPath(new URL("./memory-probe.ts", import.meta.url))

export type { ProbePlanEntry }

export interface ProbeResult {
  /** Each scenario's JSON measurement by scenario name; a scenario missing here crashed or hung the child. */
  readonly measurements: ReadonlyMap<string, Record<string, unknown>>
  readonly code: number | string
  readonly stderr: string
}

/**
 * Runs memory scenarios in one child `node --expose-gc` (so `gc()` is available and the reading is not polluted
 * by vitest's own heap), through tsx as test/cli/cli-process.ts does. A child still running after `timeoutMs`
 * is killed; the scenarios it finished are still reported.
 */
export const runProbes = (plan: ReadonlyArray<ProbePlanEntry>, timeoutMs = 90_000): Promise<ProbeResult> =>
  new Promise((resolve) => {
    const child = spawn(process.execPath, ["--expose-gc", "--import", "tsx", PROBE, JSON.stringify(plan)], {
      cwd: REPO,
      stdio: ["ignore", "pipe", "pipe"]
    })
    let out = ""
    let err = ""
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (out += chunk))
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (err += chunk))
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs)
    child.once("close", (code, signal) => {
      clearTimeout(timer)
      const measurements = new Map<string, Record<string, unknown>>()
      for (const line of out.split("\n")) {
        if (!line.startsWith("PROBE ")) continue
        const measurement = JSON.parse(line.slice("PROBE ".length)) as Record<string, unknown>
        measurements.set(String(measurement["scenario"]), measurement)
      }
      resolve({ measurements, code: code ?? signal ?? "unknown", stderr: err.slice(-4000) })
    })
  })
