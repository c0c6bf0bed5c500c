/**
 * Runs every benchmark, one fresh Node process each (so one's JIT state and heap cannot colour the next), with
 * `--expose-gc`, and passes their Markdown through. `npm run bench` runs this.
 */
import { spawnSync } from "node:child_process"
import { fileURLToPath } from "node:url"
import { reproduceCommand } from "./support/report.ts"

const BENCHMARKS = ["dispatch.ts", "dispatch-breakdown.ts", "isolation.ts", "definitions.ts", "memory.ts", "stream.ts", "request.ts", "turn.ts", "cache.ts", "plugin-llm.ts", "remote.ts", "remote-load.ts", "telemetry.ts"] as const

console.log(`# llm-worker benchmarks\n\nCommand: \`${reproduceCommand()}\` (each benchmark runs in its own process)\n`)
let failed = 0
for (const file of BENCHMARKS) {
  const script = fileURLToPath(new URL(file, import.meta.url))
  // execArgv carries tsx's loader, so the child runs TypeScript exactly as this process does.
  const child = spawnSync(process.execPath, [...process.execArgv, "--expose-gc", script], { stdio: "inherit" })
  if (child.status !== 0) {
    failed++
    console.error(`bench/${file} failed (exit ${String(child.status ?? child.signal)})`)
  }
  console.log("")
}
process.exitCode = failed === 0 ? 0 : 1
