import { afterEach, describe, expect, it } from "vitest"
import type { HostConfigInput } from "../../src/remote/index.ts"
import { type ReplayProvider, type ReplayStep, startReplayProvider } from "../../src/testing/index.ts"
import { api, chatText, chatToolCall, closeAll, json, startCallbackServer, startHost, weatherTool } from "./support/host.ts"

const replays: Array<ReplayProvider> = []
afterEach(async () => {
  await closeAll()
  await Promise.all(replays.splice(0).map((r) => r.close()))
})

const replay = async (script: ReadonlyArray<ReplayStep>): Promise<ReplayProvider> => {
  const server = await startReplayProvider({ scheme: "openai-chat", script })
  replays.push(server)
  return server
}

/** A host whose roles talk to the replay server through the usual environment variables. */
type Roles = NonNullable<HostConfigInput["roles"]>
type Server = NonNullable<HostConfigInput["server"]>

const hostFor = (provider: ReplayProvider, roles: Roles = { assistant: { provider: "openai", model: "gpt-test", system_prompt: "You are helpful." } }, server: Server = {}) =>
  startHost({ config: { roles, server }, env: { OPENAI_API_KEY: "test-key", OPENAI_BASE_URL: provider.baseUrl } })

const toolNamesSent = (provider: ReplayProvider, request: number): ReadonlyArray<string> =>
  ((JSON.parse(provider.requests[request]?.body ?? "{}") as { tools?: Array<{ function: { name: string } }> }).tools ?? []).map((t) => t.function.name)

