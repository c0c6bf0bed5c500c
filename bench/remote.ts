/**
 * Remote tool calls on loopback: a model-side call through the host's dispatch (sign → POST to the plugin's
 * callback → verify, decode, run → result text) against a bare signed `fetch` to the same callback server.
 *
 * What runs where: this process holds the load (closed-loop callers: each issues its next call when its last one
 * settles) and the host side (the contract stand-in the plugin registered with, `ToolServerHandle.callTool` into the
 * host's dispatcher `remoteToolDefinition`, its signing and HTTP client). The plugin — `startPlugin` with one
 * zod-typed tool, verifying every signature — is a second Node process. Both are measured for CPU per call.
 *
 * LLMW_BENCH_CONCURRENCY: the caller counts to measure (default `4,8,16`); LLMW_BENCH_SECONDS per round (default
 * 5), two interleaved rounds per variant and caller count. Targets (issue 10): dispatch within 1.2× of bare fetch,
 * ≥ 5,000 calls/s, p99 < 5 ms on 2 cores.
 */
import { signedCallbackHeaders } from "#internal/remote/signing"
import { markdownTable, printHeader } from "./support/report.ts"
import { callIds, startBenchHost } from "./support/remote-host-adapter.ts"
import { envIntegers, envSeconds, runLoad, startPluginChild, type LoadResult } from "./support/remote-load.ts"

const ARGS = '{"a":2,"b":3}'
const EXPECTED = '{"sum":5}'

interface Round extends LoadResult {
  /** CPU time of this process and of the plugin's, in µs, over the round. */
  readonly benchCpuMicros: number
  readonly pluginCpuMicros: number
}

const main = async (): Promise<void> => {
  printHeader("Remote tools: host dispatch against a bare fetch to the same plugin callback server")
  const seconds = envSeconds("LLMW_BENCH_SECONDS", 5)
  const concurrencies = envIntegers("LLMW_BENCH_CONCURRENCY", [4, 8, 16])
  const host = await startBenchHost()
  const plugin = await startPluginChild(host.url)
  const registration = host.registration("add")
  if (registration === undefined) throw new Error("the plugin did not register add")
  const nextId = callIds()
  const bare = async (): Promise<boolean> => {
    const body = `{"name":"add","arguments":${ARGS},"call_id":"${nextId()}","raw_arguments":${JSON.stringify(ARGS)}}`
    const response = await fetch(registration.callbackUrl, {
      method: "POST",
      headers: { "content-type": "application/json", ...signedCallbackHeaders(registration.secret, body) },
      body
    })
    const text = await response.text()
    return response.ok && text === `{"output":${EXPECTED}}`
  }
  const dispatch = async (): Promise<boolean> => (await host.callTool("add", ARGS, nextId())) === EXPECTED
  const variants = [
    { label: "bare `fetch`, signed, to the callback", call: bare },
    { label: `host dispatch: ${host.label}`, call: dispatch }
  ]
  const measured = async (call: () => Promise<boolean>, concurrency: number): Promise<Round> => {
    globalThis.gc?.()
    const cpu = process.cpuUsage()
    const pluginCpu = plugin.cpuMicros()
    const result = await runLoad(call, concurrency, seconds)
    const used = process.cpuUsage(cpu)
    return { ...result, benchCpuMicros: used.user + used.system, pluginCpuMicros: plugin.cpuMicros() - pluginCpu }
  }
  for (const v of variants) if (!(await v.call())) throw new Error(`${v.label} did not return ${EXPECTED}`)
  for (const v of variants) await runLoad(v.call, Math.max(...concurrencies), Math.min(1, seconds))
  const rows: Array<Array<string>> = []
  const verdicts: Array<string> = []
  for (const concurrency of concurrencies) {
    const rounds = variants.map(() => [] as Array<Round>)
    for (let round = 0; round < 2; round++) for (const [i, v] of variants.entries()) rounds[i]!.push(await measured(v.call, concurrency))
    const merged = rounds.map((rs) => {
      const calls = rs.reduce((s, r) => s + r.calls, 0)
      return {
        rate: calls / rs.reduce((s, r) => s + r.seconds, 0),
        errors: rs.reduce((s, r) => s + r.errors, 0),
        // The worse round of the two: a good round does not hide a bad one.
        p50: Math.max(...rs.map((r) => r.p50Ms)),
        p99: Math.max(...rs.map((r) => r.p99Ms)),
        benchCpu: rs.reduce((s, r) => s + r.benchCpuMicros, 0) / calls,
        pluginCpu: rs.reduce((s, r) => s + r.pluginCpuMicros, 0) / calls
      }
    })
    const base = merged[0]!.rate
    for (const [i, v] of variants.entries()) {
      const m = merged[i]!
      rows.push([String(concurrency), v.label, m.rate.toFixed(0), `${m.p50.toFixed(2)} ms`, `${m.p99.toFixed(2)} ms`, String(m.errors), `${(base / m.rate).toFixed(2)}×`, `${m.benchCpu.toFixed(0)} µs`, Number.isNaN(m.pluginCpu) ? "n/a" : `${m.pluginCpu.toFixed(0)} µs`])
    }
    const d = merged[1]!
    const met = (ok: boolean): string => (ok ? "met" : "not met")
    verdicts.push(`${concurrency} callers: within 1.2× of bare — ${met(base / d.rate <= 1.2)}; ≥ 5,000 calls/s — ${met(d.rate >= 5000)}; p99 < 5 ms — ${met(d.p99 < 5)}.`)
  }
  console.log(`2 × ${seconds} s per variant and caller count, interleaved; load and host side in this process, plugin in its own. CPU per call: user + system time of each process ÷ calls.\n`)
  console.log(markdownTable(["callers", "variant", "calls/s", "p50", "p99", "errors", "× bare (time per call)", "CPU per call, this process", "CPU per call, plugin process"], rows))
  console.log(`\nTargets (dispatch): ${verdicts.join(" ")}`)
  await plugin.stop()
  await host.close()
}

await main()
