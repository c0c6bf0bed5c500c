/**
 * Remote tools under churn: calls run closed-loop (LLMW_BENCH_CONCURRENCY, default 16) through the host's
 * dispatch while another loop registers and unregisters tools on the same host as fast as it answers, for
 * LLMW_BENCH_LOAD_SECONDS (default 60). Reports throughput, errors (target 0) and memory at the end, host side
 * (this process, after a GC) and plugin side (its own process, RSS).
 */
import { markdownTable, printHeader, formatBytes } from "./support/report.ts"
import { callIds, startBenchHost } from "./support/remote-host-adapter.ts"
import { envSeconds, runLoad, startPluginChild } from "./support/remote-load.ts"

const ARGS = '{"a":2,"b":3}'
const EXPECTED = '{"sum":5}'

const main = async (): Promise<void> => {
  printHeader("Remote tools under register / unregister churn")
  const seconds = envSeconds("LLMW_BENCH_LOAD_SECONDS", 60)
  const concurrency = Math.round(envSeconds("LLMW_BENCH_CONCURRENCY", 16))
  const host = await startBenchHost()
  const plugin = await startPluginChild(host.url)
  const nextId = callIds()
  const post = async (path: string, body: object): Promise<boolean> => {
    const response = await fetch(`${host.url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) })
    const answer = (await response.json()) as { ok?: boolean }
    return response.ok && answer.ok === true
  }
  let churnOps = 0
  let churnErrors = 0
  let stopChurn = false
  const churn = async (loop: number) => {
    for (let i = 0; !stopChurn; i++) {
      const name = `churn_${loop}_${i % 16}`
      const registered = await post("/api/tools/register", { name, description: "churn", parameters: { type: "object", properties: {} }, callback_url: `${plugin.origin}/tools/${name}`, role: null, source: "bench:churn", timeout_seconds: 5 }).catch(() => false)
      const unregistered = await post("/api/tools/unregister", { name, role: null }).catch(() => false)
      churnOps += 2
      if (!registered) churnErrors++
      if (!unregistered) churnErrors++
    }
  }
  const churning = [churn(0), churn(1)]
  const result = await runLoad(async () => (await host.callTool("add", ARGS, nextId())) === EXPECTED, concurrency, seconds)
  stopChurn = true
  await Promise.all(churning)
  globalThis.gc?.()
  const heap = process.memoryUsage()
  const pluginRss = plugin.rssBytes()
  console.log(`${host.label}; ${concurrency} concurrent callers and 2 churn loops for ${seconds} s.\n`)
  console.log(
    markdownTable(
      ["measure", "value"],
      [
        ["tool calls", String(result.calls)],
        ["calls/s", (result.calls / result.seconds).toFixed(0)],
        ["call errors", String(result.errors)],
        ["call p50 / p99", `${result.p50Ms.toFixed(2)} ms / ${result.p99Ms.toFixed(2)} ms`],
        ["register + unregister requests", String(churnOps)],
        ["churn errors", String(churnErrors)],
        ["host side heap used at the end (after GC)", formatBytes(heap.heapUsed)],
        ["host side RSS at the end", formatBytes(heap.rss)],
        ["plugin RSS at the end", formatBytes(pluginRss)]
      ]
    )
  )
  await plugin.stop()
  await host.close()
}

await main()
