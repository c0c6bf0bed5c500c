import fc from "fast-check"
import { afterEach, describe, expect, it } from "vitest"
import { createLlmClient, type Event } from "../../src/index.ts"
import { type ReplayProvider, startReplayProvider } from "../../src/testing/index.ts"
import { keyArbitrary, leaks, placementArbitrary, PROVIDER_OF, surfacesOf, transcriptWithKey } from "../support/key-in-provider-errors.ts"

const servers: Array<ReplayProvider> = []
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()))
})

describe("the core client keeps its own key out of the errors it reports, wherever the provider echoes it", () => {
  it("property: the key in any field of each provider's genuine error event reaches neither the error event nor the thrown LlmProviderError", async () => {
    await fc.assert(
      fc.asyncProperty(placementArbitrary(), keyArbitrary, async (placement, key) => {
        const server = await startReplayProvider({ scheme: placement.scheme, script: [{ kind: "stream", transcript: transcriptWithKey(placement, key) }] })
        servers.push(server)
        const client = createLlmClient({ provider: PROVIDER_OF[placement.scheme], model: "replay-model", apiKey: key, baseUrl: server.baseUrl, retry: { maxRetries: 0 } })
        const events: Array<Event> = []
        const thrown = await (async () => {
          for await (const event of client.stream({ model: client.model, items: [{ type: "message", role: "user", content: [{ type: "input_text", text: "hi" }] }], tools: [], config: {} })) events.push(event)
        })().then(
          () => undefined,
          (error: unknown) => error
        )
        expect(server.requests).toHaveLength(1)
        const shown = `${thrown === undefined ? "" : surfacesOf(thrown)}\n${JSON.stringify(events)}`
        expect(leaks(shown, key), shown.slice(0, 2000)).toBe(false)
      }),
      { numRuns: 100 }
    )
  })

  it("an HTTP error body that quotes the key is reported without it", async () => {
    const key = "sk-core-key-echoed-0123456789abcdef"
    const server = await startReplayProvider({
      scheme: "openai-chat",
      script: [{ kind: "status", status: 401, headers: { "content-type": "application/json" }, body: JSON.stringify({ error: { message: `Incorrect API key provided: ${key}`, type: "invalid_request_error", param: null, code: "invalid_api_key" } }) }]
    })
    servers.push(server)
    const client = createLlmClient({ provider: "openai", model: "gpt-test", apiKey: key, baseUrl: server.baseUrl, retry: { maxRetries: 0 } })
    const thrown = await (async () => {
      for await (const _ of client.stream({ model: client.model, items: [{ type: "message", role: "user", content: [{ type: "input_text", text: "hi" }] }], tools: [], config: {} })) void _
    })().then(
      () => undefined,
      (error: unknown) => error
    )
    expect(thrown).toMatchObject({ _tag: "LlmHttpError", status: 401, body: expect.stringContaining("Incorrect API key provided: ***") })
    expect(leaks(surfacesOf(thrown), key)).toBe(false)
  })
})
