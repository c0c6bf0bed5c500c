import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import { startReplayProvider } from "../../src/testing/index.ts"
import { answerSse } from "../support/answer-sse.ts"
import { startCli } from "../cli/cli-process.ts"
import { api, chatText, chatToolCall, json, startCallbackServer } from "./support/host.ts"
import { READY, serveChildren } from "./support/serve-children.ts"

const EXAMPLES = fileURLToPath(new URL("../../docs/examples/plugins/", import.meta.url))
const FIXTURES = fileURLToPath(new URL("./fixtures/", import.meta.url))
const KEY = "sk-test-serve-plugins-SECRET-0123456789"
const NOTES = "Ana ships the release on Friday. Someone books the room."
const TASKS = '{"tasks":[{"owner":"Ana","action":"ship the release","due":"2026-12-04"},{"owner":null,"action":"book the room","due":null}]}'
const TOKEN_HEADER = "x-llm-worker-registrant-token"
const OPERATOR_HEADER = "x-llm-worker-operator-token"
const OPERATOR = "operator-token-for-the-serve-test-0123"
const asOperator = { [OPERATOR_HEADER]: OPERATOR }

const { children, replays } = serveChildren()

// Relative module paths are resolved from the config file's folder, so the file names the modules absolutely.
const configFile = (operator = true): string => {
  const dir = mkdtempSync(join(tmpdir(), "llm-worker-plugins-"))
  const path = join(dir, "llm-worker.yaml")
  writeFileSync(
    path,
    [
      ...(operator ? ["server:", "  operator_token_env: LLMW_OPERATOR"] : []),
      "roles:",
      "  default:",
      "    provider: openai",
      "    model: gpt-4.1-mini",
      "plugins:",
      "  entries:",
      "    tldr:",
      `      module: ${JSON.stringify(join(EXAMPLES, "tldr.ts"))}`,
      "    paste-to-tasks:",
      `      module: ${JSON.stringify(join(EXAMPLES, "paste-to-tasks.ts"))}`,
      "    word-count:",
      `      module: ${JSON.stringify(join(FIXTURES, "word-count-plugin.ts"))}`,
      ""
    ].join("\n")
  )
  return path
}

const SCHEMA = {
  type: "object",
  properties: { tasks: { type: "array", items: { type: "object", properties: { owner: { type: "string" }, action: { type: "string" }, due: { type: "string" } }, required: ["action"] } } },
  required: ["tasks"]
}

