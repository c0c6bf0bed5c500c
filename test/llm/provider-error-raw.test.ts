import fc from "fast-check"
import { afterEach, describe, expect, it } from "vitest"
import { z } from "zod"
import { complete, createLlmClient, defineTool, type Event, type JsonValue, type LlmProviderError, RAW_ERROR_BOUNDS, Worker } from "../../src/index.ts"
import type { SchemeName } from "../../src/llm/scheme.ts"
import { type ReplayProvider, sseText, startReplayProvider } from "../../src/testing/index.ts"
import { loadTranscript } from "../support/sse-fixtures.ts"

/**
 * A provider's error object reaches the caller whole, within bounds: Groq's `tool_use_failed` carries the tool
 * call it refused (`failed_generation`), its `type` and `status_code`, none of which `code` and `message` hold.
 */

const PROVIDER_FOR: Readonly<Record<SchemeName, string>> = {
  "openai-chat": "openai",
  "openai-responses": "openai-responses",
  anthropic: "anthropic",
  gemini: "gemini"
}

const servers: Array<ReplayProvider> = []
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()))
})

const clientFor = async (scheme: SchemeName, transcript: string, model = "llama-3.3-70b-versatile") => {
  const server = await startReplayProvider({ scheme, script: [{ kind: "stream", transcript }] })
  servers.push(server)
  return createLlmClient({ provider: PROVIDER_FOR[scheme], model, apiKey: "test-key", baseUrl: server.baseUrl, retry: { maxRetries: 0 } })
}

const rejection = async (promise: Promise<unknown>): Promise<LlmProviderError> => {
  const thrown = await promise.then(
    () => undefined,
    (error: unknown) => error
  )
  expect(thrown).toMatchObject({ _tag: "LlmProviderError" })
  return thrown as LlmProviderError
}

/** A string as the bounded copy keeps it: cut at `max`, never ending on half a surrogate pair. */
const cut = (value: string, max: number): string => {
  if (value.length <= max) return value
  const kept = value.slice(0, max)
  return /[\ud800-\udbff]$/.test(kept) ? kept.slice(0, -1) : kept
}

const groqWire = () => {
  const line = loadTranscript("openai-chat", "groq-tool-use-failed")
    .split("\n")
    .find((l) => l.startsWith('data: {"error"'))
  return (JSON.parse((line as string).slice("data: ".length)) as { error: Record<string, unknown> }).error
}

