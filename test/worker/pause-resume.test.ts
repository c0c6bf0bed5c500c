import { describe, expect, it } from "vitest"
import { Item } from "../../src/llm/item.ts"
import { PreToolCall } from "../../src/worker/hooks.ts"
import { Worker } from "../../src/worker/worker.ts"
import { ScriptedClient, textResponse, toolCallResponse } from "./support/scripted-client.ts"
import { EchoTool, echoDefinition } from "./support/tools.ts"

const outputs = (items: ReadonlyArray<Item>) =>
  items.flatMap((i) => (i.type === "function_call_output" ? [`${i.callId}=${i.output}`] : []))

describe("pause and resume", () => {
  it("keeps the decisions made before a pause and asks hooks only about undecided calls on resume", async () => {
    const echo = new EchoTool()
    const client = new ScriptedClient([
      toolCallResponse([
        { id: "a", name: "echo", args: '{"v":"a"}' },
        { id: "b", name: "echo", args: '{"v":"b"}' },
        { id: "c", name: "echo", args: '{"v":"c"}' },
        { id: "d", name: "echo", args: '{"v":"d"}' }
      ]),
      textResponse("all done")
    ])
    const worker = Worker.create({ client })
    worker.registerTool(echoDefinition("echo", echo))
    const asked: Array<string> = []
    let approved = false
    worker.addHook("PreToolCall", ({ call }) => {
      asked.push(call.callId)
      if (call.callId === "a") return PreToolCall.rewriteArguments('{"v":"A"}')
      if (call.callId === "b") return PreToolCall.skip("not needed")
      if (call.callId === "c" && !approved) return PreToolCall.pause("needs approval")
      if (call.callId === "d") return PreToolCall.deny("never")
      return PreToolCall.continue()
    })

    const first = await worker.run("go")
    expect(first).toMatchObject({ status: "paused", pauseReason: "needs approval" })
    expect(asked).toEqual(["a", "b", "c"])
    expect(echo.calls).toEqual([])
    expect(worker.hasPendingCalls).toBe(true)
    expect(outputs(worker.history())).toEqual([])
    expect(client.requests).toHaveLength(1)

    approved = true
    asked.length = 0
    const second = await worker.resume()
    expect(second.status).toBe("finished")
    expect(asked).toEqual(["c", "d"])
    // The rewrite decided before the pause is honoured; the skipped call never runs.
    expect(echo.calls).toEqual(['{"v":"A"}', '{"v":"c"}'])
    expect(outputs(worker.history())).toEqual([
      'a=echo:{"v":"A"}',
      "b=Tool call skipped (not executed): not needed",
      'c=echo:{"v":"c"}',
      "d=Tool call denied (not executed): never"
    ])
    // The next request carries every call paired with its result.
    const sent = client.requests[1]?.items ?? []
    expect(sent.filter((i) => i.type === "function_call")).toHaveLength(4)
    expect(sent.filter((i) => i.type === "function_call_output")).toHaveLength(4)
    expect(worker.hasPendingCalls).toBe(false)

    // A later run never re-runs anything of that batch.
    await worker.run("again")
    expect(echo.calls).toHaveLength(2)
  })

  it("a new run() after a pause settles the pending calls before the new message", async () => {
    const echo = new EchoTool()
    const client = new ScriptedClient([toolCallResponse([{ id: "a", name: "echo", args: "{}" }]), textResponse("fine")])
    const worker = Worker.create({ client })
    worker.registerTool(echoDefinition("echo", echo))
    let pause = true
    worker.addHook("PreToolCall", () => (pause ? PreToolCall.pause() : PreToolCall.continue()))
    await worker.run("first")
    pause = false
    const result = await worker.run("second")
    expect(result.items.map((i) => i.type)).toEqual(["function_call_output", "message", "message"])
    expect(echo.calls).toEqual(["{}"])
  })
})

describe("items added while paused", () => {
  it("never separate calls from their results: results go right after the paused batch", async () => {
    const echo = new EchoTool()
    const client = new ScriptedClient([toolCallResponse([{ id: "a", name: "echo", args: '{"v":"a"}' }]), textResponse("done")])
    const worker = Worker.create({ client })
    worker.registerTool(echoDefinition("echo", echo))
    let approved = false
    worker.addHook("PreToolCall", () => (approved ? PreToolCall.continue() : PreToolCall.pause("approve?")))
    expect((await worker.run("go")).status).toBe("paused")
    approved = true
    worker.pushItem(Item.userText("a note added while paused"))
    const result = await worker.resume()
    expect(result.status).toBe("finished")
    const kinds = worker.history().map((item) => (item.type === "message" ? `${item.role}` : item.type))
    expect(kinds).toEqual(["user", "function_call", "function_call_output", "user", "assistant"])
  })
})
