/**
 * Remote tool calls on loopback: a model-side call through the host's dispatch (sign → POST to the plugin's
 * callback → verify, decode, run → result text) against a bare signed `fetch` to the same callback server. The
 * plugin is its own process; the load comes from this one, closed-loop with LLMW_BENCH_CONCURRENCY callers
 * (default 16) for LLMW_BENCH_SECONDS per round (default 5), two interleaved rounds per variant.
 * Targets (issue 10): dispatch within 1.2× of bare fetch, ≥ 5,000 calls/s, p99 < 5 ms on 2 cores.
 */
import { signCallback } from "#internal/remote/signing"
import { SIGNATURE_HEADER, TIMESTAMP_HEADER } from "#internal/remote/wire"
import { markdownTable, printHeader } from "./support/report.ts"
import { callIds, startBenchHost } from "./support/remote-host-adapter.ts"
import { envSeconds, runLoad, startPluginChild, type LoadResult } from "./support/remote-load.ts"

const ARGS = '{"a":2,"b":3}'
const EXPECTED = '{"sum":5}'

const main = async (): Promise<void> => {
  printHeader("Remote tools: host dispatch against a bare fetch to the same plugin callback server")
  const seconds = envSeconds("LLMW_BENCH_SECONDS", 5)
  const concurrency = Math.round(envSeconds("LLMW_BENCH_CONCURRENCY", 16))
  const host = await startBenchHost()
  const plugin = await startPluginChild(host.url)
  const registration = host.registration("add")
  if (registration === undefined) throw new Error("the plugin did not register add")
  const nextId = callIds()
  const bare = async (): Promise<boolean> => {
    const body = `{"name":"add","arguments":${ARGS},"call_id":"${nextId()}","raw_arguments":${JSON.stringify(ARGS)}}`
    const timestamp = String(Math.floor(Date.now() / 1000))
    const response = await fetch(registration.callbackUrl, {
      method: "POST",
      headers: { "content-type": "application/json", [TIMESTAMP_HEADER]: timestamp, [SIGNATURE_HEADER]: signCallback(registration.secret, timestamp, body) },
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
  for (const v of variants) if (!(await v.call())) throw new Error(`${v.label} did not return ${EXPECTED}`)
  for (const v of variants) await runLoad(v.call, concurrency, Math.min(1, seconds))
  const totals = variants.map(() => [] as Array<LoadResult>)
  for (let round = 0; round < 2; round++) for (const [i, v] of variants.entries()) totals[i]!.push(await runLoad(v.call, concurrency, seconds))
  const merged = totals.map((rounds) => ({
    rate: rounds.reduce((s, r) => s + r.calls, 0) / rounds.reduce((s, r) => s + r.seconds, 0),
    errors: rounds.reduce((s, r) => s + r.errors, 0),
    p50: Math.max(...rounds.map((r) => r.p50Ms)),
    p99: Math.max(...rounds.map((r) => r.p99Ms))
  }))
  const base = merged[0]!.rate
  console.log(`${concurrency} concurrent callers, 2 × ${seconds} s per variant; plugin in its own process.\n`)
  console.log(
    markdownTable(
      ["variant", "calls/s", "p50", "p99", "errors", "× bare (time per call)"],
      variants.map((v, i) => {
        const m = merged[i]!
        return [v.label, m.rate.toFixed(0), `${m.p50.toFixed(2)} ms`, `${m.p99.toFixed(2)} ms`, String(m.errors), `${(base / m.rate).toFixed(2)}×`]
      })
    )
  )
  const d = merged[1]!
  console.log(`\nTargets: within 1.2× of bare — ${base / d.rate <= 1.2 ? "met" : "not met"}; ≥ 5,000 calls/s — ${d.rate >= 5000 ? "met" : "not met"}; p99 < 5 ms — ${d.p99 < 5 ? "met" : "not met"}.`)
  await plugin.stop()
  await host.close()
}

await main()