describe("the provider's error object on LlmProviderError.raw", () => {
  it("Groq tool_use_failed keeps failed_generation, type and status_code (complete)", async () => {
    const client = await clientFor("openai-chat", loadTranscript("openai-chat", "groq-tool-use-failed"))
    const error = await rejection(complete(client, { input: "Weather in Paris?" }))
    expect(error.code).toBe("tool_use_failed")
    expect(error.raw).toEqual(groqWire())
    expect(error.raw?.["failed_generation"]).toBe('<function=get_weather>{"location": "Paris", "unit": "celsius"}</function>')
    expect(error.raw?.["type"]).toBe("invalid_request_error")
    expect(error.raw?.["status_code"]).toBe(400)
    expect(Object.isFrozen(error.raw)).toBe(true)
  })

  it("the stream's error event carries the same object", async () => {
    const client = await clientFor("openai-chat", loadTranscript("openai-chat", "groq-tool-use-failed"))
    const events: Array<Event> = []
    await rejection(
      (async () => {
        for await (const event of client.stream({ model: client.model, items: [{ type: "message", role: "user", content: [{ type: "input_text", text: "hi" }] }], tools: [], config: {} })) {
          events.push(event)
        }
      })()
    )
    expect(events.find((event) => event.type === "error")).toEqual({ type: "error", code: "tool_use_failed", message: expect.stringContaining("failed_generation"), raw: groqWire() })
  })

  it("a Worker run that Groq refuses fails with the refused call readable on the error", async () => {
    const client = await clientFor("openai-chat", loadTranscript("openai-chat", "groq-tool-use-failed"))
    const weather = defineTool({ name: "get_weather", description: "Weather of a city", parameters: z.object({ location: z.string() }), execute: () => "sunny" })
    const worker = Worker.create({ client })
    worker.registerTool(weather)
    const thrown = await worker.run("Weather in Paris?").then(
      () => undefined,
      (error: unknown) => error
    )
    expect(thrown).toMatchObject({ _tag: "ClientFailed", error: { _tag: "LlmProviderError", code: "tool_use_failed", raw: { failed_generation: expect.stringContaining("get_weather") } } })
  })

  it.each([
    ["openai-responses", "error-nested", { type: "insufficient_quota", param: null }],
    ["anthropic", "error-mid-stream", { type: "overloaded_error" }]
  ] as const)("%s %s: the provider's own error fields are on raw", async (scheme, name, expected) => {
    const client = await clientFor(scheme, loadTranscript(scheme, name), "some-model")
    const error = await rejection(complete(client, { input: "hi" }))
    expect(error.raw).toMatchObject(expected)
  })

  it("a hostile error object is copied within RAW_ERROR_BOUNDS, and the call still fails as the provider's error", async () => {
    const wideText = fc.tuple(fc.string({ minLength: 1, maxLength: 40 }), fc.integer({ min: 1, max: 3000 })).map(([s, times]) => s.repeat(times))
    const hostile = fc.record({
      message: fc.string({ maxLength: 50 }),
      code: fc.constant("tool_use_failed"),
      failed_generation: wideText,
      extra: fc.letrec<{ node: JsonValue }>((tie) => ({
        node: fc.oneof({ depthSize: "small" }, fc.string({ maxLength: 20 }), fc.integer(), fc.array(tie("node"), { maxLength: 30 }), fc.dictionary(fc.string({ maxLength: 8 }), tie("node"), { maxKeys: 30 }))
      })).node
    })
    await fc.assert(
      fc.asyncProperty(hostile, fc.integer({ min: 0, max: 12 }), fc.integer({ min: 0, max: 200 }), async (error, depth, fields) => {
        let nested: JsonValue = "bottom"
        for (let i = 0; i < depth; i++) nested = { down: nested }
        const wide: Record<string, string> = {}
        for (let i = 0; i < fields; i++) wide[`f${i}`] = "w".repeat(2000)
        const wire = { ...error, nested, wide }
        const client = await clientFor("openai-chat", sseText([{ data: JSON.stringify({ error: wire }) }]))
        const thrown = await rejection(complete(client, { input: "hi" }))
        expect(thrown.code).toBe("tool_use_failed")
        const raw = thrown.raw as JsonValue
        let values = 0
        let chars = 0
        const walk = (value: JsonValue, level: number): void => {
          values++
          if (typeof value === "string") {
            chars += value.length
            expect(value.length).toBeLessThanOrEqual(RAW_ERROR_BOUNDS.maxStringChars)
          }
          if (typeof value !== "object" || value === null) return
          expect(level).toBeLessThanOrEqual(RAW_ERROR_BOUNDS.maxDepth)
          expect(Object.isFrozen(value)).toBe(true)
          const entries = Array.isArray(value) ? value.map((v, i) => [String(i), v] as const) : Object.entries(value)
          expect(entries.length).toBeLessThanOrEqual(RAW_ERROR_BOUNDS.maxEntries)
          for (const [key, child] of entries) {
            if (!Array.isArray(value)) chars += key.length
            walk(child, level + 1)
          }
        }
        walk(raw, 0)
        expect(values).toBeLessThanOrEqual(RAW_ERROR_BOUNDS.maxValues)
        expect(chars).toBeLessThanOrEqual(RAW_ERROR_BOUNDS.maxTotalChars)
        // What fits is kept as sent.
        expect((raw as Record<string, JsonValue>)["code"]).toBe("tool_use_failed")
        expect((raw as Record<string, JsonValue>)["failed_generation"]).toBe(cut(error.failed_generation, RAW_ERROR_BOUNDS.maxStringChars))
      }),
      { numRuns: 25 }
    )
  })
})
