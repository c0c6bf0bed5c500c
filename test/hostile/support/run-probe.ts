import { spawn } from "node:child_process"
import { fileURLToPath } from "node:url"
import type { HostileScheme } from "./wire.ts"

const REPO = fileURLToPath(new URL("../../..", import.meta.url))
const PROBE = fileURLToPath(new URL("./memory-probe.ts", import.meta.url))

export interface ProbeResult {
  /** The scenario's JSON measurement, or undefined when the child printed none (crashed, hung). */
  readonly measurement: Record<string, unknown> | undefined
  readonly code: number | string
  readonly stderr: string
}

/**
 * Runs one memory scenario in a child `node --expose-gc` (so `gc()` is available and the reading is not polluted
 * by vitest's own heap), through tsx as test/cli/cli-process.ts does. A child still running after `timeoutMs`
 * is killed and reported without a measurement.
 */
export const runProbe = (
  scenario: string,
  scheme: HostileScheme,
  baseUrl: string,
  size: number,
  timeoutMs = 40_000
): Promise<ProbeResult> =>
  new Promise((resolve) => {
    const child = spawn(process.execPath, ["--expose-gc", "--import", "tsx", PROBE, scenario, scheme, baseUrl, String(size)], {
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
      const line = out.split("\n").find((l) => l.startsWith("PROBE "))
      resolve({
        measurement: line === undefined ? undefined : (JSON.parse(line.slice("PROBE ".length)) as Record<string, unknown>),
        code: code ?? signal ?? "unknown",
        stderr: err.slice(-4000)
      })
    })
  })
