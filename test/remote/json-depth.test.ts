import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { createPluginLlmHandler, createPluginRuntime, createRemotePluginLlm } from "../../src/plugin-llm/index.ts"
import { parseHostConfig } from "../../src/remote/index.ts"
import { type ReplayProvider, startReplayProvider } from "../../src/testing/index.ts"
import { startCli, type CliProcess } from "../cli/cli-process.ts"
import { api, chatText, chatToolCall, closeAll, startCallbackServer, startHost, weatherTool } from "./support/host.ts"

const READY = /llm-worker host listening on (http:\/\/127\.0\.0\.1:\d+) \(instance [0-9a-f]+\)\n/

const children: Array<CliProcess> = []
const replays: Array<ReplayProvider> = []
const servers: Array<Server> = []
afterEach(async () => {
  for (const child of children.splice(0)) if (child.child.exitCode === null) child.child.kill("SIGKILL")
  await Promise.all(replays.splice(0).map((r) => r.close()))
  await Promise.all(servers.splice(0).map((s) => new Promise<void>((resolve) => (s.close(() => resolve()), s.closeAllConnections()))))
  await closeAll()
})

/** `[[[…]]]` nested `depth` levels, as text (no recursion builds it). */
const nestedText = (depth: number): string => `${"[".repeat(depth)}${"]".repeat(depth)}`

/** The same as a value, built iteratively, for entry points that take parsed JSON. */
const nestedValue = (depth: number): unknown => {
  let value: unknown = []
  for (let i = 1; i < depth; i++) value = [value]
  return value
}

const ATTACK = 200_000

