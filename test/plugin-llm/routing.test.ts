import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { startReplayProvider } from "../../src/testing/index.ts"
import { answering, endpoint, rejection, replay, runtimeOn, SECRET } from "./support.ts"

const messages = [{ role: "user" as const, content: "ping" }]
const PNG = Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52])
const JPEG = Uint8Array.from([0xff, 0xd8, 0xff, 0xe0, 0, 16, 0x4a, 0x46, 0x49, 0x46])

describe("fallback on 429 / 5xx / connection failure", () => {
  it("a 503 moves to the next route, and the hop is recorded", async () => {
    const active = await replay("openai-chat", [{ kind: "status", status: 503, body: '{"error":{"message":"overloaded"}}' }])
    const backup = await answering("anthropic", "from backup")
    const { runtime, audit } = runtimeOn(active, { config: { llm: { providers: { backup: endpoint(backup, "anthropic") }, fallback: [{ provider: "backup", model: "claude-haiku-4-5" }] } } })
    const result = await runtime.llm.forPlugin("p").complete({ messages })
    expect(result).toMatchObject({ text: "from backup", provider: "backup", requestedModel: "claude-haiku-4-5" })
    expect(result.audit.hops).toEqual([{ provider: "openai", model: "gpt-4.1-mini", reason: "http_503", message: "HTTP 503" }])
    expect(audit[0]?.hops).toHaveLength(1)
  })

  it("a refused connection is a hop; the chain goes on", async () => {
    const gone = await startReplayProvider({ scheme: "openai-chat", script: [{ kind: "reset" }] })
    await gone.close()
    const backup = await answering("gemini", "from gemini")
    const { runtime } = runtimeOn(gone, { config: { llm: { providers: { g: endpoint(backup, "gemini") }, fallback: [{ provider: "g", model: "gemini-2.5-flash" }] } } })
    const result = await runtime.llm.forPlugin("p").complete({ messages })
    expect(result.text).toBe("from gemini")
    expect(result.audit.hops.map((h) => h.reason)).toEqual(["network"])
  })

  it("429 on every route is PluginLlmRateLimited with all the hops", async () => {
    const a = await replay("openai-chat", [{ kind: "status", status: 429, headers: { "retry-after": "0" } }])
    const b = await replay("openai-chat", [{ kind: "status", status: 429, headers: { "retry-after": "0" } }])
    const { runtime } = runtimeOn(a, { config: { llm: { providers: { b: endpoint(b) }, fallback: [{ provider: "b", model: "m" }] } } })
    const error = await rejection(runtime.llm.forPlugin("p").complete({ messages }))
    expect(error).toMatchObject({ _tag: "PluginLlmRateLimited" })
    expect((error["hops"] as Array<{ reason: string }>).map((h) => h.reason)).toEqual(["http_429", "http_429"])
  })

  it("a 400 is not retried elsewhere: PluginLlmProviderUnavailable at once, no body or URL in the message", async () => {
    const a = await replay("openai-chat", [{ kind: "status", status: 400, body: `{"error":"bad key ${SECRET}"}` }])
    const b = await answering("openai-chat", "never")
    const { runtime } = runtimeOn(a, { config: { llm: { providers: { b: endpoint(b) }, fallback: [{ provider: "b", model: "m" }] } } })
    const error = await rejection(runtime.llm.forPlugin("p").complete({ messages }))
    expect(error).toMatchObject({ _tag: "PluginLlmProviderUnavailable", message: "openai/gpt-4.1-mini refused the request: HTTP 400" })
    expect(JSON.stringify(error)).not.toContain(SECRET)
    expect(JSON.stringify(error)).not.toContain("127.0.0.1")
    expect(b.requests).toHaveLength(0)
  })

  it("a fallback route without a credential is a hop, not a crash", async () => {
    const a = await replay("openai-chat", [{ kind: "status", status: 500 }])
    const { runtime } = runtimeOn(a, { config: { llm: { fallback: [{ provider: "anthropic", model: "claude-haiku-4-5" }] } } })
    const error = await rejection(runtime.llm.forPlugin("p").complete({ messages }))
    expect(error).toMatchObject({ _tag: "PluginLlmProviderUnavailable" })
    expect((error["hops"] as Array<{ reason: string }>).map((h) => h.reason)).toEqual(["http_500", "config"])
  })
})

describe("credentials from an auth file", () => {
  it("api_key_file is read relative to the config folder and sent, never shown", async () => {
    const dir = mkdtempSync(join(tmpdir(), "llm-worker-keys-"))
    writeFileSync(join(dir, "backup.key"), `${SECRET}-file\n`)
    const active = await replay("openai-chat", [{ kind: "status", status: 502 }])
    const backup = await answering("openai-chat", "from file key")
    const { runtime } = runtimeOn(active, {
      configDir: dir,
      config: { llm: { providers: { backup: { type: "openai", base_url: backup.baseUrl, api_key_file: "backup.key" } }, fallback: [{ provider: "backup", model: "m" }] } }
    })
    const result = await runtime.llm.forPlugin("p").complete({ messages })
    expect(backup.requests[0]?.headers.authorization).toBe(`Bearer ${SECRET}-file`)
    expect(JSON.stringify(result)).not.toContain(SECRET)
    rmSync(dir, { recursive: true, force: true })
  })
})

