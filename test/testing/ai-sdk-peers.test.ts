import { createAnthropic } from "@ai-sdk/anthropic"
import { createOpenAI } from "@ai-sdk/openai"
import { generateText, jsonSchema, streamText, tool } from "ai"
import type { LanguageModel } from "ai"
import { afterEach, describe, expect, it } from "vitest"
import type { SchemeName } from "../../src/index.ts"
import { reply, startReplayProvider } from "../../src/testing/index.ts"
import type { ReplayProvider, ScriptStep } from "../../src/testing/index.ts"

/**
 * The replay provider is a stand-in for the providers' HTTP APIs, so other SDKs' own clients must accept what it
 * sends: the Vercel AI SDK's providers, with their own response schemas, calling non-streamed (`generateText`)
 * and streamed (`streamText`).
 */

// The AI SDK warns that "scripted-model" is unknown to it; that is the point of a stand-in.
;(globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false

const started: Array<ReplayProvider> = []
afterEach(async () => {
  await Promise.all(started.splice(0).map((replay) => replay.close()))
})

const PEERS: ReadonlyArray<readonly [SchemeName, (baseURL: string) => LanguageModel]> = [
  ["openai-chat", (baseURL) => createOpenAI({ baseURL, apiKey: "test-key" }).chat("scripted-model")],
  ["openai-responses", (baseURL) => createOpenAI({ baseURL, apiKey: "test-key" }).responses("scripted-model")],
  ["anthropic", (baseURL) => createAnthropic({ baseURL: `${baseURL}/v1`, apiKey: "test-key" })("scripted-model")]
]

const start = async (scheme: SchemeName, script: ReadonlyArray<ScriptStep>) => {
  const replay = await startReplayProvider({ scheme, script })
  started.push(replay)
  return replay
}

const bodyOf = (replay: ReplayProvider, index: number): Record<string, unknown> => JSON.parse(replay.requests[index]!.body) as Record<string, unknown>

const weather = tool({
  description: "The weather in a city",
  inputSchema: jsonSchema<{ city: string }>({ type: "object", properties: { city: { type: "string" } }, required: ["city"], additionalProperties: false })
})

describe("the replay provider answers the AI SDK's own providers", () => {
  it.each(PEERS)("%s: generateText (not streamed) gets the provider's JSON response, usage included", async (scheme, model) => {
    const replay = await start(scheme, [reply().text("Sunny in Paris.").usage({ inputTokens: 21, outputTokens: 5 })])
    const result = await generateText({ model: model(replay.baseUrl), prompt: "Weather in Paris?" })
    expect(bodyOf(replay, 0)["stream"]).not.toBe(true)
    expect(result.text).toBe("Sunny in Paris.")
    expect(result.finishReason).toBe("stop")
    expect(result.usage.inputTokens).toBe(21)
    expect(result.usage.outputTokens).toBe(5)
  })

  it.each(PEERS)("%s: generateText reads a tool call, its arguments and the tool-calls finish reason", async (scheme, model) => {
    const replay = await start(scheme, [reply().toolCall("get_weather", { city: "Oslo" }, { id: "call_1" })])
    const result = await generateText({ model: model(replay.baseUrl), prompt: "Weather in Oslo?", tools: { get_weather: weather } })
    expect(result.toolCalls.map((call) => [call.toolCallId, call.toolName, call.input])).toEqual([["call_1", "get_weather", { city: "Oslo" }]])
    expect(result.finishReason).toBe("tool-calls")
    // Unscripted usage is reported as zero, as every provider reports usage on every reply.
    expect(result.usage.inputTokens).toBe(0)
    expect(result.usage.outputTokens).toBe(0)
  })

  it.each(PEERS)("%s: streamText reads the streamed reply, with usage even when the script names none", async (scheme, model) => {
    const replay = await start(scheme, [reply().text(["Sunny ", "in Paris."])])
    const result = streamText({ model: model(replay.baseUrl), prompt: "Weather in Paris?" })
    const errors: Array<unknown> = []
    for await (const part of result.fullStream) if (part.type === "error") errors.push(part.error)
    expect(errors).toEqual([])
    expect(bodyOf(replay, 0)["stream"]).toBe(true)
    expect(await result.text).toBe("Sunny in Paris.")
    expect(await result.finishReason).toBe("stop")
    expect((await result.usage).outputTokens).toBe(0)
  })

  it("anthropic: generateText reads thinking with its signature and the usage's cache side", async () => {
    const replay = await start("anthropic", [
      reply().reasoning("Paris it is.", { signature: "c2ln" }).text("Sunny.").usage({ inputTokens: 120, outputTokens: 9, cacheReadTokens: 100 })
    ])
    const result = await generateText({ model: PEERS[2]![1](replay.baseUrl), prompt: "Weather?" })
    expect(result.reasoningText).toBe("Paris it is.")
    expect(result.reasoning[0]?.providerMetadata?.["anthropic"]?.["signature"]).toBe("c2ln")
    expect(result.text).toBe("Sunny.")
    expect(result.usage.inputTokens).toBe(120)
    expect(result.usage.inputTokenDetails.cacheReadTokens).toBe(100)
  })

  it.each(PEERS)("%s: an in-stream error becomes the provider's HTTP error for a non-streamed request", async (scheme, model) => {
    const replay = await start(scheme, [reply().text("Let me").error(scheme === "anthropic" ? "overloaded_error" : "server_error", "Overloaded")])
    await expect(generateText({ model: model(replay.baseUrl), prompt: "Hi", maxRetries: 0 })).rejects.toThrow(/Overloaded/)
  })
})

describe("non-streamed answers in each provider's JSON shape", () => {
  const post = (url: string, body: unknown) =>
    fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) }).then(async (response) => ({
      status: response.status,
      type: response.headers.get("content-type"),
      json: (await response.json()) as Record<string, unknown>
    }))

  it("gemini: :generateContent gets a GenerateContentResponse; :streamGenerateContent?alt=sse still streams", async () => {
    const replay = await start("gemini", [
      reply().reasoning("Hm.", { signature: "c2ln" }).text("Sunny.").toolCall("get_weather", { city: "Oslo" }, { id: "c1" }).usage({ inputTokens: 10, outputTokens: 7, reasoningTokens: 2 })
    ])
    const answer = await post(`${replay.baseUrl}/v1beta/models/scripted-model:generateContent`, { contents: [] })
    expect(answer.type).toBe("application/json")
    expect(answer.json).toEqual({
      candidates: [
        {
          content: {
            parts: [{ text: "Hm.", thought: true, thoughtSignature: "c2ln" }, { text: "Sunny." }, { functionCall: { name: "get_weather", id: "c1", args: { city: "Oslo" } } }],
            role: "model"
          },
          finishReason: "STOP",
          index: 0
        }
      ],
      usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 17, thoughtsTokenCount: 2 },
      modelVersion: "scripted-model",
      responseId: "scriptedResponse0"
    })
    const streamed = await fetch(`${replay.baseUrl}/v1beta/models/scripted-model:streamGenerateContent?alt=sse`, { method: "POST", body: "{}" })
    expect(streamed.headers.get("content-type")).toBe("text/event-stream")
    expect(await streamed.text()).toContain('"usageMetadata"')
  })

  it("openai-chat: a request without stream gets a chat.completion with content null beside tool calls", async () => {
    const replay = await start("openai-chat", [reply().toolCall("get_weather", '{"city":"Oslo"}', { id: "call_1" })])
    const answer = await post(`${replay.baseUrl}/chat/completions`, { model: "m", messages: [] })
    expect(answer.json).toEqual({
      id: "chatcmpl-scripted0",
      object: "chat.completion",
      created: 1767225600,
      model: "scripted-model",
      choices: [
        {
          index: 0,
          message: {
            role: "assistant",
            content: null,
            refusal: null,
            tool_calls: [{ id: "call_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Oslo"}' } }],
            annotations: []
          },
          logprobs: null,
          finish_reason: "tool_calls"
        }
      ],
      usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 }
    })
  })

  it("a hang never answers and a stall delays the whole answer; an unsayable script is a 500 naming it", async () => {
    const replay = await start("anthropic", [reply().toolCall("t", "{not json")])
    const answer = await post(`${replay.baseUrl}/v1/messages`, { model: "m", messages: [] })
    expect(answer.status).toBe(500)
    expect(JSON.stringify(answer.json)).toMatch(/JSON object/)
    const hanging = await start("openai-responses", [reply().text("x").hang()])
    const controller = new AbortController()
    const pending = fetch(`${hanging.baseUrl}/responses`, { method: "POST", body: "{}", signal: controller.signal })
    await expect(Promise.race([pending.then(() => "answered"), new Promise((resolve) => setTimeout(() => resolve("silent"), 200))])).resolves.toBe("silent")
    controller.abort()
    await pending.catch(() => undefined)
  })
})
