/**
 * Isolation overhead: the same small typed tool called in process (`defineTool`) and in a worker thread
 * (`defineIsolatedTool`, `llm-worker/isolated`), both through `handle.callTool` with a deadline as a Worker calls
 * them. The difference is the price of a hard deadline: the thread hop, two structured clones and piscina's
 * scheduling. Prints a Markdown table with ratios to the in-process call.
 */
import { z } from "zod"
import { IsolationPool, defineIsolatedTool } from "#internal/isolation/index"
import { defineTool } from "#internal/tool/define-tool"
import { registerDefinitions } from "#internal/tool-server/registration"
import { ToolServer } from "#internal/tool-server/tool-server"
import { formatNs, markdownTable, printHeader } from "./support/report.ts"
import { compareOps } from "./support/timing.ts"

const ARGS = '{"city":"Lisbon","days":3}'
const EXPECTED = JSON.stringify({ city: "Lisbon", days: 3, forecast: "sunny", highC: 24 })
const parameters = z.object({ city: z.string(), days: z.int().min(1).max(14).optional() })

const main = async (): Promise<void> => {
  printHeader("Isolation: an in-process tool call against the same call in a worker thread")
  const pool = new IsolationPool({ maxThreads: 1, minThreads: 1 })
  const handle = new ToolServer().handle()
  registerDefinitions(handle, [
    defineTool({ name: "in_process", description: "", parameters, execute: ({ city, days }) => ({ city, days: days ?? 1, forecast: "sunny", highC: 24 }) }),
    defineIsolatedTool({ name: "isolated", description: "", parameters, module: new URL("./support/isolated-handlers.mjs", import.meta.url), export: "forecast", pool })
  ])
  const options = { timeoutMs: 10_000 }
  const contenders = [
    { label: "in process: `defineTool`, `callTool` with `timeoutMs`", call: () => handle.callTool("in_process", ARGS, options) },
    { label: "worker thread: `defineIsolatedTool`, `callTool` with `timeoutMs`", call: () => handle.callTool("isolated", ARGS, options) }
  ]
  for (const c of contenders) {
    const output = await c.call()
    if (output !== EXPECTED) throw new Error(`${c.label} returned ${output}`)
  }
  const results = await compareOps(contenders.map((c) => c.call), 11, 60e6)
  console.log(
    markdownTable(
      ["call", "avg/op", "p50/op", "p99/op", "× in process (p50)", "range over rounds"],
      contenders.map((c, i) => {
        const t = results[i]
        if (t === undefined) throw new Error("missing timing")
        return [c.label, formatNs(t.avg), formatNs(t.p50), formatNs(t.p99), `${t.ratio.toFixed(1)}×`, `${t.ratioMin.toFixed(1)}–${t.ratioMax.toFixed(1)}`]
      })
    )
  )
  const inProcess = results[0]
  const isolated = results[1]
  if (inProcess !== undefined && isolated !== undefined) {
    console.log(`\nIsolation adds about ${formatNs(isolated.p50 - inProcess.p50)} per call (p50), one warm thread, calls one at a time.`)
  }
  await pool.close()
}

await main()
