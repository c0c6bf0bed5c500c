import { afterEach, expect, it } from "vitest"
import { startReplayProvider, type ReplayProvider } from "../../src/testing/index.ts"
import { loadTranscript } from "../support/sse-fixtures.ts"
import { type Child, describeWithHost, eventsOf, type HostChild, killChild, spawnChild, spawnHost } from "./support/processes.ts"

const children: Array<Child> = []
const replays: Array<ReplayProvider> = []
afterEach(async () => {
  await Promise.all(children.splice(0).map((c) => killChild(c)))
  await Promise.all(replays.splice(0).map((r) => r.close()))
})

const SOURCE = "plugin:summary"

const spawnLlmOnlyPlugin = (host: string): Child => {
  const child = spawnChild(process.execPath, ["--import", "tsx", "test/remote/fixtures/llm-only-plugin.ts"], { LLMW_HOST: host, LLMW_SOURCE: SOURCE })
  children.push(child)
  return child
}

const post = async (host: HostChild, path: string, body: unknown, token?: string): Promise<{ status: number; body: Record<string, unknown> }> => {
  const headers: Record<string, string> = { "content-type": "application/json" }
  if (token !== undefined) headers["x-llm-worker-registrant-token"] = token
  const answer = await fetch(`${host.url}${path}`, { method: "POST", headers, body: JSON.stringify(body) })
  return { status: answer.status, body: (await answer.json()) as Record<string, unknown> }
}

describeWithHost("a plugin with no tools (a real `llm-worker serve` and a real plugin process)", () => {
  it("claims its source, gets its token and a ready plugin.llm that the host answers; others cannot take the source; stopping releases it", async () => {
    const replay = await startReplayProvider({ scheme: "openai-chat", script: [{ kind: "stream", transcript: loadTranscript("openai-chat", "text") }] })
    replays.push(replay)
    const host = await spawnHost(0, { OPENAI_BASE_URL: replay.baseUrl })
    children.push(host)
    const plugin = spawnLlmOnlyPlugin(host.url)

    const answered = await plugin.waitFor((l) => l.includes('"answer"') || l.includes('"llm_failed"'), 30_000)
    expect(JSON.parse(answered)).toEqual({ type: "answer", text: "Hello! How can I help?" })
    const events = eventsOf(plugin)
    expect(events.find((e) => e.type === "claimed")).toMatchObject({ instanceId: host.instanceId })
    expect(events.some((e) => e.type === "registered")).toBe(false)
    const token = events.find((e) => e.type === "token")?.["token"] as string
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/)
    // The model was asked once, through the host's lane.
    expect(replay.requests).toHaveLength(1)
    expect(replay.requests[0]?.body).toContain("a long text about the weather")

    // The source is claimed by the plugin's token: neither a token-less request nor another token gets it.
    const impostor = await post(host, "/api/sources/claim", { source: SOURCE }, "x".repeat(43))
    expect(impostor).toMatchObject({ status: 409, body: { ok: false, code: "source_claimed" } })
    const tokenless = await post(host, "/api/tools/register", { name: "steal", callback_url: "http://127.0.0.1:9/tools/steal", source: SOURCE })
    expect(tokenless).toMatchObject({ status: 409, body: { code: "source_claimed" } })
    expect((await post(host, "/api/sources/claim", { source: SOURCE })).status).toBe(401)
    // Presenting its own token again is a no-op.
    expect(await post(host, "/api/sources/claim", { source: SOURCE }, token)).toMatchObject({ status: 200, body: { ok: true, source: SOURCE, owner: "claimed" } })

    // SIGTERM: the plugin clears its source, the host forgets the token, and the lane refuses it.
    plugin.process.kill("SIGTERM")
    await plugin.exited
    const after = await post(host, "/api/llm/complete", { messages: [{ role: "user", content: "hi" }] }, token)
    expect(after).toMatchObject({ status: 401, body: { error: "unknown registrant token" } })
    // And the source is free for the next process.
    expect((await post(host, "/api/sources/claim", { source: SOURCE }, "y".repeat(43))).status).toBe(200)
  })

  it("claims its source again after the host restarts on the same port", async () => {
    const replay = await startReplayProvider({ scheme: "openai-chat", script: [{ kind: "stream", transcript: loadTranscript("openai-chat", "text") }] })
    replays.push(replay)
    const first = await spawnHost(0, { OPENAI_BASE_URL: replay.baseUrl })
    children.push(first)
    const plugin = spawnLlmOnlyPlugin(first.url)
    await plugin.waitFor((l) => l.includes('"answer"'), 30_000)
    const token = eventsOf(plugin).find((e) => e.type === "token")?.["token"] as string
    await killChild(first)
    const second = await spawnHost(first.port, { OPENAI_BASE_URL: replay.baseUrl })
    children.push(second)
    await plugin.waitFor((l) => l.includes('"claimed"') && l.includes(second.instanceId), 20_000)
    // The new host knows the token: the lane takes it (the replay's script is spent, so the provider fails, not the token).
    const answer = await post(second, "/api/llm/complete", { messages: [{ role: "user", content: "hi" }] }, token)
    expect(answer.status).not.toBe(401)
  })
})