describe("images and vision routing", () => {
  const instructions = "Describe the picture."

  it("images on a text-only active model go to the configured vision model", async () => {
    const active = await answering("openai-chat", "text model")
    const vision = await answering("anthropic", '{"caption":"a cat"}')
    const { runtime } = runtimeOn(active, {
      model: "deepseek-chat",
      config: { llm: { providers: { eyes: endpoint(vision, "anthropic") }, vision: { provider: "eyes", model: "claude-sonnet-4-5" } } }
    })
    const result = await runtime.llm.forPlugin("p").completeStructured({ instructions, input: [{ type: "image", data: PNG }], jsonMode: true })
    expect(result).toMatchObject({ provider: "eyes", requestedModel: "claude-sonnet-4-5", contentType: "json", parsed: { caption: "a cat" } })
    expect(result.audit.visionRouted).toBe(true)
    expect(active.requests).toHaveLength(0)
    const body = JSON.parse(vision.requests[0]?.body ?? "{}") as { messages: Array<{ content: Array<Record<string, unknown>> }> }
    expect(body.messages[0]?.content[0]).toEqual({ type: "image", source: { type: "base64", media_type: "image/png", data: Buffer.from(PNG).toString("base64") } })
  })

  it("without a vision model, images on a text-only model fail before any call", async () => {
    const active = await answering("openai-chat", "x")
    const { runtime } = runtimeOn(active, { model: "gpt-3.5-turbo" })
    const error = await rejection(runtime.llm.forPlugin("p").completeStructured({ instructions, input: [{ type: "image", data: PNG }] }))
    expect(error).toMatchObject({ _tag: "PluginLlmInputError", field: "input" })
    expect(error.message).toContain("llm.vision")
    expect(active.requests).toHaveLength(0)
  })

  it("a model that takes images keeps them; the mime type is sniffed, not trusted", async () => {
    const active = await answering("openai-chat", "a photo")
    const { runtime } = runtimeOn(active)
    await runtime.llm.forPlugin("p").completeStructured({ instructions, input: [{ type: "text", text: "look" }, { type: "image", data: JPEG, mimeType: "image/png" }] })
    expect(active.requests[0]?.body).toContain(`"url":"data:image/jpeg;base64,${Buffer.from(JPEG).toString("base64")}"`)
  })

  it("an https URL goes to the provider as a URL; other schemes and bad blocks are input errors", async () => {
    const active = await answering("openai-responses", "ok")
    const { runtime } = runtimeOn(active, { scheme: "openai-responses" })
    const llm = runtime.llm.forPlugin("p")
    await llm.completeStructured({ instructions, input: [{ type: "image", url: "https://example.com/cat.png" }] })
    expect(active.requests[0]?.body).toContain('{"type":"input_image","image_url":"https://example.com/cat.png","detail":"auto"}')
    const bad: ReadonlyArray<[unknown, string, string]> = [
      [[{ type: "image", url: "http://example.com/a.png" }], "input[0].url", "must be https"],
      [[{ type: "image", url: "file:///etc/passwd" }], "input[0].url", "must be https"],
      [[{ type: "image", url: "https://user:pw@example.com/a.png" }], "input[0].url", "credentials"],
      [[{ type: "image", data: new Uint8Array() }], "input[0].data", "image data is empty"],
      [[{ type: "image", data: "" }], "input[0].data", "image data is empty"],
      [[{ type: "image", data: "not base64!" }], "input[0].data", "not valid base64"],
      [[{ type: "image", data: Uint8Array.from([1, 2, 3, 4]) }], "input[0].data", "not PNG, JPEG, GIF or WebP"],
      [[{ type: "image" }], "input[0]", "neither data nor url"],
      [[{ type: "audio", data: "x" }], "input[0].type", 'unknown block type "audio"'],
      [[{ type: "text", text: "  " }], "input[0].text", "text block is empty"],
      [[], "input", "input has no blocks"],
      ["text", "input", "must be a list of blocks"]
    ]
    for (const [input, field, message] of bad) {
      const error = await rejection(llm.completeStructured({ instructions, input: input as never }))
      expect(error, JSON.stringify(input)).toMatchObject({ _tag: "PluginLlmInputError", field })
      expect(error.message).toContain(message)
    }
    expect(await rejection(llm.completeStructured({ instructions: " ", input: [{ type: "text", text: "x" }] }))).toMatchObject({ field: "instructions" })
    expect(active.requests).toHaveLength(1)
  })

  it("images over llm.max_image_bytes are refused before decoding", async () => {
    const active = await answering("openai-chat", "x")
    const { runtime } = runtimeOn(active, { config: { llm: { max_image_bytes: 16 } } })
    const big = new Uint8Array(64)
    big.set(PNG)
    const llm = runtime.llm.forPlugin("p")
    expect((await rejection(llm.completeStructured({ instructions, input: [{ type: "image", data: big }] }))).message).toContain("over the 16-byte limit")
    expect((await rejection(llm.completeStructured({ instructions, input: [{ type: "image", data: Buffer.from(big).toString("base64") }] }))).message).toContain("over the 16-byte limit")
  })
})
