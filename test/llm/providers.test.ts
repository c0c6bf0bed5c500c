import { afterEach, describe, expect, it } from "vitest"
import { Item } from "../../src/llm/item.ts"
import { createLlmClient } from "../../src/llm/llm-client.ts"
import type { LlmClientOptions } from "../../src/llm/llm-client.ts"
import { providerNames, providers } from "../../src/llm/providers/registry.ts"
import type { Request } from "../../src/llm/request.ts"
import type { SchemeName } from "../../src/llm/scheme.ts"
import { sseText, startReplayProvider } from "../../src/testing/replay-provider.ts"
import type { ReplayProvider } from "../../src/testing/replay-provider.ts"

let server: ReplayProvider | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
})

const request: Request = { model: "m", items: [Item.userText("hi")], tools: [], config: {} }

/** Sends one request and returns what the server received (the answer itself is a 400, never retried). */
const received = async (scheme: SchemeName, options: Omit<LlmClientOptions, "baseUrl">, viaEnv = false) => {
  server = await startReplayProvider({ scheme, script: [{ kind: "status", status: 400, body: "{}" }] })
  const provider = providers.get(options.provider as string)!
  const client = viaEnv
    ? createLlmClient({ ...options, env: { ...options.env, [provider.baseUrlEnv!]: `${server.baseUrl}/` } })
    : createLlmClient({ ...options, baseUrl: server.baseUrl })
  await expect(async () => {
    for await (const _ of client.stream(request)) void _
  }).rejects.toMatchObject({ _tag: "LlmHttpError", status: 400 })
  expect(server.requests).toHaveLength(1)
  return server.requests[0]!
}

describe("authentication and endpoints", () => {
  it("OpenAI Chat: Bearer key, /v1/chat/completions", async () => {
    const r = await received("openai-chat", { provider: "openai", model: "gpt-4o", apiKey: "sk-test" })
    expect(r.path).toBe("/v1/chat/completions")
    expect(r.headers["authorization"]).toBe("Bearer sk-test")
    expect(r.headers["content-type"]).toBe("application/json")
    expect(r.headers["accept"]).toBe("text/event-stream")
  })

  it("OpenAI Responses: Bearer key from OPENAI_API_KEY, /v1/responses", async () => {
    const r = await received("openai-responses", { provider: "openai-responses", model: "gpt-5", env: { OPENAI_API_KEY: "sk-env" } })
    expect(r.path).toBe("/v1/responses")
    expect(r.headers["authorization"]).toBe("Bearer sk-env")
  })

  it("Anthropic: x-api-key and anthropic-version, no bearer, /v1/messages", async () => {
    const r = await received("anthropic", { provider: "anthropic", model: "claude-sonnet-4-5", env: { ANTHROPIC_API_KEY: "ak" } })
    expect(r.path).toBe("/v1/messages")
    expect(r.headers["x-api-key"]).toBe("ak")
    expect(r.headers["anthropic-version"]).toBe("2023-06-01")
    expect(r.headers["authorization"]).toBeUndefined()
  })

  it("Gemini: x-goog-api-key (key never in the URL), model in the path, alt=sse", async () => {
    const r = await received("gemini", { provider: "gemini", model: "gemini-2.5-flash", env: { GEMINI_API_KEY: "gk" } })
    expect(r.path).toBe("/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse")
    expect(r.headers["x-goog-api-key"]).toBe("gk")
    expect(r.path).not.toContain("gk")
  })

  it("Gemini falls back to GOOGLE_API_KEY; GEMINI_API_KEY wins when both are set", async () => {
    expect((await received("gemini", { provider: "gemini", model: "g", env: { GOOGLE_API_KEY: "google" } })).headers["x-goog-api-key"]).toBe("google")
    await server?.close()
    const both = await received("gemini", { provider: "gemini", model: "g", env: { GOOGLE_API_KEY: "google", GEMINI_API_KEY: "gemini" } })
    expect(both.headers["x-goog-api-key"]).toBe("gemini")
  })

  it.each([
    ["openai", "openai-chat", "OPENAI_API_KEY"],
    ["anthropic", "anthropic", "ANTHROPIC_API_KEY"],
    ["gemini", "gemini", "GEMINI_API_KEY"]
  ] as const)("%s honours its base-URL variable", async (provider, scheme, keyVar) => {
    const r = await received(scheme, { provider, model: "m", env: { [keyVar]: "k" } }, true)
    expect(r.method).toBe("POST")
  })

  it("an explicit apiKey wins over the environment", async () => {
    const r = await received("openai-chat", { provider: "openai", model: "m", apiKey: "explicit", env: { OPENAI_API_KEY: "env" } })
    expect(r.headers["authorization"]).toBe("Bearer explicit")
  })

  it("local presets send no auth header without a key, and a Bearer key when given one", async () => {
    const bare = await received("openai-chat", { provider: "ollama", model: "qwen3", env: {} })
    expect(bare.headers["authorization"]).toBeUndefined()
    expect(bare.path).toBe("/v1/chat/completions")
    await server?.close()
    const keyed = await received("openai-chat", { provider: "vllm", model: "m", env: { VLLM_API_KEY: "v" } })
    expect(keyed.headers["authorization"]).toBe("Bearer v")
  })

  it("extra headers are sent, but cannot replace authentication", async () => {
    const r = await received("openai-chat", {
      provider: "openrouter",
      model: "m",
      apiKey: "or",
      headers: { "HTTP-Referer": "https://example.org", authorization: "Bearer stolen" }
    })
    expect(r.headers["http-referer"]).toBe("https://example.org")
    expect(r.headers["authorization"]).toBe("Bearer or")
  })
})

