import { afterEach, expect, it } from "vitest"
import { signedCallbackHeaders } from "../../src/remote/signing.ts"
import { INSTANCE_HEADER } from "../../src/remote/wire.ts"
import { sseText, startReplayProvider, type ReplayProvider } from "../../src/testing/index.ts"
import { eventually } from "../../bench/support/contract-host.ts"
import { freePort } from "./support/free-port.ts"
import { describeWithHost, eventsOf, killChild, spawnChild, spawnHost, spawnPlugin, type Child } from "./support/processes.ts"

/**
 * The plugin client against the real host (`llm-worker serve`), every party its own process on loopback.
 * Skipped until i10-host's branch is merged (`describeWithHost` in ./support/processes.ts).
 */

/** One OpenAI Chat stream calling get_weather, then one answering in text. */
const chunk = (delta: object, finish: string | null = null) =>
  ({ data: JSON.stringify({ id: "chatcmpl-1", object: "chat.completion.chunk", created: 1, model: "replay-model", choices: [{ index: 0, delta, finish_reason: finish }] }) })
const toolCallTurn = (city: string, tool: string) =>
  sseText([
    chunk({ role: "assistant", content: null, tool_calls: [{ index: 0, id: "call_w1", type: "function", function: { name: tool, arguments: "" } }] }),
    chunk({ tool_calls: [{ index: 0, function: { arguments: JSON.stringify({ city }) } }] }),
    chunk({}, "tool_calls"),
    { data: "[DONE]" }
  ])
const answerTurn = sseText([chunk({ role: "assistant", content: "Sunny." }), chunk({}, "stop"), { data: "[DONE]" }])

let children: Array<Child> = []
let replay: ReplayProvider | undefined
afterEach(async () => {
  await Promise.all(children.map((c) => killChild(c)))
  await replay?.close()
  children = []
  replay = undefined
})

const tools = async (url: string): Promise<Array<{ name: string; source: string }>> => {
  const body = (await (await fetch(`${url}/api/tools`)).json()) as { roles: Record<string, Array<{ name: string; source: string }>> }
  return Object.values(body.roles).flat()
}

const chat = async (url: string, message: string) =>
  (await (await fetch(`${url}/api/chat`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ role: null, message }) })).json()) as {
    ok: boolean
    tool_calls: Array<{ name: string; status: string; output: string }>
  }

const replayEnv = async (city: string, tool = "get_weather"): Promise<Record<string, string>> => {
  replay = await startReplayProvider({ scheme: "openai-chat", script: [{ kind: "stream", transcript: toolCallTurn(city, tool) }, { kind: "stream", transcript: answerTurn }] })
  return { OPENAI_BASE_URL: replay.baseUrl }
}

describeWithHost("plugins and the real host, as separate processes", () => {
  it("plugins started before the host (ours and a Python standard-library one) register once it is up; after a restart ours come back by themselves", async () => {
    const port = await freePort()
    const plugin = spawnPlugin(`http://127.0.0.1:${port}`)
    const py = spawnChild("python3", ["test/remote/fixtures/lifecycle.py", `http://127.0.0.1:${port}`, "py_weather"])
    children.push(plugin, py)
    await plugin.waitFor(/"type":"registration_failed"/)
    await py.waitFor(/^waiting for the host$/)
    const host = await spawnHost(port, await replayEnv("Kyoto", "py_weather"))
    children.push(host)
    await plugin.waitFor(/"type":"ready"/)
    // The seed's lifecycle from a client that uses nothing of ours: register with retry, callback, unregister.
    expect(await py.waitFor(/^registered/)).toBe("registered after-retry True")
    expect((await tools(host.url)).map((t) => [t.name, t.source]).sort()).toEqual([["get_weather", "plugin:weather"], ["py_weather", "py_plugin"]])
    const answer = await chat(host.url, "Weather in Kyoto?")
    expect(answer.tool_calls).toMatchObject([{ name: "py_weather", status: "ok" }])
    expect(JSON.parse(answer.tool_calls[0]!.output)).toEqual({ city: "Kyoto", temp_c: 22 })
    expect(await py.waitFor(/^unregistered/)).toBe("unregistered 200 True")
    expect(await py.exited).toEqual({ code: 0, signal: null })
    expect((await tools(host.url)).map((t) => t.name)).toEqual(["get_weather"])
    // A host restart under a running plugin: a new instance, an empty registry, and the tool comes back.
    host.process.kill("SIGTERM")
    await host.exited
    const again = await spawnHost(port)
    children.push(again)
    expect(again.instanceId).not.toBe(host.instanceId)
    await plugin.waitFor((l) => l.includes('"type":"host_restarted"') && l.includes(again.instanceId))
    await eventually(() => eventsOf(plugin).some((e) => e.type === "registered" && e["instanceId"] === again.instanceId), "re-registration", 10_000)
    expect((await tools(again.url)).map((t) => t.name)).toEqual(["get_weather"])
  })

  it("a model's call reaches the plugin signed and comes back; forged and stale callbacks are refused; SIGTERM unregisters", async () => {
    const host = await spawnHost(0, await replayEnv("Kyoto"))
    children.push(host)
    const plugin = spawnPlugin(host.url)
    children.push(plugin)
    const origin = JSON.parse(await plugin.waitFor(/"type":"listening"/)).callbackOrigin as string
    await plugin.waitFor(/"type":"ready"/)
    const answer = await chat(host.url, "Weather in Kyoto?")
    expect(answer.ok).toBe(true)
    expect(answer.tool_calls).toMatchObject([{ name: "get_weather", status: "ok" }])
    expect(JSON.parse(answer.tool_calls[0]!.output)).toEqual({ city: "Kyoto", temp_c: 22, weather: "sunny" })

    const body = JSON.stringify({ name: "get_weather", arguments: { city: "Kyoto" }, call_id: "x", raw_arguments: '{"city":"Kyoto"}' })
    const now = Math.floor(Date.now() / 1000)
    const send = (headers: Record<string, string>) =>
      fetch(`${origin}/tools/get_weather`, { method: "POST", headers: { "content-type": "application/json", [INSTANCE_HEADER]: host.instanceId, ...headers }, body }).then(async (r) => [r.status, ((await r.json()) as { error: string }).error])
    expect(await send({})).toEqual([401, "signature missing"])
    expect(await send(signedCallbackHeaders("guessed", body, { timestamp: String(now) }))).toEqual([401, "signature mismatch"])
    expect(await send(signedCallbackHeaders("guessed", body, { timestamp: String(now - 3600) }))).toEqual([401, "signature stale"])

    plugin.process.kill("SIGTERM")
    expect(await plugin.exited).toEqual({ code: null, signal: "SIGTERM" })
    expect((await tools(host.url)).map((t) => t.name)).not.toContain("get_weather")
  })
})
