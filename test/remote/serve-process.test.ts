import { describe, expect, it } from "vitest"
import { startReplayProvider } from "../../src/testing/index.ts"
import { runCli, startCli } from "../cli/cli-process.ts"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { parseCommand } from "../../src/cli/args.ts"
import { api, chatText, chatToolCall, json, startCallbackServer, startHost, weatherTool } from "./support/host.ts"
import { READY, configFile, serveChildren } from "./support/serve-children.ts"

const { children, replays } = serveChildren()

describe("llm-worker serve (a child process)", () => {
  it("prints the ready line, serves the contract and a chat through a remote tool, and exits 0 on SIGTERM", async () => {
    const provider = await startReplayProvider({
      scheme: "openai-chat",
      script: [
        { kind: "stream", transcript: chatToolCall("get_weather", '{"city":"Kyoto"}') },
        { kind: "stream", transcript: chatText("Kyoto: clear skies.") }
      ]
    })
    replays.push(provider)
    const plugin = await startCallbackServer((_req, res) => json(res, 200, { output: "clear" }))
    const config = configFile("roles:\n  小八:\n    provider: openai\n    model: gpt-test\n    system_prompt: You are a cat.\n")
    const serve = startCli(["serve", "--config", config, "--port", "0"], { OPENAI_API_KEY: "test-key", OPENAI_BASE_URL: provider.baseUrl })
    children.push(serve)
    await serve.waitFor(READY)
    const [, port, instance] = READY.exec(serve.stdout()) ?? []
    const host = { url: `http://127.0.0.1:${port}` }
    const health = await api(host, "GET", "/api/health")
    expect(health.body).toEqual({ ok: true, roles: ["小八"], roles_without_model: [], instance_id: instance })
    expect((await api(host, "POST", "/api/tools/register", weatherTool(plugin.url))).body).toMatchObject({ ok: true, affected_roles: ["小八"] })
    const chat = await api(host, "POST", "/api/chat", { message: "weather in Kyoto?" })
    expect(chat.body).toMatchObject({ ok: true, role: "小八", text: "Kyoto: clear skies.", tool_calls: [{ name: "get_weather", status: "ok", output: "clear" }] })
    expect(plugin.calls).toHaveLength(1)
    serve.child.kill("SIGTERM")
    expect(await serve.exited).toBe(0)
  })

  it("takes the port from MAIN_SERVER_PORT when no port is given (in process), refusing one that is not a port", async () => {
    const probe = createServer()
    await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve))
    const port = (probe.address() as AddressInfo).port
    await new Promise<void>((resolve) => probe.close(() => resolve()))
    const host = await startHost({ port: undefined, env: { MAIN_SERVER_PORT: String(port) } })
    expect(host.port).toBe(port)
    expect(host.readyLine).toBe(`llm-worker host listening on http://127.0.0.1:${port} (instance ${host.instanceId})`)
    await expect(startHost({ port: undefined, env: { MAIN_SERVER_PORT: "eighty" } })).rejects.toThrow(/MAIN_SERVER_PORT/)
    expect(() => parseCommand(["serve", "--port", "99999"])).toThrow(/--port/)
    expect(parseCommand(["serve", "--config", "x.yaml", "--port", "0"])).toEqual({ kind: "serve", config: "x.yaml", port: 0 })
  })

  it("a config with an unknown key or a wrong type exits 2 with one precise line", async () => {
    const bad = await runCli(["serve", "--config", configFile("roles:\n  a:\n    modle: x\n    cache_lock: yes please\n"), "--port", "0"])
    expect(bad.code).toBe(2)
    expect(bad.stderr).toMatch(/^llm-worker: .*llm-worker\.yaml: roles\.a\.cache_lock: .*boolean.*; roles\.a\.modle: unknown key\n$/)
    const missing = await runCli(["serve", "--config", "/nonexistent/llm-worker.yaml"])
    expect(missing.code).toBe(2)
    expect(missing.stderr).toContain("no such file")
  })
})