describe("POST /api/chat", () => {
  it("drives a registered remote tool through the model: call → signed callback → result → answer", async () => {
    const provider = await replay([
      { kind: "stream", transcript: chatToolCall("get_weather", '{"city":"東京"}') },
      { kind: "stream", transcript: chatText("東京は晴れ、22度です。") }
    ])
    const plugin = await startCallbackServer((_req, res, body) => {
      const { arguments: args } = JSON.parse(body) as { arguments: { city: string } }
      json(res, 200, { output: { city: args.city, temp_c: 22, weather: "晴れ" } })
    })
    const host = await hostFor(provider)
    expect((await api(host, "POST", "/api/tools/register", weatherTool(plugin.url))).body["ok"]).toBe(true)
    const chat = await api(host, "POST", "/api/chat", { role: null, message: "東京の天気は？" })
    expect(chat.status).toBe(200)
    expect(chat.body).toEqual({
      ok: true,
      role: "assistant",
      text: "東京は晴れ、22度です。",
      tool_calls: [{ name: "get_weather", call_id: "call_1", status: "ok", output: '{"city":"東京","temp_c":22,"weather":"晴れ"}' }],
      usage: expect.objectContaining({ inputTokens: 60, outputTokens: 12 }),
      instance_id: host.instanceId
    })
    expect(plugin.calls).toHaveLength(1)
    expect(toolNamesSent(provider, 0)).toEqual(["get_weather"])
    // The second request carries the tool's result back to the model.
    expect(provider.requests[1]?.body).toContain("晴れ")
    const listed = (await api(host, "GET", "/api/tools")).body["roles"] as Record<string, Array<Record<string, unknown>>>
    expect(listed["assistant"]?.[0]).toMatchObject({ calls: 1, errors: 0 })
  })

  it("a failing callback reaches the model as an error result, and the turn still answers", async () => {
    const provider = await replay([
      { kind: "stream", transcript: chatToolCall("get_weather", '{"city":"Atlantis"}') },
      { kind: "stream", transcript: chatText("I could not find that city.") }
    ])
    const plugin = await startCallbackServer((_req, res) => json(res, 200, { is_error: true, error: "CITY_NOT_FOUND", output: { reason: "unknown" } }))
    const host = await hostFor(provider)
    await api(host, "POST", "/api/tools/register", weatherTool(plugin.url))
    const chat = await api(host, "POST", "/api/chat", { message: "weather in Atlantis?" })
    expect(chat.body["tool_calls"]).toEqual([{ name: "get_weather", call_id: "call_1", status: "error", output: 'CITY_NOT_FOUND\noutput: {"reason":"unknown"}' }])
    const sent = JSON.parse(provider.requests[1]?.body ?? "{}") as { messages: Array<{ role: string; content: unknown }> }
    expect(JSON.stringify(sent.messages.filter((m) => m.role === "tool"))).toContain("CITY_NOT_FOUND")
    const listed = (await api(host, "GET", "/api/tools")).body["roles"] as Record<string, Array<Record<string, unknown>>>
    expect(listed["assistant"]?.[0]).toMatchObject({ calls: 1, errors: 1, last_error: expect.stringContaining("CITY_NOT_FOUND") })
  })

  it("streams the Worker's events with Accept: text/event-stream, ending with the result", async () => {
    const provider = await replay([{ kind: "stream", transcript: chatText("Hello there") }])
    const host = await hostFor(provider)
    const response = await fetch(`${host.url}/api/chat`, { method: "POST", headers: { accept: "text/event-stream", "content-type": "application/json" }, body: JSON.stringify({ message: "hi" }) })
    expect(response.headers.get("content-type")).toMatch(/text\/event-stream/)
    const text = await response.text()
    const events = [...text.matchAll(/^event: (.+)$/gm)].map((m) => m[1])
    expect(events).toContain("block_delta")
    expect(events.at(-1)).toBe("result")
    const result = JSON.parse(/event: result\ndata: (.+)\n/.exec(text)?.[1] ?? "{}") as Record<string, unknown>
    expect(result).toMatchObject({ ok: true, role: "assistant", text: "Hello there", instance_id: host.instanceId })
  })

  it("a client that goes away cancels its turn: the model request is dropped, the role is free again", async () => {
    const provider = await replay([
      { kind: "stream", transcript: chatText("never finished"), stallAfterEvents: 1 },
      { kind: "stream", transcript: chatText("fresh") }
    ])
    const host = await hostFor(provider)
    const controller = new AbortController()
    const response = await fetch(`${host.url}/api/chat`, { method: "POST", headers: { accept: "text/event-stream" }, body: JSON.stringify({ message: "hi" }), signal: controller.signal })
    const reader = (response.body as ReadableStream<Uint8Array>).getReader()
    let seen = ""
    while (!seen.includes("block_delta")) seen += new TextDecoder().decode((await reader.read()).value)
    controller.abort()
    // Node's fetch may no longer carry an abort to a body it is streaming once a collection has run (decision 0092);
    // cancelling the reader closes the connection either way.
    await reader.cancel().catch(() => undefined)
    await provider.requests[0]?.disconnected
    const next = await api(host, "POST", "/api/chat", { message: "again" })
    expect(next.body).toMatchObject({ ok: true, text: "fresh" })
  })

  it("DELETE /api/chat?role= forgets the conversation; unknown roles are 404, a role without a model is 503", async () => {
    const provider = await replay([{ kind: "stream", transcript: chatText("one") }])
    const host = await hostFor(provider, { assistant: { provider: "openai", model: "gpt-test" }, offline: { provider: "no-such-provider" } })
    await api(host, "POST", "/api/chat", { role: "assistant", message: "first" })
    await api(host, "POST", "/api/chat", { role: "assistant", message: "second" })
    expect(JSON.parse(provider.requests[1]?.body ?? "{}").messages).toHaveLength(3)
    expect((await api(host, "DELETE", "/api/chat?role=assistant")).body).toMatchObject({ ok: true, role: "assistant" })
    await api(host, "POST", "/api/chat", { role: "assistant", message: "third" })
    expect(JSON.parse(provider.requests[2]?.body ?? "{}").messages).toHaveLength(1)
    expect((await api(host, "DELETE", "/api/chat?role=ghost")).status).toBe(404)
    expect((await api(host, "POST", "/api/chat", { role: "ghost", message: "x" })).body).toMatchObject({ ok: false, error: "unknown role: ghost" })
    const offline = await api(host, "POST", "/api/chat", { role: "offline", message: "x" })
    expect(offline.status).toBe(503)
    expect(offline.body["error"]).toContain("unknown provider")
    expect((await api(host, "POST", "/api/chat", { role: "assistant" })).status).toBe(422)
  })

  it("a cache-locked role takes tool changes at the next turn boundary and reports them pending until then", async () => {
    const provider = await replay([
      { kind: "stream", transcript: chatText("before") },
      { kind: "stream", transcript: chatToolCall("get_weather", '{"city":"Oslo"}') },
      { kind: "stream", transcript: chatText("after") }
    ])
    const plugin = await startCallbackServer((_req, res) => json(res, 200, { output: "rain" }))
    const host = await hostFor(provider, { locked: { provider: "openai", model: "gpt-test", cache_lock: true }, open: { provider: "openai", model: "gpt-test" } })
    await api(host, "POST", "/api/chat", { role: "locked", message: "hello" })
    const registered = await api(host, "POST", "/api/tools/register", weatherTool(plugin.url))
    expect(registered.body).toMatchObject({ ok: true, affected_roles: ["open"], pending_roles: ["locked"], failed_roles: [] })
    const before = (await api(host, "GET", "/api/tools?role=locked")).body["roles"] as Record<string, Array<Record<string, unknown>>>
    expect(before["locked"]).toEqual([expect.objectContaining({ name: "get_weather", state: "pending" })])
    const chat = await api(host, "POST", "/api/chat", { role: "locked", message: "weather?" })
    expect(chat.body).toMatchObject({ ok: true, text: "after", tool_calls: [expect.objectContaining({ status: "ok", output: "rain" })] })
    expect(toolNamesSent(provider, 0)).toEqual([])
    expect(toolNamesSent(provider, 1)).toEqual(["get_weather"])
    const after = (await api(host, "GET", "/api/tools?role=locked")).body["roles"] as Record<string, Array<Record<string, unknown>>>
    expect(after["locked"]).toEqual([expect.objectContaining({ state: "active" })])
  })

  it("a callback that keeps refusing connections is evicted and reported (log, list)", async () => {
    const provider = await replay([
      { kind: "stream", transcript: chatToolCall("get_weather", '{"city":"X"}') },
      { kind: "stream", transcript: chatText("no luck") },
      { kind: "stream", transcript: chatToolCall("get_weather", '{"city":"X"}', "call_2") },
      { kind: "stream", transcript: chatText("still no luck") },
      { kind: "stream", transcript: chatText("the tool is gone") }
    ])
    const plugin = await startCallbackServer(() => undefined)
    const url = plugin.url
    await plugin.close()
    const host = await hostFor(provider, undefined, { evict_after_connection_failures: 2 })
    await api(host, "POST", "/api/tools/register", weatherTool(url))
    const first = await api(host, "POST", "/api/chat", { message: "1" })
    expect((first.body["tool_calls"] as Array<{ output: string }>)[0]?.output).toContain("connection refused")
    expect(((await api(host, "GET", "/api/tools")).body["roles"] as Record<string, unknown[]>)["assistant"]).toHaveLength(1)
    await api(host, "POST", "/api/chat", { message: "2" })
    const listed = await api(host, "GET", "/api/tools")
    expect((listed.body["roles"] as Record<string, unknown[]>)["assistant"]).toEqual([])
    expect(listed.body["evictions"]).toEqual([expect.objectContaining({ name: "get_weather", source: "my_plugin", roles: ["assistant"], failures: 2 })])
    expect(host.logs.join("\n")).toMatch(/evicted tool "get_weather" \(source "my_plugin"\).*2 consecutive connection failures/)
    await api(host, "POST", "/api/chat", { message: "3" })
    expect(toolNamesSent(provider, 4)).toEqual([])
  })
})
