import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { fileURLToPath } from "node:url"
import { afterEach, describe, expect, it } from "vitest"
import { z } from "zod"
import { createPluginLlmHandler, parseSlashCommand } from "../../src/plugin-llm/http-handler.ts"
import { createRemotePluginLlm } from "../../src/plugin-llm/remote-client.ts"
import type { PluginRuntime } from "../../src/plugin-llm/plugin-runtime.ts"
import { answerSse } from "../support/answer-sse.ts"
import { answering, replay, runtimeOn, SECRET } from "./support.ts"

const examples = fileURLToPath(new URL("../../docs/examples/", import.meta.url))
const NOTES = "Ana ships the release on Friday. Someone books the room."
const TASKS_ANSWER = '{"tasks":[{"owner":"Ana","action":"ship the release","due":"2026-12-04"},{"owner":null,"action":"book the room","due":null}]}'

const loadExamples = async (runtime: PluginRuntime) => runtime.loadFromConfig()
const exampleConfig = {
  plugins: { entries: { tldr: { module: "plugins/tldr.ts" }, "paste-to-tasks": { module: "plugins/paste-to-tasks.ts" } } }
}

const closers: Array<() => Promise<void>> = []
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()))
})

/** How a host mounts the handler on node:http: parse JSON, hand over, write the answer. */
const serve = async (handler: ReturnType<typeof createPluginLlmHandler>): Promise<string> => {
  const server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    const path = new URL(req.url ?? "/", "http://host").pathname
    const chunks: Array<Buffer> = []
    for await (const chunk of req) chunks.push(chunk as Buffer)
    const text = Buffer.concat(chunks).toString("utf8")
    const abort = new AbortController()
    res.on("close", () => abort.abort())
    let body: unknown
    try {
      body = text === "" ? undefined : JSON.parse(text)
    } catch {
      res.writeHead(400, { "content-type": "application/json" }).end('{"ok":false,"error":"invalid JSON"}')
      return
    }
    const answer = await handler.handle({ method: req.method ?? "GET", path, headers: req.headers, body, signal: abort.signal })
    res.writeHead(answer.status, { "content-type": "application/json" }).end(JSON.stringify(answer.body))
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  closers.push(() => new Promise((resolve) => server.close(() => resolve())))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

const post = async (base: string, path: string, body: unknown, headers: Record<string, string> = {}) => {
  const response = await fetch(`${base}${path}`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) })
  return { status: response.status, body: (await response.json()) as Record<string, unknown> }
}

describe("the seed's example plugins, loaded from the config", () => {
  it("/tldr and /paste-to-tasks work in-process through the ctx API", async () => {
    const server = await replay("openai-chat", [
      { kind: "stream", transcript: answerSse("openai-chat", "Ana ships Friday; the room needs booking.") },
      { kind: "stream", transcript: answerSse("openai-chat", TASKS_ANSWER) }
    ])
    const { runtime, audit } = runtimeOn(server, { baseDir: examples, config: exampleConfig })
    expect((await loadExamples(runtime)).map((p) => p.id)).toEqual(["tldr", "paste-to-tasks"])
    expect(await runtime.commands.run("tldr", NOTES)).toEqual({ ok: true, output: "Ana ships Friday; the room needs booking." })
    expect(await runtime.commands.run("paste-to-tasks", NOTES)).toEqual({ ok: true, output: "- [Ana] ship the release\n- [?] book the room" })
    expect(await runtime.commands.run("tldr", "  ")).toEqual({ ok: true, output: "Usage: /tldr <text to summarise>" })
    expect(audit.map((a) => [a.pluginId, a.purpose, a.kind, a.outcome])).toEqual([
      ["tldr", "tldr", "complete", "ok"],
      ["paste-to-tasks", "paste-to-tasks", "complete_structured", "ok"]
    ])
    const structured = JSON.parse(server.requests[1]?.body ?? "{}") as { response_format: { json_schema: { name: string; strict: boolean } } }
    expect(structured.response_format.json_schema).toMatchObject({ name: "meeting_tasks", strict: true })
  })

  it("a module whose manifest name is not its entry id is refused", async () => {
    const { runtime } = runtimeOn(await answering("openai-chat", "x"), { baseDir: examples, config: { plugins: { entries: { other: { module: "plugins/tldr.ts" } } } } })
    await expect(runtime.loadFromConfig()).rejects.toThrow('is plugin "tldr", not "other"')
  })

  it("`/<name> <args>` lines are recognised for the chat", () => {
    expect(parseSlashCommand("/tldr  some long text\nmore")).toEqual({ name: "tldr", args: "some long text\nmore" })
    expect(parseSlashCommand("/paste-to-tasks")).toEqual({ name: "paste-to-tasks", args: "" })
    expect(parseSlashCommand("hello /tldr")).toBeUndefined()
    expect(parseSlashCommand("/Weird!")).toBeUndefined()
  })
})

