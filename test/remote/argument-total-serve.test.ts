import { readFileSync } from "node:fs"
import { afterEach, expect, it } from "vitest"
import { z } from "zod"
import { type Plugin, remoteTool, startPlugin } from "../../src/remote/plugin/index.ts"
import { type ReplayProvider, startReplayProvider } from "../../src/testing/index.ts"
import { loadTranscript } from "../support/sse-fixtures.ts"
import { SCALED_TOOL, scaledToolCalls } from "../support/scaled-tool-calls.ts"
import { describeWithHost, type HostChild, killChild, spawnHost } from "./support/processes.ts"

/**
 * Issue 20 through the host: a role's model answers with 16 tool calls × 7 MiB for a remote plugin's tool (each
 * under the 8 MiB per-call bound). The role runs the same Worker and client as the library, with the default
 * `maxTotalArgumentBytes` (16 MiB): the chat fails with the typed error, no call reaches the plugin, no second
 * request is made, and the host's resident memory stays far below the ~1.05 GB the unbounded host reached.
 * Everything real: `llm-worker serve` as a child, the plugin through `startPlugin`, the genuine Chat recording
 * scaled by the replay provider.
 */

const MiB = 1024 * 1024

/** The host's resident set now and at its peak (Linux `/proc`), in MiB. */
const memoryOf = (pid: number): { readonly rss: number; readonly peak: number } => {
  const status = readFileSync(`/proc/${pid}/status`, "utf8")
  const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB$`, "m").exec(status)?.[1] ?? NaN)
  return { rss: kib("VmRSS") / 1024, peak: kib("VmHWM") / 1024 }
}

let host: HostChild | undefined
let plugin: Plugin | undefined
let replay: ReplayProvider | undefined
afterEach(async () => {
  await plugin?.stop()
  if (host !== undefined) await killChild(host)
  await replay?.close()
  host = plugin = replay = undefined
})

describeWithHost("maxTotalArgumentBytes in the tool host (llm-worker serve)", () => {
  it("16 calls × 7 MiB for a remote plugin's tool: the chat fails with maxTotalArgumentBytes, the plugin is never called, the host's memory stays bounded", async () => {
    replay = await startReplayProvider({
      scheme: "openai-chat",
      script: [
        { kind: "stream", transcript: scaledToolCalls("openai-chat", Array(16).fill(7 * MiB), 256 * 1024) },
        { kind: "stream", transcript: loadTranscript("openai-chat", "text") }
      ]
    })
    host = await spawnHost(0, { OPENAI_BASE_URL: replay.baseUrl })
    let calls = 0
    const store = remoteTool({
      name: SCALED_TOOL,
      description: "stores data",
      parameters: z.object({ data: z.string() }),
      execute: () => {
        calls++
        return "stored"
      }
    })
    plugin = await startPlugin({ source: "plugin:store", tools: [store], host: host.url, shutdown: { signals: false, deadlineMs: 500 }, healthIntervalMs: 1000 })
    await plugin.ready
    const pid = host.process.pid as number
    const before = memoryOf(pid)

    const answer = await fetch(`${host.url}/api/chat`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ role: null, message: "store all of it" })
    })
    const body = (await answer.json()) as { ok: boolean; error?: string }
    const after = memoryOf(pid)
    // Recorded for the report: the unbounded host went from ~200 MiB to ~1.05 GB here.
    console.info(`llm-worker serve RSS: ${before.rss.toFixed(0)} MiB before, ${after.rss.toFixed(0)} MiB after, peak ${after.peak.toFixed(0)} MiB`)

    expect(answer.status).toBe(502)
    expect(body.ok).toBe(false)
    expect(body.error).toMatch(/^ClientFailed: .*maxTotalArgumentBytes = 16777216/)
    expect(calls).toBe(0)
    expect(replay.requests).toHaveLength(1)
    expect(after.peak - before.rss, `MiB the host's peak RSS rose by (before ${before.rss}, peak ${after.peak})`).toBeLessThan(256)
    // The role is still usable, and its next request carries nothing of the refused response.
    const health = await fetch(`${host.url}/api/health`)
    expect(health.status).toBe(200)
    const next = await fetch(`${host.url}/api/chat`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ role: null, message: "never mind" }) })
    expect(((await next.json()) as { ok: boolean }).ok).toBe(true)
    expect(replay.requests).toHaveLength(2)
    expect((replay.requests[1]?.body.length ?? Infinity) / MiB).toBeLessThan(1)
    // Room for the unbounded host (about a minute on 2 busy cores) to reach the assertions rather than time out.
  }, 150_000)
})