describe("plugins in `llm-worker serve` (a child process, the replay provider as the model)", () => {
  it("runs the seed's example plugins, lends ctx.llm to a remote plugin by its registrant token, and holds the gates", async () => {
    const provider = await startReplayProvider({
      scheme: "openai-chat",
      script: [
        { kind: "stream", transcript: answerSse("openai-chat", "Ana ships Friday; the room needs booking.") },
        { kind: "stream", transcript: answerSse("openai-chat", TASKS) },
        { kind: "stream", transcript: answerSse("openai-chat", TASKS, { input: 70, output: 30 }) },
        { kind: "stream", transcript: chatToolCall("count_words", '{"text":"one two three"}') },
        { kind: "stream", transcript: chatText("Three words.") }
      ]
    })
    replays.push(provider)
    const serve = startCli(["serve", "--config", configFile(), "--port", "0"], { OPENAI_API_KEY: KEY, OPENAI_BASE_URL: provider.baseUrl, LLMW_OPERATOR: OPERATOR })
    children.push(serve)
    await serve.waitFor(READY)
    const [, port, instance] = READY.exec(serve.stdout()) ?? []
    const host = { url: `http://127.0.0.1:${port}` }

    // The in-process plugin's tool is on the role, owned by the plugin.
    const tools = (await api(host, "GET", "/api/tools")).body as { roles: { default: Array<Record<string, unknown>> } }
    expect(tools.roles.default).toEqual([expect.objectContaining({ name: "count_words", source: "word-count", owner: "plugin", state: "active" })])
    const commands = (await api(host, "GET", "/api/commands")).body as { commands: Array<{ name: string; plugin: string }> }
    expect(commands.commands.map((c) => [c.name, c.plugin])).toEqual([["paste-to-tasks", "paste-to-tasks"], ["stall", "word-count"], ["tldr", "tldr"], ["wc", "word-count"]])

    // The seed's two examples, through POST /api/commands/<name>.
    const tldr = await api(host, "POST", "/api/commands/tldr", { args: NOTES }, asOperator)
    expect(tldr).toMatchObject({ status: 200, body: { ok: true, output: "Ana ships Friday; the room needs booking.", instance_id: instance } })
    expect(tldr.headers.get("x-llm-worker-instance")).toBe(instance)
    const first = JSON.parse(provider.requests[0]?.body ?? "{}") as { model: string; messages: Array<{ role: string; content: unknown }> }
    expect(first.model).toBe("gpt-4.1-mini")
    expect(JSON.stringify(first.messages)).toContain("Summarise the user's text")
    expect(provider.requests[0]?.headers.authorization).toBe(`Bearer ${KEY}`)
    expect(await api(host, "POST", "/api/commands/paste-to-tasks", { args: NOTES }, asOperator)).toMatchObject({ status: 200, body: { ok: true, output: "- [Ana] ship the release\n- [?] book the room" } })
    expect(await api(host, "POST", "/api/commands/nope", { args: "x" }, asOperator)).toMatchObject({ status: 404, body: { ok: false, error: "unknown command: /nope" } })
    expect(await api(host, "POST", "/api/commands/tldr", { args: 3 }, asOperator)).toMatchObject({ status: 422, body: { issues: [{ path: "args" }] } })
    expect(await api(host, "POST", "/api/commands/wc", { args: "a b c d" }, asOperator)).toMatchObject({ status: 200, body: { output: "4 words" } })
    expect(provider.requests).toHaveLength(2)

    // A remote plugin: its registrant token (from registering a tool) is its key to the lane.
    const callback = await startCallbackServer((_req, res) => json(res, 200, { output: "ok" }))
    const registered = await api(host, "POST", "/api/tools/register", { name: "file_note", callback_url: callback.url, source: "notes-remote" })
    expect(registered.body).toMatchObject({ ok: true, source: "notes-remote" })
    const token = registered.body["registrant_token"] as string
    const ask = { instructions: "Extract tasks.", input: [{ type: "text", text: NOTES }], json_schema: SCHEMA, schema_name: "meeting.tasks", purpose: "remote" }
    expect(await api(host, "POST", "/api/llm/complete-structured", ask)).toMatchObject({ status: 401, body: { ok: false, error: `present the plugin's registrant token in ${TOKEN_HEADER}`, instance_id: instance } })
    expect(await api(host, "POST", "/api/llm/complete-structured", ask, { [TOKEN_HEADER]: `${token}x` })).toMatchObject({ status: 401, body: { error: "unknown registrant token" } })
    expect(provider.requests).toHaveLength(2)
    const structured = await api(host, "POST", "/api/llm/complete-structured", ask, { [TOKEN_HEADER]: token })
    expect(structured).toMatchObject({
      status: 200,
      body: {
        ok: true, content_type: "json", provider: "openai", model: "replayed-model", requested_model: "gpt-4.1-mini", agent_id: "default", instance_id: instance,
        parsed: { tasks: [{ owner: "Ana", action: "ship the release" }, { action: "book the room" }] },
        usage: { input_tokens: 70, output_tokens: 30, total_tokens: 100 },
        audit: { plugin_id: "notes-remote", purpose: "remote", schema_name: "meeting.tasks", outcome: "ok" }
      }
    })
    expect(JSON.stringify(structured.body)).not.toContain(KEY)
    const sent = JSON.parse(provider.requests[2]?.body ?? "{}") as { response_format: { json_schema: { name: string; strict: boolean } } }
    expect(sent.response_format.json_schema).toMatchObject({ name: "meeting_tasks", strict: true })

    // A refused override is answered before any provider request; a wrong field type by the host's own check.
    const refused = await api(host, "POST", "/api/llm/complete", { messages: [{ role: "user", content: "hi" }], model: "gpt-4.1" }, { [TOKEN_HEADER]: token })
    expect(refused).toMatchObject({
      status: 403,
      body: { ok: false, error_type: "PluginLlmTrustError", plugin_id: "notes-remote", override: "model", config_key: "plugins.entries.notes-remote.llm.allow_model_override", instance_id: instance }
    })
    expect(await api(host, "POST", "/api/llm/complete", { messages: "hi" }, { [TOKEN_HEADER]: token })).toMatchObject({ status: 422, body: { issues: [{ path: "messages" }] } })
    expect(provider.requests).toHaveLength(3)

    // The in-process plugins' ids are the host's: nobody acts for them over HTTP.
    expect(await api(host, "POST", "/api/tools/register", { name: "tldr_x", callback_url: callback.url, source: "tldr" })).toMatchObject({ status: 403 })
    expect(await api(host, "POST", "/api/tools/unregister", { name: "count_words" })).toMatchObject({ status: 409 })
    expect(await api(host, "POST", "/api/tools/register", { name: "count_words", callback_url: callback.url, source: "notes-remote" }, { [TOKEN_HEADER]: token })).toMatchObject({ status: 409 })

    // The plugin's tool runs in the host's turn loop.
    const chat = await api(host, "POST", "/api/chat", { message: "How many words in: one two three?" })
    expect(chat.body).toMatchObject({ ok: true, text: "Three words.", tool_calls: [{ name: "count_words", status: "ok", output: "3" }] })

    serve.child.kill("SIGTERM")
    expect(await serve.exited).toBe(0)
    const audit = serve.stderr().split("\n").filter((line) => line.startsWith("llm-worker plugin-llm audit "))
    expect(audit.map((line) => (JSON.parse(line.slice("llm-worker plugin-llm audit ".length)) as { pluginId: string; outcome: string }))).toEqual([
      expect.objectContaining({ pluginId: "tldr", outcome: "ok" }),
      expect.objectContaining({ pluginId: "paste-to-tasks", outcome: "ok" }),
      expect.objectContaining({ pluginId: "notes-remote", outcome: "ok" }),
      expect.objectContaining({ pluginId: "notes-remote", outcome: "PluginLlmTrustError" })
    ])
    expect(serve.stderr()).not.toContain(KEY)
  })

  it("runs a command only for the operator: without an operator token configured none runs; with one, no token, a wrong one or a plugin's registrant token are refused before the plugin runs", async () => {
    const provider = await startReplayProvider({ scheme: "openai-chat", script: [{ kind: "stream", transcript: answerSse("openai-chat", "A summary.") }] })
    replays.push(provider)
    // A host without an operator token runs no command over HTTP at all (listing them stays open).
    const closed = startCli(["serve", "--config", configFile(false), "--port", "0"], { OPENAI_API_KEY: KEY, OPENAI_BASE_URL: provider.baseUrl })
    children.push(closed)
    await closed.waitFor(READY)
    const other = { url: `http://127.0.0.1:${READY.exec(closed.stdout())?.[1]}` }
    expect(await api(other, "POST", "/api/commands/wc", { args: "a b" })).toMatchObject({
      status: 403,
      body: { ok: false, error: "commands cannot be run over HTTP: the host has no operator token (server.operator_token_env)" }
    })
    expect((await api(other, "GET", "/api/commands")).status).toBe(200)
    closed.child.kill("SIGTERM")
    expect(await closed.exited).toBe(0)

    const serve = startCli(["serve", "--config", configFile(), "--port", "0"], { OPENAI_API_KEY: KEY, OPENAI_BASE_URL: provider.baseUrl, LLMW_OPERATOR: OPERATOR })
    children.push(serve)
    await serve.waitFor(READY)
    const host = { url: `http://127.0.0.1:${READY.exec(serve.stdout())?.[1]}` }
    const callback = await startCallbackServer((_req, res) => json(res, 200, { output: "ok" }))
    const registrant = (await api(host, "POST", "/api/tools/register", { name: "file_note", callback_url: callback.url, source: "notes-remote" })).body["registrant_token"] as string

    expect(await api(host, "POST", "/api/commands/tldr", { args: NOTES })).toMatchObject({ status: 401, body: { ok: false, error: `present the operator token in ${OPERATOR_HEADER}` } })
    expect(await api(host, "POST", "/api/commands/tldr", { args: NOTES }, { [OPERATOR_HEADER]: `${OPERATOR}x` })).toMatchObject({ status: 401, body: { error: "wrong operator token" } })
    expect(await api(host, "POST", "/api/commands/tldr", { args: NOTES }, { [OPERATOR_HEADER]: registrant, [TOKEN_HEADER]: registrant })).toMatchObject({ status: 401 })
    // Nothing ran on the plugin's budget.
    expect(provider.requests).toHaveLength(0)
    expect(await api(host, "POST", "/api/commands/tldr", { args: NOTES }, asOperator)).toMatchObject({ status: 200, body: { ok: true, output: "A summary." } })
    expect(provider.requests).toHaveLength(1)
    serve.child.kill("SIGTERM")
    expect(await serve.exited).toBe(0)
  })
})
