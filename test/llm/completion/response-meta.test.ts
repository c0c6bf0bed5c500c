import { afterEach, describe, expect, it } from "vitest"
import { complete } from "../../../src/llm/completion/complete.ts"
import { createLlmClient } from "../../../src/llm/llm-client.ts"
import type { SchemeName } from "../../../src/llm/scheme.ts"
import { type ReplayProvider, startReplayProvider } from "../../../src/testing/index.ts"
import { anthropicStream, chatStream, geminiStream, responsesStream } from "../../support/response-meta-sse.ts"

/** `complete()` over real loopback HTTP: the caller sees which model answered a request for an alias, and the id. */

const cases: ReadonlyArray<{
  readonly scheme: SchemeName
  readonly provider: string
  readonly requested: string
  readonly answered: string
  readonly id: string
  readonly stream: (model: unknown, id: unknown) => string
}> = [
  { scheme: "openai-chat", provider: "openai", requested: "gpt-4o", answered: "gpt-4o-2024-08-06", id: "chatcmpl-Bx7aQm2LkP0wN4sV9tY1uZ3c", stream: chatStream },
  { scheme: "openai-responses", provider: "openai-responses", requested: "gpt-4o", answered: "gpt-4o-2024-08-06", id: "resp_67ccd2bed1ec8190b14f964abc054267", stream: responsesStream },
  { scheme: "anthropic", provider: "anthropic", requested: "claude-sonnet-4-5", answered: "claude-sonnet-4-5-20250929", id: "msg_01Ka7bQwErTyUi9oPlMnBvCx", stream: anthropicStream },
  { scheme: "gemini", provider: "gemini", requested: "gemini-flash-latest", answered: "gemini-2.5-flash-preview-09-2025", id: "Kx9aaQ2bC3dE4fG5hI6jK7l", stream: geminiStream }
]

const servers: Array<ReplayProvider> = []
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()))
})

describe.each(cases)("complete() reports the answering model and response id: $scheme", (c) => {
  const answer = async (model: unknown, id: unknown) => {
    const server = await startReplayProvider({ scheme: c.scheme, script: [{ kind: "stream", transcript: c.stream(model, id) }] })
    servers.push(server)
    const client = createLlmClient({ provider: c.provider, model: c.requested, apiKey: "test-key", baseUrl: server.baseUrl, retry: { maxRetries: 0 } })
    return complete(client, { input: "Say hi." })
  }

  it("keeps the model asked for as `model` and adds the provider's own as `responseModel`", async () => {
    const result = await answer(c.answered, c.id)
    expect([result.text, result.model, result.responseModel, result.responseId]).toEqual(["Hi.", c.requested, c.answered, c.id])
  })

  it("leaves both out when the provider states none the client can use", async () => {
    const result = await answer(12, null)
    expect(result.text).toBe("Hi.")
    expect("responseModel" in result || "responseId" in result).toBe(false)
  })
})
