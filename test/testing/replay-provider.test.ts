import { afterEach, describe, expect, it } from "vitest"
import { type ReplayProvider, sseText, startReplayProvider } from "../../src/testing/index.ts"

const servers: Array<ReplayProvider> = []
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()))
})

const start = async (...args: Parameters<typeof startReplayProvider>) => {
  const server = await startReplayProvider(...args)
  servers.push(server)
  return server
}

const post = (url: string, body = "{}") => fetch(url, { method: "POST", headers: { "content-type": "application/json", "x-test": "1" }, body })

const TEXT = sseText([{ event: "message_start", data: `{"type":"message_start"}` }, { data: `{"n":2}` }, { data: `{"n":3}` }])

describe("startReplayProvider (public testing utility)", () => {
  it("serves each scheme's streaming endpoint under baseUrl and 404s anything else", async () => {
    const anthropic = await start({ scheme: "anthropic", script: [{ kind: "stream", transcript: TEXT }] })
    const response = await post(`${anthropic.baseUrl}/v1/messages`)
    expect(response.status).toBe(200)
    expect(response.headers.get("content-type")).toBe("text/event-stream")
    expect(await response.text()).toBe(`event: message_start\ndata: {"type":"message_start"}\n\ndata: {"n":2}\n\ndata: {"n":3}\n\n`)
    expect((await post(`${anthropic.baseUrl}/v1/chat/completions`)).status).toBe(404)

    const gemini = await start({ scheme: "gemini", script: [{ kind: "stream", transcript: TEXT }] })
    expect((await post(`${gemini.baseUrl}/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse`)).status).toBe(200)
    expect((await post(`${gemini.baseUrl}/v1beta/models/gemini-2.5-flash:streamGenerateContent`)).status).toBe(404)

    const chat = await start({ scheme: "openai-chat", script: [{ kind: "stream", transcript: TEXT }] })
    expect(chat.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/)
    expect((await post(`${chat.baseUrl}/chat/completions`)).status).toBe(200)
  })

  it("follows the script in order, repeats its last step, and records every request", async () => {
    const server = await start({
      scheme: "openai-responses",
      script: [
        { kind: "status", status: 429, headers: { "retry-after": "7" }, body: `{"error":{"message":"slow down"}}` },
        { kind: "stream", transcript: TEXT }
      ]
    })
    const first = await post(`${server.baseUrl}/responses`, `{"a":1}`)
    expect([first.status, first.headers.get("retry-after"), await first.text()]).toEqual([429, "7", `{"error":{"message":"slow down"}}`])
    for (let n = 0; n < 2; n++) expect(await (await post(`${server.baseUrl}/responses`, `{"n":${n}}`)).text()).toBe(TEXT)
    expect(server.requests.map((r) => [r.method, r.path, r.body, r.headers["x-test"]])).toEqual([
      ["POST", "/v1/responses", `{"a":1}`, "1"],
      ["POST", "/v1/responses", `{"n":0}`, "1"],
      ["POST", "/v1/responses", `{"n":1}`, "1"]
    ])
  })

  it("stalls after N events, truncates or resets mid-body, and never answers a no_headers step", async () => {
    const server = await start({
      scheme: "openai-chat",
      script: [
        { kind: "stream", transcript: TEXT, stallAfterEvents: 1 },
        { kind: "stream", transcript: TEXT, truncateAtByte: 10 },
        { kind: "stream", transcript: TEXT, truncateAtByte: 10, truncateBy: "reset" },
        { kind: "reset" },
        { kind: "no_headers" }
      ]
    })
    const url = `${server.baseUrl}/chat/completions`
    const stalled = await post(url)
    const reader = stalled.body!.getReader()
    const firstChunk = new TextDecoder().decode((await reader.read()).value)
    expect(firstChunk).toBe(`event: message_start\ndata: {"type":"message_start"}\n\n`)
    const more = await Promise.race([reader.read().then(() => "more"), new Promise((resolve) => setTimeout(() => resolve("silent"), 150))])
    expect(more).toBe("silent")
    await reader.cancel()
    await server.requests[0]?.disconnected

    expect(await (await post(url)).text()).toBe(TEXT.slice(0, 10))
    await expect(post(url).then((response) => response.text())).rejects.toThrow()
    await expect(post(url)).rejects.toThrow()
    const controller = new AbortController()
    const pending = fetch(url, { method: "POST", body: "{}", signal: controller.signal })
    const outcome = await Promise.race([pending.then(() => "answered"), new Promise((resolve) => setTimeout(() => resolve("waiting"), 150))])
    expect(outcome).toBe("waiting")
    controller.abort()
    await expect(pending).rejects.toThrow()
  })

  it("delivers a transcript split at the given byte offsets, byte-identical once joined", async () => {
    const transcript = sseText([{ data: `{"text":"héllo wörld ✓"}` }, { data: "[DONE]" }])
    const server = await start({ scheme: "openai-chat", script: [{ kind: "stream", transcript, splitAt: [1, 17, 18, 19, 40], gapMs: 5 }] })
    expect(await (await post(`${server.baseUrl}/chat/completions`)).text()).toBe(transcript)
  })

  it("refuses an empty script", async () => {
    await expect(startReplayProvider({ scheme: "anthropic", script: [] })).rejects.toThrow(/at least one step/)
  })
})

describe("startReplayProvider: pauses", () => {
  it("gapMs without splitAt sends each SSE event as a write of its own, after the pause", async () => {
    const transcript = sseText([{ data: "1" }, { data: "2" }, { data: "3" }])
    const server = await start({ scheme: "openai-chat", script: [{ kind: "stream", transcript, gapMs: 60 }] })
    const reader = (await post(`${server.baseUrl}/chat/completions`)).body!.getReader()
    const reads: Array<string> = []
    for (let read = await reader.read(); !read.done; read = await reader.read()) reads.push(new TextDecoder().decode(read.value))
    expect(reads).toEqual(["data: 1\n\n", "data: 2\n\n", "data: 3\n\n"])
  })

  it("close() ends a reply that is pausing, and the recorded request sees the disconnect", async () => {
    const server = await startReplayProvider({ scheme: "openai-chat", script: [{ kind: "sse", frames: [{ text: "data: 1\n\n", delayMs: 0 }, { text: "data: 2\n\n", delayMs: 60_000 }], close: "end" }] })
    const reader = (await post(`${server.baseUrl}/chat/completions`)).body!.getReader()
    expect(new TextDecoder().decode((await reader.read()).value)).toBe("data: 1\n\n")
    await server.close()
    await server.requests[0]?.disconnected
    await expect(reader.read()).rejects.toThrow()
  })
})
