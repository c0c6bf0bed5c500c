import { describe, expect, it } from "vitest"
import { type Item, Item as Items } from "../../src/llm/item.ts"
import { defineTool } from "../../src/tool/define-tool.ts"
import { Worker } from "../../src/worker/worker.ts"
import type { ToolOutcome } from "../../src/worker/tool-outcome.ts"
import { ScriptedClient, textResponse, toolCallResponse } from "./support/scripted-client.ts"
import { echoDefinition } from "./support/tools.ts"
import type { LlmClient } from "../../src/llm/client.ts"
import { registerDefinitions } from "../../src/tool-server/registration.ts"
import { ToolServer } from "../../src/tool-server/tool-server.ts"
import { settleBatch } from "../../src/worker/tool-execution.ts"
import { type WorkerCore, makeCore } from "../../src/worker/worker-core.ts"

/**
 * A batch of one call ends as its own `SoleEnd` (no outcomes array, decision 0086); the turn loop records it as
 * it records any batch: the result right after its call, one `tool_result` event, and the run's cancellation
 * after the result is recorded.
 */
const kinds = (items: ReadonlyArray<Item>) => items.map((item) => (item.type === "message" ? item.role : item.type))

const runWith = async (history: ReadonlyArray<Item>): Promise<{ readonly history: ReadonlyArray<Item>; readonly results: ReadonlyArray<ToolOutcome> }> => {
  const worker = Worker.create({ client: new ScriptedClient([textResponse("done")]), history })
  worker.registerTool(echoDefinition("echo"))
  const results: Array<ToolOutcome> = []
  worker.subscribe({ onToolResult: (event) => void results.push(event.outcome) })
  expect((await worker.run("next")).status).toBe("finished")
  return { history: worker.history(), results }
}

describe("a batch of one call", () => {
  it("puts the result right after its call when items follow it (the history is rebuilt around it)", async () => {
    const { history, results } = await runWith([Items.userText("go"), Items.functionCall("a", "echo", '{"v":"a"}'), Items.userText("a note")])
    expect(kinds(history)).toEqual(["user", "function_call", "function_call_output", "user", "user", "assistant"])
    expect(history[2]).toMatchObject({ type: "function_call_output", callId: "a", output: 'echo:{"v":"a"}', isError: false })
    expect(Object.isFrozen(history[2])).toBe(true)
    expect(results.map((r) => `${r.callId} ${r.status}`)).toEqual(["a ok"])
  })

  it("records what a batch of two records, call for call (the outcomes-array path)", async () => {
    const sole = await runWith([Items.userText("go"), Items.functionCall("a", "echo", '{"v":"a"}'), Items.userText("a note")])
    const pair = await runWith([
      Items.userText("go"),
      Items.functionCall("a", "echo", '{"v":"a"}'),
      Items.functionCall("b", "echo", '{"v":"b"}'),
      Items.userText("a note")
    ])
    expect(kinds(pair.history)).toEqual(["user", "function_call", "function_call", "function_call_output", "function_call_output", "user", "user", "assistant"])
    expect(pair.history[3]).toEqual(sole.history[2])
    expect(pair.results[0]).toEqual(sole.results[0])
  })

  it("records the cancelled result of a tool that ignores its signal, then fails the run with `Cancelled` carrying the abort reason", async () => {
    const client = new ScriptedClient([toolCallResponse([{ id: "a", name: "hang", args: "{}" }]), textResponse("never")])
    const worker = Worker.create({ client })
    let started!: () => void
    const running = new Promise<void>((resolve) => (started = resolve))
    // Ignores its signal and never settles: the run must not wait for it.
    worker.registerTool(defineTool({ name: "hang", description: "hangs", execute: () => (started(), new Promise<never>(() => undefined)) }))
    const results: Array<ToolOutcome> = []
    worker.subscribe({ onToolResult: (event) => void results.push(event.outcome) })
    const run = worker.run("go")
    await running
    worker.cancel("stop")
    await expect(run).rejects.toMatchObject({ _tag: "Cancelled", reason: "stop" })
    expect(results).toEqual([{ callId: "a", name: "hang", status: "cancelled", output: "Tool call cancelled: the run was cancelled", isError: true }])
    const last = worker.history().at(-1)
    expect(last).toMatchObject({ type: "function_call_output", callId: "a", isError: true })
  })

  it("tells subscribers of the cancelled result after `cancel()` returns, never inside it (decision 0089)", async () => {
    const client = new ScriptedClient([toolCallResponse([{ id: "a", name: "hang", args: "{}" }]), textResponse("never")])
    const worker = Worker.create({ client })
    let started!: () => void
    const running = new Promise<void>((resolve) => (started = resolve))
    worker.registerTool(defineTool({ name: "hang", description: "hangs", execute: () => (started(), new Promise<never>(() => undefined)) }))
    let cancelling = false
    const seen: Array<string> = []
    worker.subscribe({ onToolResult: (event) => void seen.push(`${event.outcome.status}${cancelling ? " inside cancel()" : ""}`) })
    const run = worker.run("go")
    await running
    cancelling = true
    worker.cancel("stop")
    cancelling = false
    expect(seen).toEqual([])
    await expect(run).rejects.toMatchObject({ _tag: "Cancelled", reason: "stop" })
    expect(seen).toEqual(["cancelled"])
  })
})

describe("settleBatch", () => {
  const core = (): WorkerCore => {
    const tools = new ToolServer().handle()
    registerDefinitions(tools, [echoDefinition("echo")])
    return makeCore({
      client: { scheme: "anthropic" } as unknown as LlmClient,
      tools,
      systemPrompt: undefined,
      config: {},
      history: [],
      settings: { maxTurns: 4, toolTimeoutMs: undefined, toolTimeouts: {}, maxToolOutputBytes: 1024, maxArgumentDepth: 64, maxParallelTools: 4, maxCallsPerResponse: 16 }
    })
  }
  const offered = new Set(["echo"])

  it("resolves with what its settle returns, and rejects with what it throws, for a sole call as for a batch", async () => {
    for (const calls of [
      [Items.functionCall("a", "echo", '{"v":"a"}')],
      [Items.functionCall("a", "echo", '{"v":"a"}'), Items.functionCall("b", "echo", '{"v":"b"}')]
    ]) {
      const signal = new AbortController().signal
      const outputs = await settleBatch(core(), calls, new Map(), signal, offered, (end, seen) => {
        expect(seen).toBe(calls)
        return end.kind === "sole" ? [end.outcome.output] : end.kind === "done" ? end.outcomes.map((o) => o.output) : []
      })
      expect(outputs).toEqual(calls.map((call) => `echo:${call.arguments}`))
      const failure = new Error("recording failed")
      await expect(
        settleBatch(core(), calls, new Map(), signal, offered, () => {
          throw failure
        })
      ).rejects.toBe(failure)
    }
  })
})
