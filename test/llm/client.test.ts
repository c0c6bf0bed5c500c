import fc from "fast-check"
import { afterEach, describe, expect, it } from "vitest"
import type { Event } from "../../src/llm/event.ts"
import { Item } from "../../src/llm/item.ts"
import { createLlmClient } from "../../src/llm/llm-client.ts"
import type { LlmError } from "../../src/llm/llm-error.ts"
import { providers } from "../../src/llm/providers/registry.ts"
import type { Request } from "../../src/llm/request.ts"
import type { SchemeName } from "../../src/llm/scheme.ts"
import { parseSseText } from "../../src/llm/sse.ts"
import { startReplayProvider } from "../../src/testing/replay-provider.ts"
import { listTranscripts, loadTranscript } from "../support/sse-fixtures.ts"
import type { ReplayProvider } from "../../src/testing/replay-provider.ts"

const PROVIDER_FOR: Readonly<Record<SchemeName, string>> = {
  "openai-chat": "openai",
  "openai-responses": "openai-responses",
  anthropic: "anthropic",
  gemini: "gemini"
}
const SCHEMES = Object.keys(PROVIDER_FOR) as ReadonlyArray<SchemeName>

const weatherTool = {
  name: "get_weather",
  description: "Current weather for a city",
  inputSchema: { type: "object", properties: { location: { type: "string" } }, required: ["location"], additionalProperties: false }
} as const
const request = (model: string): Request => ({
  model,
  systemPrompt: "You are terse.",
  items: [Item.userText("What's the weather in Paris and London?")],
  tools: [weatherTool],
  config: { maxTokens: 256 }
})

let server: ReplayProvider | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
})

const collect = async (stream: AsyncIterable<Event>): Promise<{ events: Array<Event>; error?: LlmError }> => {
  const events: Array<Event> = []
  try {
    for await (const event of stream) events.push(event)
    return { events }
  } catch (error) {
    return { events, error: error as LlmError }
  }
}

/**
 * Call ids a decoder generates (when the provider sends none) are unique per decoder; numbering them by first
 * appearance compares two decodings of the same transcript.
 */
const withStableIds = (events: ReadonlyArray<Event>): ReadonlyArray<Event> => {
  const ids = new Map<string, string>()
  return events.map((event) => {
    if (event.type !== "block_start" || event.block.kind !== "tool_use") return event
    if (!ids.has(event.block.id)) ids.set(event.block.id, `id-${ids.size}`)
    return { ...event, block: { ...event.block, id: ids.get(event.block.id)! } }
  })
}

/** Tool calls as a consumer assembles them: id, name, the concatenated argument text, and whether it closed. */
const toolCalls = (events: ReadonlyArray<Event>) => {
  const calls = new Map<number, { id: string; name: string; json: string; stopped: boolean; aborted: boolean }>()
  for (const event of events) {
    if (event.type === "block_start" && event.block.kind === "tool_use") {
      calls.set(event.index, { id: event.block.id, name: event.block.name, json: "", stopped: false, aborted: false })
    } else if (event.type === "block_delta" && event.delta.kind === "input_json") {
      const call = calls.get(event.index)
      if (call !== undefined) call.json += event.delta.json
    } else if (event.type === "block_stop") {
      const call = calls.get(event.index)
      if (call !== undefined) call.stopped = true
    } else if (event.type === "block_abort") {
      const call = calls.get(event.index)
      if (call !== undefined) call.aborted = true
    }
  }
  return [...calls.values()]
}

