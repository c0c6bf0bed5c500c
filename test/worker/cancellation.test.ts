import { Effect, Fiber } from "effect"
import { describe, expect, it } from "vitest"
import { Item } from "../../src/llm/item.ts"
import { PreLlmRequest } from "../../src/worker/hooks.ts"
import { Worker } from "../../src/worker/worker.ts"
import { Cancelled } from "../../src/worker/worker-error.ts"
import { ScriptedClient, textResponse, toolCallResponse } from "./support/scripted-client.ts"
import { slowDefinition } from "./support/tools.ts"

const tick = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

describe("cancellation", () => {
  it("before the request: a hook-side cancel while PreLlmRequest waits; no request is sent", async () => {
    const client = new ScriptedClient([textResponse("ok")])
    const worker = Worker.create({ client })
    const reasons: Array<string> = []
    worker.addHook("OnAbort", ({ reason }) => void reasons.push(reason))
    worker.addHook("PreLlmRequest", async () => {
      worker.cancel()
      await tick(5)
      return PreLlmRequest.continue()
    })
    await expect(worker.run("hi")).rejects.toBeInstanceOf(Cancelled)
    expect(client.requests).toHaveLength(0)
    expect(reasons).toEqual(["Cancelled"])
  })

  it("an already-aborted signal cancels before anything happens", async () => {
    const client = new ScriptedClient([textResponse("ok")])
    const worker = Worker.create({ client })
    await expect(worker.run("hi", { signal: AbortSignal.abort() })).rejects.toBeInstanceOf(Cancelled)
    expect(client.requests).toHaveLength(0)
  })

  it("while waiting for the stream (stalled before the first event, client ignores its signal)", async () => {
    const client = new ScriptedClient([{ ...textResponse("ok"), stallAfter: 0, ignoreSignal: true }])
    const worker = Worker.create({ client })
    const running = worker.run("hi")
    await tick(20)
    worker.cancel()
    await expect(running).rejects.toBeInstanceOf(Cancelled)
    expect(worker.history()).toEqual([Item.userText("hi")])
  })

  it("mid-stream: the open block is closed and nothing of the response enters history", async () => {
    const client = new ScriptedClient([{ ...textResponse("a long answer here"), stallAfter: 3 }])
    const worker = Worker.create({ client })
    const events: Array<string> = []
    worker.subscribe({ onEvent: (e) => events.push(e.type) })
    const running = worker.run("hi")
    await tick(20)
    worker.cancel()
    await expect(running).rejects.toBeInstanceOf(Cancelled)
    expect(events).toContain("block_start")
    expect(events).toContain("block_abort")
    expect(events).not.toContain("text_completed")
    expect(worker.history()).toEqual([Item.userText("hi")])
  })

  it("between events via the run's own signal", async () => {
    const client = new ScriptedClient([{ ...textResponse("abcdefghijklmnop"), delayMs: 10 }])
    const worker = Worker.create({ client })
    const controller = new AbortController()
    const running = worker.run("hi", { signal: controller.signal })
    setTimeout(() => controller.abort(), 25)
    await expect(running).rejects.toBeInstanceOf(Cancelled)
    expect(worker.history()).toEqual([Item.userText("hi")])
  })

  it("while tools run: finished calls keep their result, a tool ignoring its signal still ends as cancelled", async () => {
    const client = new ScriptedClient([
      toolCallResponse([
        { id: "quick", name: "quick", args: "{}" },
        { id: "stubborn", name: "stubborn", args: "{}" },
        { id: "polite", name: "polite", args: "{}" }
      ])
    ])
    const worker = Worker.create({ client })
    worker.registerTools([slowDefinition("quick", 1), slowDefinition("stubborn", 60_000, true), slowDefinition("polite", 60_000)])
    const statuses: Array<string> = []
    worker.subscribe({ onToolResult: (e) => statuses.push(`${e.outcome.callId}:${e.outcome.status}`) })
    const running = worker.run("go")
    await tick(40)
    const started = Date.now()
    worker.cancel()
    await expect(running).rejects.toBeInstanceOf(Cancelled)
    expect(Date.now() - started).toBeLessThan(1_000)
    expect(statuses).toEqual(["quick:ok", "stubborn:cancelled", "polite:cancelled"])
    const outputs = worker.history().filter((i) => i.type === "function_call_output")
    expect(outputs.map((o) => o.callId)).toEqual(["quick", "stubborn", "polite"])
  })

  it("a cancel while idle, or left over from a previous run, never cancels the next run", async () => {
    const client = new ScriptedClient([{ ...textResponse("first"), stallAfter: 2 }, textResponse("second"), textResponse("third")])
    const worker = Worker.create({ client })
    worker.cancel()
    const first = worker.run("1")
    await tick(10)
    worker.cancel()
    worker.cancel()
    await expect(first).rejects.toBeInstanceOf(Cancelled)
    worker.cancel()
    await expect(worker.run("2")).resolves.toMatchObject({ status: "finished" })
    const controller = new AbortController()
    controller.abort()
    await expect(worker.run("3")).resolves.toMatchObject({ status: "finished" })
  })

  it("runEffect: interrupting the fiber cancels the run", async () => {
    const client = new ScriptedClient([{ ...textResponse("ok"), stallAfter: 1 }])
    const worker = Worker.create({ client })
    const aborts: Array<string> = []
    worker.addHook("OnAbort", ({ reason }) => void aborts.push(reason))
    await Effect.runPromise(
      Effect.gen(function* () {
        const fiber = yield* Effect.forkChild(worker.runEffect("hi"))
        yield* Effect.sleep("20 millis")
        yield* Fiber.interrupt(fiber)
      })
    )
    await tick(5)
    expect(aborts).toEqual(["Cancelled"])
    expect(worker.history()).toEqual([Item.userText("hi")])
  })
})