describe("configuration errors at creation", () => {
  it.each(providerNames.filter((name) => providers.get(name)!.requiresApiKey))("%s without a key", (name) => {
    expect(() => createLlmClient({ provider: name, model: "m", env: {} })).toThrow(
      expect.objectContaining({ _tag: "LlmConfigError", message: expect.stringContaining(providers.get(name)!.apiKeyEnv[0]!) })
    )
  })

  it("a blank key counts as missing", () => {
    expect(() => createLlmClient({ provider: "openai", model: "m", env: { OPENAI_API_KEY: "  " } })).toThrow(
      expect.objectContaining({ _tag: "LlmConfigError" })
    )
  })

  it.each(["ollama", "llama.cpp", "vllm"])("%s needs no key", (name) => {
    expect(createLlmClient({ provider: name, model: "m", env: {} }).provider).toBe(name)
  })
})

describe("presets", () => {
  it("point at their documented default endpoints", () => {
    const defaults = Object.fromEntries(providerNames.map((name) => [name, providers.get(name)!.endpoint(providers.get(name)!.defaultBaseUrl, "m")]))
    expect(defaults).toEqual({
      openai: "https://api.openai.com/v1/chat/completions",
      "openai-responses": "https://api.openai.com/v1/responses",
      anthropic: "https://api.anthropic.com/v1/messages",
      gemini: "https://generativelanguage.googleapis.com/v1beta/models/m:streamGenerateContent?alt=sse",
      ollama: "http://localhost:11434/v1/chat/completions",
      "llama.cpp": "http://localhost:8080/v1/chat/completions",
      vllm: "http://localhost:8000/v1/chat/completions",
      openrouter: "https://openrouter.ai/api/v1/chat/completions",
      glm: "https://open.bigmodel.cn/api/paas/v4/chat/completions",
      qwen: "https://dashscope.aliyuncs.com/compatible-mode/v1/chat/completions",
      stepfun: "https://api.stepfun.com/v1/chat/completions"
    })
  })

  it("compatible servers get the max_tokens field every one of them reads", () => {
    const body = createLlmClient({ provider: "ollama", model: "m" }).encodeRequest({ ...request, config: { maxTokens: 64 } })
    expect(JSON.parse(body)).toMatchObject({ max_tokens: 64 })
    const openai = createLlmClient({ provider: "openai", model: "m", apiKey: "k" }).encodeRequest({ ...request, config: { maxTokens: 64 } })
    expect(JSON.parse(openai)).toMatchObject({ max_completion_tokens: 64 })
  })

  it("an Ollama server answers through the Chat scheme", async () => {
    const chunk = (delta: string, finish = "null") =>
      `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"qwen3","system_fingerprint":"fp_ollama","choices":[{"index":0,"delta":${delta},"finish_reason":${finish}}]}`
    server = await startReplayProvider({
      scheme: "openai-chat",
      script: [{ kind: "stream", transcript: sseText([{ data: chunk(`{"role":"assistant","content":"Hi"}`) }, { data: chunk(`{"role":"assistant","content":""}`, `"stop"`) }, { data: "[DONE]" }]) }]
    })
    const client = createLlmClient({ provider: "ollama", model: "qwen3", baseUrl: server.baseUrl })
    const texts: Array<string> = []
    for await (const event of client.stream(request)) if (event.type === "block_delta" && event.delta.kind === "text") texts.push(event.delta.text)
    expect(texts.join("")).toBe("Hi")
  })
})

describe("extra headers", () => {
  it("never send a user's Authorization beside the provider's: auth wins, whatever the case", async () => {
    const { startReplayProvider, sseText } = await import("../../src/testing/replay-provider.ts")
    const { createLlmClient } = await import("../../src/llm/llm-client.ts")
    const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({
      data: JSON.stringify({ id: "c1", object: "chat.completion.chunk", choices: [{ index: 0, delta, finish_reason: finish }] })
    })
    const server = await startReplayProvider({
      scheme: "openai-chat",
      script: [{ kind: "stream", transcript: sseText([chunk({ content: "hi" }), chunk({}, "stop"), { data: "[DONE]" }]) }]
    })
    try {
      const client = createLlmClient({
        provider: "openai",
        model: "gpt-4.1-mini",
        apiKey: "sk-real",
        baseUrl: server.baseUrl,
        headers: { Authorization: "Bearer user-supplied", "Content-Type": "text/plain", "X-Trace": "t1" }
      })
      for await (const _ of client.stream({ model: "gpt-4.1-mini", items: [], tools: [], config: {} })) void _
      const headers = server.requests[0]?.headers ?? {}
      expect(headers["authorization"]).toBe("Bearer sk-real")
      expect(headers["content-type"]).toBe("application/json")
      expect(headers["x-trace"]).toBe("t1")
    } finally {
      await server.close()
    }
  })
})