describe("the same lane over HTTP (a real loopback server mounting the handler)", () => {
  const setup = async (script: ReadonlyArray<string>, config: Record<string, unknown> = exampleConfig) => {
    const provider = await replay("openai-chat", script.map((transcript) => ({ kind: "stream" as const, transcript })))
    const { runtime, audit } = runtimeOn(provider, { baseDir: examples, config })
    await runtime.loadFromConfig()
    const tokens = new Map([["tok-remote", "remote-notes"]])
    const base = await serve(createPluginLlmHandler({ runtime, pluginForToken: (token) => tokens.get(token) }))
    return { base, provider, audit }
  }

  it("POST /api/commands/<name> runs a command; an unknown one is 404", async () => {
    const { base } = await setup([answerSse("openai-chat", TASKS_ANSWER)])
    expect(await post(base, "/api/commands/paste-to-tasks", { args: NOTES })).toEqual({ status: 200, body: { ok: true, output: "- [Ana] ship the release\n- [?] book the room" } })
    expect(await post(base, "/api/commands/nope", { args: "x" })).toEqual({ status: 404, body: { ok: false, error: "unknown command: /nope" } })
    expect((await post(base, "/api/commands/tldr", { args: 3 })).status).toBe(422)
    const list = (await (await fetch(`${base}/api/commands`)).json()) as { commands: Array<{ name: string }> }
    expect(list.commands.map((c) => c.name)).toEqual(["paste-to-tasks", "tldr"])
  })

  it("a remote plugin calls complete-structured with its registrant token: same gate, audit and result", async () => {
    const { base, audit } = await setup([answerSse("openai-chat", TASKS_ANSWER, { input: 70, output: 30 })])
    const schema = { type: "object", properties: { tasks: { type: "array", items: { type: "object", properties: { owner: { type: "string" }, action: { type: "string" }, due: { type: "string" } }, required: ["action"] } } }, required: ["tasks"] }
    const answer = await post(base, "/api/llm/complete-structured", { instructions: "Extract tasks.", input: [{ type: "text", text: NOTES }], json_schema: schema, schema_name: "meeting.tasks", purpose: "remote" }, { "x-llm-worker-registrant-token": "tok-remote" })
    expect(answer.status).toBe(200)
    expect(answer.body).toMatchObject({
      ok: true, content_type: "json", provider: "openai", model: "replayed-model", requested_model: "gpt-4.1-mini", agent_id: "default",
      parsed: { tasks: [{ owner: "Ana", action: "ship the release", due: "2026-12-04" }, { action: "book the room" }] },
      usage: { input_tokens: 70, output_tokens: 30, total_tokens: 100, cost_source: "genai-prices" },
      audit: { plugin_id: "remote-notes", purpose: "remote", schema_name: "meeting.tasks", outcome: "ok" }
    })
    expect(audit.at(-1)?.pluginId).toBe("remote-notes")
    expect(JSON.stringify(answer.body)).not.toContain(SECRET)
  })

  it("refuses without a token, with an unknown token, unknown fields, and gated overrides", async () => {
    const { base, provider } = await setup([answerSse("openai-chat", "x")])
    const body = { messages: [{ role: "user", content: "hi" }] }
    expect(await post(base, "/api/llm/complete", body)).toMatchObject({ status: 401 })
    expect(await post(base, "/api/llm/complete", body, { "x-llm-worker-registrant-token": "forged" })).toMatchObject({ status: 401, body: { error: "unknown registrant token" } })
    const auth = { "x-llm-worker-registrant-token": "tok-remote" }
    expect(await post(base, "/api/llm/complete", { ...body, modle: "x" }, auth)).toMatchObject({ status: 422, body: { issues: [{ path: "modle", message: "unknown field" }] } })
    expect(await post(base, "/api/llm/complete", { ...body, model: "gpt-4.1" }, auth)).toEqual({
      status: 403,
      body: {
        ok: false, error_type: "PluginLlmTrustError", plugin_id: "remote-notes", override: "model", config_key: "plugins.entries.remote-notes.llm.allow_model_override",
        error: 'plugin "remote-notes" may not choose a model (asked for "gpt-4.1"); the operator can allow it with plugins.entries.remote-notes.llm.allow_model_override: true'
      }
    })
    expect(await post(base, "/api/llm/complete", { messages: [] }, auth)).toMatchObject({ status: 422, body: { error_type: "PluginLlmInputError", issues: [{ path: "messages" }] } })
    expect(provider.requests).toHaveLength(0)
    expect(await post(base, "/api/llm/complete", body, auth)).toMatchObject({ status: 200, body: { ok: true, text: "x" } })
  })

  it("createRemotePluginLlm: the ctx.llm interface over HTTP, typed errors included", async () => {
    const { base, provider } = await setup([answerSse("openai-chat", TASKS_ANSWER, { input: 70, output: 30 }), answerSse("openai-chat", "pong")])
    const remote = createRemotePluginLlm({ baseUrl: base, registrantToken: "tok-remote" })
    const Tasks = z.object({ tasks: z.array(z.object({ owner: z.string().optional(), action: z.string().transform((a) => a.toUpperCase()), due: z.string().optional() })) })
    const structured = await remote.completeStructured({ instructions: "Extract tasks.", input: [{ type: "text", text: NOTES }], jsonSchema: Tasks, schemaName: "meeting.tasks" })
    // The host validated the JSON Schema; the zod transform ran on the plugin's side.
    expect(structured.parsed?.tasks.map((t) => t.action)).toEqual(["SHIP THE RELEASE", "BOOK THE ROOM"])
    expect(structured.usage).toMatchObject({ inputTokens: 70, costSource: "genai-prices" })
    expect(structured.audit).toMatchObject({ pluginId: "remote-notes", schemaName: "meeting.tasks" })
    expect((await remote.complete({ messages: [{ role: "user", content: "ping" }] })).text).toBe("pong")
    const refused = await remote.complete({ messages: [{ role: "user", content: "x" }], model: "gpt-4.1" }).catch((e: unknown) => e)
    expect(refused).toMatchObject({ _tag: "PluginLlmTrustError", pluginId: "remote-notes", override: "model", configKey: "plugins.entries.remote-notes.llm.allow_model_override" })
    const forged = await createRemotePluginLlm({ baseUrl: base, registrantToken: "forged" }).complete({ messages: [{ role: "user", content: "x" }] }).catch((e: unknown) => e)
    expect(forged).toMatchObject({ _tag: "PluginLlmProviderUnavailable", message: "host: unknown registrant token" })
    expect(provider.requests).toHaveLength(2)
  })
})