describe("hostile nesting in JSON the host and the plugin lane read", () => {
  it("a real serve child: a callback answering {output: <200,000 nested arrays>} is a short, typed error result for the model; the host stays up", async () => {
    const provider = await startReplayProvider({
      scheme: "openai-chat",
      script: [
        { kind: "stream", transcript: chatToolCall("get_weather", '{"city":"Kyoto"}') },
        { kind: "stream", transcript: chatText("The tool failed.") }
      ]
    })
    replays.push(provider)
    const plugin = await startCallbackServer((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" })
      res.end(`{"output":${nestedText(ATTACK)}}`)
    })
    const dir = mkdtempSync(join(tmpdir(), "llm-worker-depth-"))
    const config = join(dir, "llm-worker.yaml")
    // The default response cap would cut 400 KB short of the attack; the depth bound must hold on its own.
    writeFileSync(config, "server:\n  max_callback_response_bytes: 4194304\nroles:\n  helper:\n    provider: openai\n    model: replay-model\n")
    const serve = startCli(["serve", "--config", config, "--port", "0"], { OPENAI_API_KEY: "sk-test-depth-0000", OPENAI_BASE_URL: provider.baseUrl })
    children.push(serve)
    await serve.waitFor(READY)
    const host = { url: (READY.exec(serve.stdout()) as RegExpExecArray)[1] as string }
    expect((await api(host, "POST", "/api/tools/register", weatherTool(plugin.url))).status).toBe(200)

    const chat = await api(host, "POST", "/api/chat", { message: "weather in Kyoto?" })
    expect(chat.status).toBe(200)
    const [call] = chat.body["tool_calls"] as Array<{ status: string; output: string }>
    expect(call?.status).toBe("error")
    expect(call?.output).toMatch(/^callback to 127\.0\.0\.1:\d+ answered with JSON nested deeper than 256 levels; it was not used$/)
    // What the model read: the tool result in the next request, short and without the engine's words.
    const toolResult = (JSON.parse(provider.requests[1]?.body ?? "{}") as { messages: Array<{ role: string; content: string }> }).messages.find((m) => m.role === "tool")
    expect(toolResult?.content).toContain("nested deeper than 256 levels")
    expect(toolResult?.content.length).toBeLessThan(200)
    expect(JSON.stringify(chat.body)).not.toContain("Maximum call stack")
    expect((await api(host, "GET", "/api/health")).body).toMatchObject({ ok: true })
    expect(serve.child.exitCode).toBe(null)
    expect(serve.stderr()).not.toContain("Maximum call stack")
  }, 60_000)

  it("server.max_callback_response_depth bounds callback answers as configured", async () => {
    const provider = await startReplayProvider({
      scheme: "openai-chat",
      script: [
        { kind: "stream", transcript: chatToolCall("get_weather", '{"city":"Kyoto"}') },
        { kind: "stream", transcript: chatText("ok") }
      ]
    })
    replays.push(provider)
    const plugin = await startCallbackServer((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" })
      res.end(`{"output":${nestedText(6)}}`)
    })
    const host = await startHost({
      config: { server: { max_callback_response_depth: 4 }, roles: { helper: { provider: "openai", model: "m", base_url: provider.baseUrl } } },
      env: { OPENAI_API_KEY: "sk-test-depth-0000" }
    })
    await api(host, "POST", "/api/tools/register", weatherTool(plugin.url))
    const chat = await api(host, "POST", "/api/chat", { message: "weather?" })
    expect(chat.body["tool_calls"]).toMatchObject([{ status: "error", output: expect.stringContaining("nested deeper than 4 levels") }])
  })

  /** Every other JSON entry point: the same attack is a typed answer naming the bound, never the engine's error. */
  const entryPoints: ReadonlyArray<readonly [string, () => Promise<string>]> = [
    [
      "a host request body (registration, chat, lane), bounded by server.max_json_depth",
      async () => {
        // Commands run for the operator only (decision 0095): the attack on that route presents the operator token.
        const operator = "operator-token-depth-0123456789"
        const host = await startHost({ config: { server: { max_json_depth: 16, max_body_bytes: 4 * 1024 * 1024, operator_token_env: "OPERATOR" } }, env: { OPERATOR: operator } })
        const registered = await api(host, "POST", "/api/tools/register", { name: "note", callback_url: "http://127.0.0.1:9/x", source: "p1" })
        const token = registered.body["registrant_token"] as string
        const answers: Array<string> = []
        for (const path of ["/api/tools/register", "/api/chat", "/api/llm/complete", "/api/llm/complete-structured", "/api/commands/x"]) {
          const answer = await api(host, "POST", path, `{"name":${nestedText(ATTACK / 100)}}`, { "x-llm-worker-registrant-token": token, "x-llm-worker-operator-token": operator })
          answers.push(`${answer.status} ${answer.body.error ?? ""}`)
        }
        const shallow = await api(host, "POST", "/api/chat", { message: "hi", role: nestedValue(17) })
        answers.push(`${shallow.status} ${shallow.body.error ?? ""}`)
        return answers.join("\n")
      }
    ],
    [
      "createPluginLlmHandler given a parsed body by another server",
      async () => {
        const runtime = createPluginRuntime({ active: { provider: "openai", model: "m", apiKey: "sk-test-depth-0000" }, audit: false })
        const handler = createPluginLlmHandler({ runtime, pluginForToken: () => "p" })
        const answer = await handler.handle({
          method: "POST",
          path: "/api/llm/complete",
          headers: { "x-llm-worker-registrant-token": "t" },
          body: { messages: [{ role: "user", content: nestedValue(ATTACK) }] }
        })
        return `${answer.status} ${String(answer.body["error"])}`
      }
    ],
    [
      "a remote plugin's ctx.llm reading a hostile host's answer",
      async () => {
        const server = createServer((_req, res) => {
          res.writeHead(200, { "content-type": "application/json" })
          res.end(`{"ok":true,"text":"x","usage":${nestedText(ATTACK).replace("[", '{"a":[').replace(/\]$/, "]}")}}`)
        })
        servers.push(server)
        await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
        const lane = createRemotePluginLlm({ baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, registrantToken: "t" })
        const error = await lane.complete({ messages: [{ role: "user", content: "hi" }] }).then(
          () => "resolved",
          (e: unknown) => `${(e as { _tag?: string })._tag ?? "untyped"} ${(e as Error).message}`
        )
        return error
      }
    ],
    [
      "the host's config file",
      async () => {
        const answers: Array<string> = []
        for (const text of [`llm: ${nestedText(5000)}\n`, `roles:\n  a:\n${Array.from({ length: 300 }, (_, i) => `${" ".repeat(i + 4)}b${i}:`).join("\n")} 1\n`]) {
          try {
            parseHostConfig(text)
            answers.push("accepted")
          } catch (thrown) {
            answers.push(`${(thrown as Error).name} ${(thrown as Error).message}`)
          }
        }
        return answers.join("\n")
      }
    ]
  ]

  for (const [name, attack] of entryPoints) {
    it(`${name}: refused with the bound named, never "Maximum call stack"`, async () => {
      const outcome = await attack()
      for (const line of outcome.split("\n")) {
        expect(line).not.toContain("Maximum call stack")
        expect(line).toMatch(/^(422 |PluginLlmProviderUnavailable |HostConfigError ).*nested deeper than \d+ levels/)
      }
    })
  }
})
