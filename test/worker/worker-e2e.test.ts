import { afterEach, describe, expect, it } from "vitest"
import type { LlmClient } from "../../src/llm/client.ts"
import { createLlmClient } from "../../src/llm/llm-client.ts"
import type { SchemeName } from "../../src/llm/scheme.ts"
import { ToolMeta } from "../../src/tool/tool-meta.ts"
import { commonPrefixLength } from "../../src/worker/cache-lock.ts"
import { Worker } from "../../src/worker/worker.ts"
import { Cancelled } from "../../src/worker/worker-error.ts"
import { type ReplayProvider, startReplayProvider } from "../../src/testing/replay-provider.ts"
import { loadTranscript } from "../support/sse-fixtures.ts"

/** Real client + real HTTP fake server per scheme: parser → timeline → worker, no in-process shortcut. */
const SCHEMES: ReadonlyArray<{ readonly scheme: SchemeName; readonly provider: string }> = [
  { scheme: "openai-chat", provider: "openai" },
  { scheme: "openai-responses", provider: "openai-responses" },
  { scheme: "anthropic", provider: "anthropic" },
  { scheme: "gemini", provider: "gemini" }
]

const servers: Array<ReplayProvider> = []
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()))
})

const start = async (scheme: SchemeName, provider: string, script: Parameters<typeof startReplayProvider>[0]["script"]) => {
  const server = await startReplayProvider({ scheme, script })
  servers.push(server)
  const client: LlmClient = createLlmClient({
    provider,
    model: "test-model",
    apiKey: "test-key",
    baseUrl: server.baseUrl,
    retry: { maxRetries: 0 }
  })
  return { server, client }
}

const recordingTool = (name: string, log: Array<string>) => () =>
  [
    ToolMeta.make(name).description(`the ${name} tool`).inputSchema({
      type: "object",
      properties: { location: { type: "string" }, path: { type: "string" } },
      additionalProperties: false
    }),
    {
      execute: async (args: string) => {
        log.push(`${name}:${args}`)
        return `${name} result`
      }
    }
  ] as const

for (const { scheme, provider } of SCHEMES) {
  describe(`worker over ${scheme}`, () => {
    it("runs the tool calls of a genuine parallel-tool-call stream and sends every result back paired", async () => {
      const { server, client } = await start(scheme, provider, [
        { kind: "stream", transcript: loadTranscript(scheme, "parallel-tool-calls") },
        { kind: "stream", transcript: loadTranscript(scheme, "text") }
      ])
      const log: Array<string> = []
      const worker = Worker.create({ client, systemPrompt: "You are terse." })
      worker.registerTools([recordingTool("get_weather", log), recordingTool("files_read", log)])
      const result = await worker.run("What is the weather in Paris and Tokyo?")
      expect(result.status).toBe("finished")
      const calls = result.items.filter((i) => i.type === "function_call")
      const outputs = result.items.filter((i) => i.type === "function_call_output")
      expect(calls.length).toBeGreaterThanOrEqual(2)
      expect(log).toHaveLength(calls.length)
      expect(outputs.map((o) => o.callId)).toEqual(calls.map((c) => c.callId))
      expect(new Set(calls.map((c) => c.callId)).size).toBe(calls.length)
      expect(server.requests).toHaveLength(2)
      const second = server.requests[1]?.body ?? ""
      // Gemini pairs calls and responses by name and order; the other wire formats carry the call id.
      for (const call of calls) expect(second).toContain(scheme === "gemini" ? call.name : call.callId)
      expect(second.split("result").length - 1).toBeGreaterThanOrEqual(calls.length)
    })

    it("keeps 100% of the locked prefix bytes unchanged over a 20-turn locked conversation", async () => {
      const { server, client } = await start(scheme, provider, [
        { kind: "stream", transcript: loadTranscript(scheme, "text") }
      ])
      const log: Array<string> = []
      const mutable = Worker.create({ client, systemPrompt: "You are a careful assistant.", config: { maxTokens: 256, temperature: 0 } })
      mutable.registerTools([recordingTool("get_weather", log), recordingTool("files_read", log)])
      mutable.pushItem({ type: "message", role: "user", content: [{ type: "input_text", text: "Remember: answers are short." }] })
      mutable.pushItem({ type: "message", role: "assistant", content: [{ type: "output_text", text: "Understood." }] })
      const worker = mutable.lock()
      const prefixBytes = worker.lockedPrefix.prefixBytes
      expect(prefixBytes).toBeGreaterThan(0)
      for (let turn = 0; turn < 20; turn++) {
        const result = await worker.run(`Question ${turn}`)
        expect(result.cache[0]?.locked).toEqual({ prefixBytes, intact: true })
      }
      // Independently of the worker's own check: the bytes the server received.
      const bodies = server.requests.map((r) => Buffer.from(r.body, "utf8"))
      expect(bodies).toHaveLength(20)
      const locked = (bodies[0] as Buffer).subarray(0, prefixBytes)
      for (const [n, body] of bodies.entries()) {
        expect(body.subarray(0, prefixBytes).equals(locked)).toBe(true)
        if (n > 0) expect(commonPrefixLength(bodies[n - 1] as Buffer, body)).toBeGreaterThanOrEqual(prefixBytes)
      }
      expect(locked.toString("utf8")).toContain("You are a careful assistant.")
      expect(locked.toString("utf8")).toContain("Understood.")
    })

    it("is cancellable while waiting for response headers", async () => {
      const { client } = await start(scheme, provider, [{ kind: "no_headers" }])
      const worker = Worker.create({ client })
      const running = worker.run("hi")
      await new Promise((resolve) => setTimeout(resolve, 50))
      worker.cancel()
      await expect(running).rejects.toBeInstanceOf(Cancelled)
      expect(worker.history()).toHaveLength(1)
    })

    it("is cancellable mid-stream; nothing of the response enters history", async () => {
      const { client } = await start(scheme, provider, [
        { kind: "stream", transcript: loadTranscript(scheme, "parallel-tool-calls"), stallAfterEvents: 3 }
      ])
      const log: Array<string> = []
      const worker = Worker.create({ client })
      worker.registerTools([recordingTool("get_weather", log), recordingTool("files_read", log)])
      const running = worker.run("hi")
      await new Promise((resolve) => setTimeout(resolve, 80))
      worker.cancel()
      await expect(running).rejects.toBeInstanceOf(Cancelled)
      expect(worker.history()).toHaveLength(1)
      expect(log).toEqual([])
    })
  })
}
