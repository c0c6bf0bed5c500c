import { afterEach, describe, expect, it } from "vitest"
import type { Item } from "../../src/llm/item.ts"
import { createLlmClient } from "../../src/llm/llm-client.ts"
import type { SchemeName } from "../../src/llm/scheme.ts"
import { type ReplayProvider, startReplayProvider } from "../../src/testing/replay-provider.ts"
import { ToolMeta } from "../../src/tool/tool-meta.ts"
import { PreToolCall } from "../../src/worker/hooks.ts"
import { Worker } from "../../src/worker/worker.ts"
import { CallsPending } from "../../src/worker/worker-error.ts"
import { loadTranscript } from "../support/sse-fixtures.ts"
import { ScriptedClient, textResponse, toolCallResponse } from "./support/scripted-client.ts"
import { EchoTool, echoDefinition } from "./support/tools.ts"

const callIds = (items: ReadonlyArray<Item>) => items.flatMap((i) => (i.type === "function_call" ? [i.callId] : []))
const outputIds = (items: ReadonlyArray<Item>) => items.flatMap((i) => (i.type === "function_call_output" ? [i.callId] : []))

/** Every call has its own id and exactly one result, and every result answers a call. */
const expectPaired = (items: ReadonlyArray<Item>) => {
  const calls = callIds(items)
  expect(new Set(calls).size).toBe(calls.length)
  expect([...outputIds(items)].sort()).toEqual([...calls].sort())
}

describe("call ids in history are unique", () => {
  it("two calls under one id in a response: each runs once with its own arguments, and is sent back once", async () => {
    const echo = new EchoTool()
    const client = new ScriptedClient([
      toolCallResponse([
        { id: "toolu_1", name: "echo", args: '{"v":"first"}' },
        { id: "toolu_1", name: "echo", args: '{"v":"second"}' }
      ]),
      textResponse("done")
    ])
    const worker = Worker.create({ client })
    worker.registerTool(echoDefinition("echo", echo))
    const seen: Array<string> = []
    worker.subscribe({ onToolCallCompleted: (e) => seen.push(e.call.callId) })
    await worker.run("go")
    expect(echo.calls).toEqual(['{"v":"first"}', '{"v":"second"}'])
    expect(callIds(worker.history())).toEqual(["toolu_1", "toolu_1_2"])
    // Subscribers see the id the call has in history.
    expect(seen).toEqual(["toolu_1", "toolu_1_2"])
    expectPaired(worker.history())
    expectPaired(client.requests[1]?.items ?? [])
  })

  it("generates ids for calls without one, deterministically and in Anthropic's id alphabet", async () => {
    const run = async () => {
      const client = new ScriptedClient([
        toolCallResponse([
          { id: "", name: "echo", args: "{}" },
          { id: "", name: "echo", args: "{}" },
          { id: "bad id/with:chars", name: "echo", args: "{}" }
        ]),
        textResponse("done")
      ])
      const worker = Worker.create({ client })
      worker.registerTool(echoDefinition())
      await worker.run("go")
      return callIds(worker.history())
    }
    const ids = await run()
    expect(ids).toEqual(await run())
    expect(new Set(ids).size).toBe(3)
    for (const id of ids) expect(id).toMatch(/^[a-zA-Z0-9_-]{1,128}$/)
  })

  it("keeps Gemini replacement ids under the generated-id prefix, so they are never sent (decision 0010)", async () => {
    const client = new ScriptedClient(
      [toolCallResponse([{ id: "", name: "echo", args: "{}" }, { id: "g1", name: "echo", args: "{}" }, { id: "g1", name: "echo", args: "{}" }]), textResponse("done")],
      "gemini"
    )
    const worker = Worker.create({ client })
    worker.registerTool(echoDefinition())
    await worker.run("go")
    const ids = callIds(worker.history())
    expect(ids[1]).toBe("g1")
    expect(ids[0]?.startsWith("llmw_gemini_")).toBe(true)
    expect(ids[2]?.startsWith("llmw_gemini_")).toBe(true)
    expectPaired(worker.history())
  })

  it("replaces a 1 MiB id instead of sending it back on every request", async () => {
    const client = new ScriptedClient([toolCallResponse([{ id: "x".repeat(1 << 20), name: "echo", args: "{}" }]), textResponse("done")])
    const worker = Worker.create({ client })
    worker.registerTool(echoDefinition())
    await worker.run("go")
    const [id] = callIds(worker.history())
    expect(id?.length).toBeLessThanOrEqual(128)
    expectPaired(worker.history())
  })
})