describe.each(SCHEMES)("every %s fixture through the real client", (scheme) => {
  const names = listTranscripts(scheme)
  const model = scheme === "gemini" ? "gemini-2.5-flash" : scheme === "anthropic" ? "claude-sonnet-4-5" : "gpt-4o-mini"

  it("has recorded transcripts", () => {
    expect(names, `no transcripts under test/fixtures/sse/${scheme}`).not.toHaveLength(0)
  })

  it.each(names)("%s", async (name) => {
    const transcript = loadTranscript(scheme, name)
    server = await startReplayProvider({ scheme, script: [{ kind: "stream", transcript }] })
    const client = createLlmClient({ provider: PROVIDER_FOR[scheme], model, apiKey: "test-key", baseUrl: server.baseUrl, retry: { maxRetries: 0 } })
    const req = request(model)
    const { events, error } = await collect(client.stream(req))

    // The transport adds nothing and loses nothing: same events as decoding the transcript in one piece.
    const decoder = providers.get(PROVIDER_FOR[scheme])!.scheme.decoder(req)
    // A decoder throws on a protocol error (a spliced second message); the transport then ends it, as here.
    const pushed: Array<Event> = []
    let refused: unknown
    for (const message of parseSseText(transcript)) {
      try {
        pushed.push(...decoder.push(message))
      } catch (thrown) {
        refused = thrown
        break
      }
    }
    const direct = [...pushed, ...decoder.end()]
    expect(withStableIds(events)).toEqual(withStableIds(direct))
    expect(server.requests).toHaveLength(1)
    expect(server.requests[0]!.body).toBe(client.encodeRequest(req))

    const failedInStream = pushed.some((e) => e.type === "error")
    const completed = direct.some((e) => e.type === "status" && e.status === "completed")
    if (refused !== undefined) expect(error?._tag).toBe("LlmProtocolError")
    else if (failedInStream) expect(error?._tag).toBe("LlmProviderError")
    else if (!completed) expect(error?._tag).toBe("LlmNetworkError")
    else {
      expect(error).toBeUndefined()
      // Every tool call arrives whole (closed, with arguments that parse as a JSON object) or is aborted.
      for (const call of toolCalls(events)) {
        expect(call.stopped || call.aborted, `${name}: ${call.name} never closed`).toBe(true)
        expect(call.id).not.toBe("")
        if (call.stopped) expect(typeof JSON.parse(call.json === "" ? "{}" : call.json)).toBe("object")
      }
    }
    // Whatever happened, no block is left open.
    const opened = events.filter((e) => e.type === "block_start").map((e) => e.index)
    const closed = events.filter((e) => e.type === "block_stop" || e.type === "block_abort").map((e) => e.index)
    expect(new Set(closed)).toEqual(new Set(opened))
  })
})

describe("chunk boundaries", () => {
  const fixtures = SCHEMES.flatMap((scheme) => listTranscripts(scheme).map((name) => ({ scheme, name })))

  it("any split of any fixture into writes gives the same events", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...fixtures),
        fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 30 }),
        async ({ scheme, name }, fractions) => {
          const transcript = loadTranscript(scheme, name)
          const length = Buffer.byteLength(transcript)
          const run = async (splitAt: ReadonlyArray<number>) => {
            server = await startReplayProvider({ scheme, script: [{ kind: "stream", transcript, splitAt }] })
            const client = createLlmClient({ provider: PROVIDER_FOR[scheme], model: "m", apiKey: "k", baseUrl: server.baseUrl, retry: { maxRetries: 0 } })
            const result = await collect(client.stream(request("m")))
            await server.close()
            server = undefined
            return { events: withStableIds(result.events), error: result.error?._tag }
          }
          expect(await run(fractions.map((f) => Math.floor(f * length)))).toEqual(await run([]))
        }
      ),
      { numRuns: 40 }
    )
  })
})

describe("tool-call fixtures carry complete arguments on every format", () => {
  it.each(SCHEMES.filter((scheme) => listTranscripts(scheme).includes("parallel-tool-calls")))("%s", async (scheme) => {
    server = await startReplayProvider({ scheme, script: [{ kind: "stream", transcript: loadTranscript(scheme, "parallel-tool-calls") }] })
    const client = createLlmClient({ provider: PROVIDER_FOR[scheme], model: "m", apiKey: "k", baseUrl: server.baseUrl })
    const { events, error } = await collect(client.stream(request("m")))
    expect(error).toBeUndefined()
    const calls = toolCalls(events)
    expect(calls.length).toBeGreaterThanOrEqual(2)
    expect(new Set(calls.map((call) => call.id)).size).toBe(calls.length)
    for (const call of calls) {
      expect(call.stopped).toBe(true)
      expect(Object.keys(JSON.parse(call.json) as object).length).toBeGreaterThan(0)
    }
  })
})

describe("createLlmClient", () => {
  it("exposes scheme, provider, model and the scheme's encoding and validation", () => {
    const client = createLlmClient({ provider: "anthropic", model: "claude-sonnet-4-5", apiKey: "k" })
    expect([client.scheme, client.provider, client.model]).toEqual(["anthropic", "anthropic", "claude-sonnet-4-5"])
    const req = request("claude-sonnet-4-5")
    expect(client.encodeRequest(req)).toBe(providers.get("anthropic")!.scheme.encodeRequest(req))
    expect(client.validate({ ...req, config: { topK: 5 } })).toEqual(providers.get("anthropic")!.scheme.validate({ ...req, config: { topK: 5 } }))
  })

  it("rejects an unknown provider and an empty model at creation", () => {
    expect(() => createLlmClient({ provider: "nope", model: "m" })).toThrow(expect.objectContaining({ _tag: "LlmConfigError" }))
    expect(() => createLlmClient({ provider: "ollama", model: "  " })).toThrow(expect.objectContaining({ _tag: "LlmConfigError" }))
  })

  it("rejects an invalid base URL at creation", () => {
    expect(() => createLlmClient({ provider: "ollama", model: "m", baseUrl: "not a url" })).toThrow(expect.objectContaining({ _tag: "LlmConfigError" }))
  })
})
