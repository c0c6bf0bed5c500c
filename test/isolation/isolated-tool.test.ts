import { afterAll, describe, expect, it } from "vitest"
import { z } from "zod"
import { defineIsolatedTool, IsolationPool } from "../../src/isolation/index.ts"
import { registerDefinitions } from "../../src/tool-server/registration.ts"
import { ToolServer } from "../../src/tool-server/tool-server.ts"
import type { ToolCallError } from "../../src/tool-server/tool-server-error.ts"

const handlers = new URL("./fixtures/handlers.mjs", import.meta.url)

/** One thread: a call that was not really stopped would block every later call, so "next call works" proves it. */
const pool = new IsolationPool({ maxThreads: 1 })
afterAll(() => pool.close())

const tool = (name: string, exportName: string, parameters?: z.ZodObject) =>
  defineIsolatedTool({ name, description: name, module: handlers, export: exportName, pool, ...(parameters === undefined ? {} : { parameters }) })

const handle = new ToolServer().handle()
registerDefinitions(handle, [
  tool("add", "add", z.object({ a: z.number(), b: z.number() })),
  tool("whoami", "whoami"),
  tool("spin", "spin"),
  tool("fail", "fail"),
  tool("hostile", "hostile"),
  tool("exit_thread", "exitThread"),
  tool("crash_later", "crashLater"),
  tool("refuse", "refuse"),
  tool("huge", "huge"),
  defineIsolatedTool({ name: "echo", description: "", module: handlers.href, pool, parameters: z.object({ text: z.string() }) })
])

const outcome = (promise: Promise<string>): Promise<string> =>
  promise.then(
    (output) => `ok ${output}`,
    (error: ToolCallError) => `${error._tag}${error._tag === "ToolExecution" ? `/${error.error._tag}` : ""}: ${error.message}`
  )

