import { afterEach, describe, expect, it } from "vitest"
import { complete, createLlmClient, type Event, type ProviderMeta, Worker, type WorkerEvent } from "../../src/index.ts"
import type { SchemeName } from "../../src/llm/scheme.ts"
import { type ReplayProvider, startReplayProvider } from "../../src/testing/index.ts"
import { loadTranscript } from "../support/sse-fixtures.ts"

/**
 * OpenAI's moderation results (moderated completions: Chat's `moderation` chunk, Responses' `response.moderation`)
 * are neither output nor history: they arrive as a `provider_meta` event, the provider's object kept whole.
 */

const PROVIDER_FOR = { "openai-chat": "openai", "openai-responses": "openai-responses" } as const

const servers: Array<ReplayProvider> = []
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()))
})

const clientFor = async (scheme: keyof typeof PROVIDER_FOR, transcripts: ReadonlyArray<string>) => {
  const server = await startReplayProvider({ scheme, script: transcripts.map((transcript) => ({ kind: "stream" as const, transcript })) })
  servers.push(server)
  return { server, client: createLlmClient({ provider: PROVIDER_FOR[scheme], model: "gpt-4.1-mini", apiKey: "test-key", baseUrl: server.baseUrl, retry: { maxRetries: 0 } }) }
}

/** The moderation object the transcript carries, read off the wire. */
const wireModeration = (scheme: SchemeName, transcript: string): unknown => {
  for (const line of transcript.split("\n")) {
    if (!line.startsWith("data: {")) continue
    const record = JSON.parse(line.slice("data: ".length)) as { moderation?: unknown; response?: { moderation?: unknown } }
    const found = scheme === "openai-chat" ? record.moderation : record.response?.moderation
    if (found !== undefined && found !== null) return found
  }
  throw new Error("the fixture has no moderation")
}

describe.each(["openai-chat", "openai-responses"] as const)("moderation results on %s", (scheme) => {
  const transcript = loadTranscript(scheme, "moderation")
  const expected = (): ProviderMeta => ({ scheme, kind: "moderation", json: JSON.stringify(wireModeration(scheme, transcript)) })

  it("the stream has one provider_meta event with the provider's object, and the answer is unchanged", async () => {
    const { client } = await clientFor(scheme, [transcript])
    const events: Array<Event> = []
    for await (const event of client.stream({ model: client.model, items: [{ type: "message", role: "user", content: [{ type: "input_text", text: "hi" }] }], tools: [], config: {} })) {
      events.push(event)
    }
    expect(events.filter((event) => event.type === "provider_meta")).toEqual([{ type: "provider_meta", meta: expected() }])
    expect(JSON.parse(expected().json)).toMatchObject({ input: expect.any(Object), output: expect.any(Object) })
    expect(events.at(-1)).toMatchObject({ type: "status", status: "completed" })
  })

  it("complete() returns it as providerMeta", async () => {
    const { client } = await clientFor(scheme, [transcript])
    const result = await complete(client, { input: "hi" })
    expect(result.text).toBe("Hello! How can I help?")
    expect(result.providerMeta).toEqual([expected()])
  })

  it("a Worker shows it to subscribers and keeps it out of the next request's history", async () => {
    const { client, server } = await clientFor(scheme, [transcript, transcript])
    const worker = Worker.create({ client })
    const seen: Array<WorkerEvent> = []
    worker.subscribe({ onProviderMeta: (event) => seen.push(event) })
    await worker.run("hi")
    await worker.run("again")
    expect(seen).toEqual([
      { type: "provider_meta", turn: 1, meta: expected() },
      { type: "provider_meta", turn: 1, meta: expected() }
    ])
    expect(server.requests[1]?.body).not.toContain("moderation")
  })
})
