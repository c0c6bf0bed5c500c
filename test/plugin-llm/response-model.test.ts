import { Effect } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import { createRemotePluginLlm } from "../../src/plugin-llm/index.ts"
import { answerSse } from "../support/answer-sse.ts"
import { api, closeAll, startHost } from "../remote/support/host.ts"
import { replay, runtimeOn } from "./support.ts"

/**
 * `ctx.llm` results name the model the provider answered with for this call (the Hermes contract: "whatever the
 * provider returned for this call"), not the route's alias; the alias stays readable as `requestedModel`. The same
 * on the audit record, on the HTTP lane's answer and through the remote client.
 */

const ASKED = "gpt-4.1-mini"
const ANSWERED = "gpt-4.1-mini-2025-04-14"
const usage = { input: 12, output: 4 }

afterEach(closeAll)

describe("ctx.llm reports the provider's model", () => {
  it("complete, completeStructured and their Effect forms: model is the provider's, requestedModel the route's; audit alike", async () => {
    const server = await replay("openai-chat", [
      { kind: "stream", transcript: answerSse("openai-chat", "pong", usage, ANSWERED) },
      { kind: "stream", transcript: answerSse("openai-chat", '{"ok":true}', usage, ANSWERED) },
      { kind: "stream", transcript: answerSse("openai-chat", "pong", usage, ANSWERED) },
      { kind: "stream", transcript: answerSse("openai-chat", '{"ok":true}', usage, ANSWERED) }
    ])
    const { runtime, audit } = runtimeOn(server, { model: ASKED })
    const llm = runtime.llm.forPlugin("tldr")
    const results = [
      await llm.complete({ messages: [{ role: "user", content: "ping" }] }),
      await llm.completeStructured({ instructions: "Answer.", input: [{ type: "text", text: "ok?" }], jsonMode: true }),
      await Effect.runPromise(llm.completeEffect({ messages: [{ role: "user", content: "ping" }] })),
      await Effect.runPromise(llm.completeStructuredEffect({ instructions: "Answer.", input: [{ type: "text", text: "ok?" }], jsonMode: true }))
    ]
    for (const result of results) {
      expect([result.model, result.requestedModel, result.audit.model, result.audit.requestedModel]).toEqual([ANSWERED, ASKED, ANSWERED, ASKED])
    }
    expect(audit.map((record) => [record.model, record.requestedModel, record.outcome])).toEqual(Array(4).fill([ANSWERED, ASKED, "ok"]))
  })

  it("a provider that names no model: model is the route's", async () => {
    const server = await replay("openai-chat", [{ kind: "stream", transcript: answerSse("openai-chat", "pong", usage, "").replaceAll('"model":"",', "") }])
    const { runtime } = runtimeOn(server, { model: ASKED })
    const result = await runtime.llm.forPlugin("tldr").complete({ messages: [{ role: "user", content: "ping" }] })
    expect([result.model, result.requestedModel, result.audit.model]).toEqual([ASKED, ASKED, ASKED])
  })

  it("a refused call's audit names the route's model for both", async () => {
    const server = await replay("openai-chat", [{ kind: "status", status: 400, body: '{"error":{"message":"bad","type":"invalid_request_error"}}' }])
    const { runtime, audit } = runtimeOn(server, { model: ASKED })
    await expect(runtime.llm.forPlugin("tldr").complete({ messages: [{ role: "user", content: "ping" }] })).rejects.toMatchObject({ _tag: "PluginLlmProviderUnavailable" })
    expect(audit.map((record) => [record.model, record.requestedModel])).toEqual([[ASKED, ASKED]])
  })

  it("the host's HTTP lane and the remote client report the provider's model, over real loopback HTTP", async () => {
    const provider = await replay("openai-chat", [
      { kind: "stream", transcript: answerSse("openai-chat", "pong", usage, ANSWERED) },
      { kind: "stream", transcript: answerSse("openai-chat", "pong", usage, ANSWERED) },
      { kind: "stream", transcript: answerSse("openai-chat", '{"ok":true}', usage, ANSWERED) }
    ])
    const host = await startHost({ config: { roles: { default: { provider: "openai", model: ASKED } } }, env: { OPENAI_API_KEY: "test-key", OPENAI_BASE_URL: provider.baseUrl } })
    const registered = await api(host, "POST", "/api/tools/register", { name: "note", callback_url: "http://127.0.0.1:9/tool_invoke", source: "notes-remote" })
    const token = registered.body["registrant_token"] as string

    const raw = await api(host, "POST", "/api/llm/complete", { messages: [{ role: "user", content: "ping" }] }, { "x-llm-worker-registrant-token": token })
    expect(raw.status).toBe(200)
    expect([raw.body["model"], raw.body["requested_model"]]).toEqual([ANSWERED, ASKED])
    expect(raw.body["audit"]).toMatchObject({ model: ANSWERED, requested_model: ASKED })

    const remote = createRemotePluginLlm({ baseUrl: host.url, registrantToken: token })
    const text = await remote.complete({ messages: [{ role: "user", content: "ping" }] })
    const structured = await remote.completeStructured({ instructions: "Answer.", input: [{ type: "text", text: "ok?" }], jsonMode: true })
    for (const result of [text, structured]) {
      expect([result.model, result.requestedModel, result.audit.model, result.audit.requestedModel]).toEqual([ANSWERED, ASKED, ANSWERED, ASKED])
    }
  })
})