describe("defineIsolatedTool", () => {
  it("runs the handler in a worker thread with the arguments the schema decoded in the calling thread", async () => {
    expect(await outcome(handle.callTool("add", '{"a":2,"b":3}'))).toBe("ok 5")
    expect(await outcome(handle.callTool("echo", '{"text":"hi"}'))).toBe("ok default:hi")
    const { threadId } = JSON.parse(await handle.callTool("whoami", "{}")) as { threadId: number }
    expect(threadId).toBeGreaterThan(0)
    // Refused in the calling thread: the handler never sees invalid arguments.
    expect(await outcome(handle.callTool("add", '{"a":"2","b":3}'))).toMatch(/^ToolExecution\/InvalidArgument: .*a: expected number/)
  })

  it("ends a CPU-bound busy loop with ToolTimeout, terminates its thread, and the pool serves the next call", async () => {
    const before = JSON.parse(await handle.callTool("whoami", "{}")) as { threadId: number }
    const started = Date.now()
    expect(await outcome(handle.callTool("spin", "{}", { timeoutMs: 200 }))).toBe('ToolTimeout: tool "spin" timed out after 200 ms')
    expect(Date.now() - started).toBeLessThan(5_000)
    // With one thread, this call can only run if the spinning thread was terminated and replaced.
    const after = JSON.parse(await handle.callTool("whoami", "{}")) as { threadId: number }
    expect(after.threadId).not.toBe(before.threadId)
    expect(await outcome(handle.callTool("add", '{"a":1,"b":1}'))).toBe("ok 2")
  }, 20_000)

  it("stops a busy loop on cancel", async () => {
    const controller = new AbortController()
    setTimeout(() => controller.abort(), 100)
    expect(await outcome(handle.callTool("spin", "{}", { signal: controller.signal }))).toBe('ToolCancelled: call to "spin" was cancelled')
    expect(await outcome(handle.callTool("add", '{"a":4,"b":1}'))).toBe("ok 5")
  }, 20_000)

  it("reports failures and crashes inside the thread as ToolExecution errors, and recovers", async () => {
    expect(await outcome(handle.callTool("fail", "{}"))).toBe("ToolExecution/ExecutionFailed: disk full")
    expect(await outcome(handle.callTool("refuse", "{}"))).toBe("ToolExecution/ExecutionFailed: no such city")
    expect(await outcome(handle.callTool("hostile", "{}"))).toMatch(/^ToolExecution\/ExecutionFailed: /)
    expect(await outcome(handle.callTool("exit_thread", "{}"))).toMatch(/^ToolExecution\/ExecutionFailed: the tool's thread failed: .*exited with code: 3/)
    expect(await outcome(handle.callTool("crash_later", "{}"))).toMatch(/^ToolExecution\/ExecutionFailed: the tool's thread failed: uncaught in the thread/)
    expect(await outcome(handle.callTool("add", '{"a":1,"b":2}'))).toBe("ok 3")
  }, 20_000)

  it("caps a thread's output like any tool's", async () => {
    const output = await handle.callTool("huge", "{}")
    expect(Buffer.byteLength(output)).toBeLessThanOrEqual(100 * 1024)
    expect(output).toMatch(/output truncated: \d+ of 1048576 bytes dropped\]$/)
  })

  it("refuses a module that is not an absolute file location, or does not exist, at definition", () => {
    expect(() => defineIsolatedTool({ name: "x", description: "", module: "./relative.mjs" })).toThrow(TypeError)
    expect(() => defineIsolatedTool({ name: "x", description: "", module: "https://example.com/x.mjs" })).toThrow(TypeError)
    expect(() => defineIsolatedTool({ name: "x", description: "", module: new URL("./fixtures/missing.mjs", import.meta.url) })).toThrow(/does not exist/)
  })

  it("fails calls on a closed pool with ExecutionFailed", async () => {
    const closed = new IsolationPool({ maxThreads: 1 })
    await closed.close()
    const h = new ToolServer().handle()
    registerDefinitions(h, [defineIsolatedTool({ name: "add", description: "", module: handlers, export: "add", pool: closed })])
    expect(await outcome(h.callTool("add", "{}"))).toBe("ToolExecution/ExecutionFailed: the isolation pool is closed")
  })
})

describe("isolated tools in a Worker", () => {
  it("a busy loop under toolTimeoutMs ends as a timeout result and the run goes on", async () => {
    const { Worker } = await import("../../src/worker/worker.ts")
    const { ScriptedClient, textResponse, toolCallResponse } = await import("../worker/support/scripted-client.ts")
    const client = new ScriptedClient([toolCallResponse([{ id: "c1", name: "spin", args: "{}" }]), textResponse("done")])
    const worker = Worker.create({ client, toolTimeoutMs: 200 })
    worker.registerTool(tool("spin", "spin"))
    const result = await worker.run("go")
    expect(result.status).toBe("finished")
    const output = result.items.find((item) => item.type === "function_call_output")
    expect(output).toMatchObject({ output: 'tool "spin" timed out after 200 ms', isError: true })
  }, 20_000)

  it("100 parallel isolated calls on one signal add one abort listener, not 100", async () => {
    const { EventEmitter } = await import("node:events")
    const getEventListeners = (target: EventTarget, name: string): ReadonlyArray<unknown> => EventEmitter.getEventListeners(target, name)
    const wide = new IsolationPool({ maxThreads: 2, maxQueue: 200 })
    const h = new ToolServer().handle()
    registerDefinitions(h, [defineIsolatedTool({ name: "add", description: "", module: handlers, export: "add", pool: wide, parameters: z.object({ a: z.number(), b: z.number() }) })])
    const warnings: Array<string> = []
    const onWarning = (w: Error): void => void warnings.push(w.name)
    process.on("warning", onWarning)
    const signal = new AbortController().signal
    const calls = Array.from({ length: 100 }, (_, i) => h.callTool("add", JSON.stringify({ a: i, b: 1 }), { signal }))
    expect(getEventListeners(signal, "abort").length).toBeLessThanOrEqual(1)
    expect((await Promise.all(calls)).map(Number)).toEqual(Array.from({ length: 100 }, (_, i) => i + 1))
    process.off("warning", onWarning)
    expect(warnings).toEqual([])
    await wide.close()
  }, 30_000)
})