describe("an id reused across turns", () => {
  it("is a new call: it runs, even after a pause, and the next request pairs every call with one result", async () => {
    const echo = new EchoTool()
    const client = new ScriptedClient([
      toolCallResponse([{ id: "call_1", name: "echo", args: '{"v":"turn1"}' }]),
      toolCallResponse([{ id: "call_1", name: "echo", args: '{"v":"turn2"}' }]),
      textResponse("done")
    ])
    const worker = Worker.create({ client })
    worker.registerTool(echoDefinition("echo", echo))
    let approved = false
    worker.addHook("PreToolCall", ({ call }) => (call.arguments.includes("turn2") && !approved ? PreToolCall.pause("approve") : undefined))
    const first = await worker.run("go")
    expect(first.status).toBe("paused")
    expect(worker.hasPendingCalls).toBe(true)
    approved = true
    const second = await worker.resume()
    expect(second.status).toBe("finished")
    expect(echo.calls).toEqual(['{"v":"turn1"}', '{"v":"turn2"}'])
    expect(callIds(worker.history())).toEqual(["call_1", "call_1_2"])
    expectPaired(worker.history())
    expectPaired(client.requests[2]?.items ?? [])
    expect(worker.hasPendingCalls).toBe(false)
  })
})

describe("hasPendingCalls", () => {
  it("is true after a pause on the first call of a batch (no decision kept yet)", async () => {
    const client = new ScriptedClient([toolCallResponse([{ id: "a", name: "echo", args: "{}" }, { id: "b", name: "echo", args: "{}" }]), textResponse("ok")])
    const worker = Worker.create({ client })
    worker.registerTool(echoDefinition())
    let pause = true
    worker.addHook("PreToolCall", () => (pause ? PreToolCall.pause("wait") : undefined))
    expect((await worker.run("go")).status).toBe("paused")
    expect(worker.hasPendingCalls).toBe(true)
    pause = false
    expect((await worker.resume()).status).toBe("finished")
    expect(worker.hasPendingCalls).toBe(false)
    expectPaired(worker.history())
  })
})

describe("lock() while calls are pending", () => {
  it("refuses with CallsPending naming the calls; after resume() it locks and later runs keep the prefix", async () => {
    const client = new ScriptedClient([toolCallResponse([{ id: "a", name: "echo", args: "{}" }]), textResponse("ok")])
    const worker = Worker.create({ client })
    worker.registerTool(echoDefinition())
    let pause = true
    worker.addHook("PreToolCall", () => (pause ? PreToolCall.pause("wait") : undefined))
    await worker.run("go")
    worker.pushItem({ type: "message", role: "user", content: [{ type: "input_text", text: "note" }] })
    let refused: unknown
    try {
      worker.lock()
    } catch (error) {
      refused = error
    }
    expect(refused).toBeInstanceOf(CallsPending)
    expect((refused as CallsPending).callIds).toEqual(["a"])
    expect((refused as CallsPending).message).toContain('"a"')
    // The worker was not retired by the refused lock().
    pause = false
    expect((await worker.resume()).status).toBe("finished")
    const locked = worker.lock()
    expect((await locked.run("more")).status).toBe("finished")
    expect((await locked.run("and more")).cache.every((report) => report.locked?.intact === true)).toBe(true)
  })
})

// Real loopback HTTP: the provider's own stream names two calls with one id; whatever the decoder makes of it,
// the history the worker keeps and sends back has one id per call and one result per call.
const DUPLICATED: ReadonlyArray<{ readonly scheme: SchemeName; readonly provider: string; readonly first: string; readonly second: string }> = [
  { scheme: "anthropic", provider: "anthropic", first: "toolu_01Q8dkDGbhVxSFaFUo2kEzLT", second: "toolu_01T1x1fJ34qAmk2tNTrN7Up6" },
  { scheme: "openai-chat", provider: "openai", first: "call_Rf5tG9hY2uJ7kI3oL8pZ1xC4", second: "call_Wq3nE8rT1yU6iO0pA2sD4fG7" },
  { scheme: "openai-responses", provider: "openai-responses", first: "call_Rf5tG9hY2uJ7kI3oL8pZ1xC4", second: "call_Wq3nE8rT1yU6iO0pA2sD4fG7" }
]

const servers: Array<ReplayProvider> = []
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()))
})

describe.each(DUPLICATED)("duplicate ids over $scheme", ({ scheme, provider, first, second }) => {
  it("every call in history and in the next request body is unique and answered once", async () => {
    const transcript = loadTranscript(scheme, "parallel-tool-calls").replaceAll(second, first)
    const server = await startReplayProvider({ scheme, script: [{ kind: "stream", transcript }, { kind: "stream", transcript: loadTranscript(scheme, "text") }] })
    servers.push(server)
    const client = createLlmClient({ provider, model: "test-model", apiKey: "k", baseUrl: server.baseUrl, retry: { maxRetries: 0 } })
    const log: Array<string> = []
    const worker = Worker.create({ client })
    for (const name of ["get_weather", "files_read"]) {
      worker.registerTool(() => [
        ToolMeta.make(name).description(name).inputSchema({ type: "object", properties: { location: { type: "string" }, path: { type: "string" } } }),
        { execute: async (args: string) => (log.push(`${name}:${args}`), "ok") }
      ])
    }
    const result = await worker.run("go")
    expect(result.status).toBe("finished")
    const calls = worker.history().filter((i) => i.type === "function_call")
    expect(log).toHaveLength(calls.length)
    expectPaired(worker.history())
    const body = server.requests[1]?.body ?? ""
    for (const id of callIds(worker.history())) {
      expect(id).toMatch(/^[a-zA-Z0-9_-]+$/)
      expect(body).toContain(id)
    }
  })
})
