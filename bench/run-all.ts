/**
 * Runs every benchmark (or those named on the command line, e.g. `dispatch stream`), one fresh Node process each
 * (so one's JIT state and heap cannot colour the next), with `--expose-gc`, and passes their Markdown through.
 * `npm run bench` builds the package and the benchmarks, then runs this compiled file with plain Node.
 */
import { spawnSync } from "node:child_process"
import { fileURLToPath } from "node:url"
import { reproduceCommand } from "./support/report.ts"

const BENCHMARKS = ["dispatch", "dispatch-breakdown", "isolation", "definitions", "memory", "stream", "stream-transport", "short-answer", "request", "turn", "cache", "schema-pattern", "plugin-llm", "remote", "remote-load", "host-attacks", "session-scale", "telemetry"] as const

const chosen = process.argv.slice(2)
const unknown = chosen.filter((name) => !(BENCHMARKS as ReadonlyArray<string>).includes(name))
if (unknown.length > 0) {
  console.error(`unknown benchmark(s): ${unknown.join(", ")}; known: ${BENCHMARKS.join(", ")}`)
  process.exit(2)
}

console.log(`# llm-worker benchmarks\n\nCommand: \`${reproduceCommand()}\` (each benchmark runs in its own process)\n`)
let failed = 0
for (const name of chosen.length > 0 ? chosen : BENCHMARKS) {
  // The sibling of this file: the compiled benchmark when run from dist-bench/, the source one under a loader.
  const script = fileURLToPath(new URL(`${name}${import.meta.url.endsWith(".ts") ? ".ts" : ".js"}`, import.meta.url))
  const child = spawnSync(process.execPath, [...process.execArgv, "--expose-gc", script], { stdio: "inherit" })
  if (child.status !== 0) {
    failed++
    console.error(`bench/${name} failed (exit ${String(child.status ?? child.signal)})`)
  }
  console.log("")
}
process.exitCode = failed === 0 ? 0 : 1
