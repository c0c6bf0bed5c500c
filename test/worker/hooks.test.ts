import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { Item } from "../../src/llm/item.ts"
import {
  Hook,
  OnPromptSubmit,
  OnTurnEnd,
  PostToolCall,
  PreLlmRequest,
  PreToolCall,
  StreamHook
} from "../../src/worker/hooks.ts"
import { Worker } from "../../src/worker/worker.ts"
import { HookAborted, HookFailed } from "../../src/worker/worker-error.ts"
import { ScriptedClient, textResponse, toolCallResponse } from "./support/scripted-client.ts"
import { EchoTool, echoDefinition } from "./support/tools.ts"

const oneCall = () => new ScriptedClient([toolCallResponse([{ id: "c1", name: "echo", args: '{"v":"a"}' }]), textResponse("ok")])

const outputsOf = (items: ReadonlyArray<Item>) =>
  items.flatMap((i) => (i.type === "function_call_output" ? [{ id: i.callId, output: i.output, isError: i.isError }] : []))

describe("OnPromptSubmit", () => {
  it("rewrites the user item; hooks chain in registration order", async () => {
    const client = new ScriptedClient([textResponse("ok")])
    const worker = Worker.create({ client })
    const seen: Array<string> = []
    worker.addHook("OnPromptSubmit", ({ item }) => {
      seen.push(`first:${JSON.stringify(item)}`)
      return OnPromptSubmit.rewrite(Item.userText("rewritten"))
    })
    worker.addHook("OnPromptSubmit", ({ item }) => {
      seen.push(`second:${item.type === "message" && item.content[0]?.type === "input_text" ? item.content[0].text : "?"}`)
      return Hook.continue()
    })
    await worker.run("original")
    expect(seen[1]).toBe("second:rewritten")
    expect(client.requests[0]?.items).toEqual([Item.userText("rewritten")])
  })

  it("cancel ends the run as HookAborted before any request; OnAbort hears the reason", async () => {
    const client = new ScriptedClient([textResponse("ok")])
    const worker = Worker.create({ client })
    const reasons: Array<string> = []
    worker.addHook("OnPromptSubmit", () => OnPromptSubmit.cancel("off topic"))
    worker.addHook("OnAbort", ({ reason }) => void reasons.push(reason))
    const error = await worker.run("x").catch((e: unknown) => e)
    expect(error).toBeInstanceOf(HookAborted)
    expect((error as HookAborted).point).toBe("OnPromptSubmit")
    expect(client.requests).toHaveLength(0)
    expect(reasons[0]).toMatch(/off topic/)
    expect(worker.history()).toEqual([])
  })
})

describe("PreLlmRequest", () => {
  it("rewrites a copy of the context: the request changes, the stored history does not", async () => {
    const client = new ScriptedClient([textResponse("ok")])
    const worker = Worker.create({ client, systemPrompt: "sys" })
    worker.addHook("PreLlmRequest", ({ context }) => {
      context.items.push(Item.userText("injected"))
      return PreLlmRequest.rewrite({ ...context, systemPrompt: "other" })
    })
    await worker.run("hi")
    expect(client.requests[0]?.items).toEqual([Item.userText("hi"), Item.userText("injected")])
    expect(client.requests[0]?.systemPrompt).toBe("other")
    expect(worker.history()).toEqual([Item.userText("hi"), Item.assistantText("ok")])
    expect(worker.systemPrompt).toBe("sys")
  })

  it("cancel ends the run before sending", async () => {
    const client = new ScriptedClient([textResponse("ok")])
    const worker = Worker.create({ client })
    worker.addHook("PreLlmRequest", () => PreLlmRequest.cancel("budget"))
    await expect(worker.run("hi")).rejects.toMatchObject({ _tag: "HookAborted", point: "PreLlmRequest" })
    expect(client.requests).toHaveLength(0)
  })
})

describe("stream hooks", () => {
  it("see every event, text and tool-call deltas, and the completion with turn and event count", async () => {
    const client = oneCall()
    const worker = Worker.create({ client })
    worker.registerTool(echoDefinition())
    const chunks: Array<string> = []
    const toolDeltas: Array<string> = []
    const texts: Array<string> = []
    const complete: Array<[number, number]> = []
    worker.addHook("OnStreamChunk", ({ event }) => void chunks.push(event.type))
    worker.addHook("OnToolCallDelta", ({ callId, name, json }) => void toolDeltas.push(`${callId}:${name}:${json}`))
    worker.addHook("OnTextDelta", ({ text }) => void texts.push(text))
    worker.addHook("OnStreamComplete", ({ turn, eventCount }) => void complete.push([turn, eventCount]))
    await worker.run("go")
    expect(toolDeltas).toEqual(['c1:echo:{"v"', 'c1:echo::"a"}'])
    expect(texts.join("")).toBe("ok")
    expect(complete).toEqual([
      [1, 6],
      [2, 5]
    ])
    expect(chunks).toHaveLength(11)
  })

  for (const point of ["OnStreamChunk", "OnTextDelta", "OnStreamComplete"] as const) {
    it(`${point} abort ends the run and nothing of the response enters history`, async () => {
      const client = new ScriptedClient([textResponse("hello world")])
      const worker = Worker.create({ client })
      const aborted: Array<string> = []
      worker.subscribe({ onBlockAbort: (e) => aborted.push(e.reason) })
      // OnStreamChunk aborts on a delta, so a block is open and must be closed.
      worker.addHook(point, (input) =>
        "event" in input && input.event.type !== "block_delta" ? StreamHook.continue() : StreamHook.abort("stop it")
      )
      await expect(worker.run("hi")).rejects.toMatchObject({ _tag: "HookAborted", point, reason: "stop it" })
      expect(worker.history()).toEqual([Item.userText("hi")])
      if (point !== "OnStreamComplete") expect(aborted).toHaveLength(1)
    })
  }

  it("OnToolCallDelta abort leaves no call behind; a stream hook's pause (plain JS) is an abort", async () => {
    const worker = Worker.create({ client: oneCall() })
    worker.registerTool(echoDefinition())
    worker.addHook("OnToolCallDelta", (() => PreToolCall.pause()) as never)
    await expect(worker.run("go")).rejects.toMatchObject({ _tag: "HookAborted", point: "OnToolCallDelta" })
    expect(worker.history()).toEqual([Item.userText("go")])
  })
})

describe("PreToolCall", () => {
  it("receives the call, meta and live instance; rewriting the arguments changes what the tool gets", async () => {
    const echo = new EchoTool()
    const worker = Worker.create({ client: oneCall() })
    worker.registerTool(echoDefinition("echo", echo))
    const metas: Array<string> = []
    worker.addHook("PreToolCall", ({ call, meta, tool }) => {
      metas.push(`${meta.name}:${tool === echo}`)
      call.arguments = '{"v":"mutated"}'
    })
    worker.addHook("PreToolCall", ({ call }) => PreToolCall.rewriteArguments(call.arguments.replace("mutated", "both")))
    const result = await worker.run("go")
    expect(metas).toEqual(["echo:true"])
    expect(echo.calls).toEqual(['{"v":"both"}'])
    // History keeps what the model said.
    expect(result.items.find((i) => i.type === "function_call")).toMatchObject({ arguments: '{"v":"a"}' })
  })

  it("skip and deny give synthetic results in model order; later hooks are not asked", async () => {
    const echo = new EchoTool()
    const client = new ScriptedClient([
      toolCallResponse([
        { id: "a", name: "echo", args: '{"v":"1"}' },
        { id: "b", name: "echo", args: '{"v":"2"}' },
        { id: "c", name: "echo", args: '{"v":"3"}' }
      ]),
      textResponse("ok")
    ])
    const worker = Worker.create({ client })
    worker.registerTool(echoDefinition("echo", echo))
    const asked: Array<string> = []
    worker.addHook("PreToolCall", ({ call }) =>
      call.callId === "a" ? PreToolCall.skip("not needed") : call.callId === "b" ? PreToolCall.deny("forbidden") : undefined
    )
    worker.addHook("PreToolCall", ({ call }) => void asked.push(call.callId))
    const result = await worker.run("go")
    expect(asked).toEqual(["c"])
    expect(echo.calls).toEqual(['{"v":"3"}'])
    const outputs = outputsOf(result.items)
    expect(outputs.map((o) => o.id)).toEqual(["a", "b", "c"])
    expect(outputs[0]?.output).toMatch(/skipped.*not needed/)
    expect(outputs[0]?.isError).toBe(false)
    expect(outputs[1]?.output).toMatch(/denied.*forbidden/)
    expect(outputs[1]?.isError).toBe(true)
    expect(outputs[2]?.output).toBe('echo:{"v":"3"}')
  })

  it("abort ends the run, yet every call of the batch gets a result", async () => {
    const client = new ScriptedClient([
      toolCallResponse([
        { id: "a", name: "echo", args: "{}" },
        { id: "b", name: "echo", args: "{}" }
      ])
    ])
    const echo = new EchoTool()
    const worker = Worker.create({ client })
    worker.registerTool(echoDefinition("echo", echo))
    worker.addHook("PreToolCall", ({ call }) => (call.callId === "b" ? PreToolCall.abort("no") : Hook.continue()))
    await expect(worker.run("go")).rejects.toMatchObject({ _tag: "HookAborted", point: "PreToolCall" })
    expect(echo.calls).toEqual([])
    expect(outputsOf(worker.history()).map((o) => o.id)).toEqual(["a", "b"])
  })
})

describe("PostToolCall", () => {
  it("receives the result and may rewrite it (in place or by result); hooks chain", async () => {
    const worker = Worker.create({ client: oneCall() })
    worker.registerTool(echoDefinition())
    worker.addHook("PostToolCall", ({ result, meta }) => {
      expect(meta.name).toBe("echo")
      result.output = result.output.toUpperCase()
    })
    worker.addHook("PostToolCall", ({ result }) => PostToolCall.rewriteResult(`[${result.output}]`, true))
    const result = await worker.run("go")
    expect(outputsOf(result.items)).toEqual([{ id: "c1", output: '[ECHO:{"V":"A"}]', isError: true }])
  })

  it("abort still records every result of the batch", async () => {
    const client = new ScriptedClient([
      toolCallResponse([
        { id: "a", name: "echo", args: "{}" },
        { id: "b", name: "echo", args: "{}" }
      ])
    ])
    const worker = Worker.create({ client })
    worker.registerTool(echoDefinition())
    worker.addHook("PostToolCall", () => PostToolCall.abort("enough"))
    await expect(worker.run("go")).rejects.toMatchObject({ _tag: "HookAborted", point: "PostToolCall" })
    expect(outputsOf(worker.history())).toEqual([
      { id: "a", output: "echo:{}", isError: false },
      { id: "b", output: "echo:{}", isError: false }
    ])
  })
})

describe("OnTurnEnd", () => {
  it("pause ends the run as paused; resume asks the model again", async () => {
    const client = new ScriptedClient([textResponse("first"), textResponse("second")])
    const worker = Worker.create({ client })
    let pauses = 1
    worker.addHook("OnTurnEnd", () => (pauses-- > 0 ? OnTurnEnd.pause("review") : OnTurnEnd.finish()))
    const first = await worker.run("hi")
    expect(first).toMatchObject({ status: "paused", pauseReason: "review" })
    const second = await worker.resume()
    expect(second.status).toBe("finished")
    expect(second.items).toEqual([Item.assistantText("second")])
  })
})

describe("hook machinery", () => {
  it("accepts Effect-returning hooks", async () => {
    const client = new ScriptedClient([textResponse("ok")])
    const worker = Worker.create({ client })
    worker.addHook("OnPromptSubmit", () => Effect.succeed(OnPromptSubmit.rewrite(Item.userText("from effect"))))
    await worker.run("x")
    expect(client.requests[0]?.items).toEqual([Item.userText("from effect")])
  })

  it("a throwing, rejecting or failing hook ends the run with HookFailed and OnAbort fires", async () => {
    const variants = [
      () => {
        throw new Error("sync boom")
      },
      async () => {
        throw new Error("async boom")
      },
      () => Effect.fail("effect boom")
    ]
    for (const hook of variants) {
      const worker = Worker.create({ client: new ScriptedClient([textResponse("ok")]) })
      const aborts: Array<string> = []
      worker.addHook("PreLlmRequest", hook)
      worker.addHook("OnAbort", ({ error }) => void aborts.push(error._tag))
      const error = await worker.run("x").catch((e: unknown) => e)
      expect(error).toBeInstanceOf(HookFailed)
      expect((error as HookFailed).message).toMatch(/boom/)
      expect(aborts).toEqual(["HookFailed"])
    }
  })

  it("a result of the wrong hook point (plain JS) is a HookFailed, not silently accepted", async () => {
    const worker = Worker.create({ client: oneCall() })
    worker.registerTool(echoDefinition())
    worker.addHook("PostToolCall", (() => PreToolCall.skip("x")) as never)
    await expect(worker.run("go")).rejects.toMatchObject({ _tag: "HookFailed", point: "PostToolCall" })
    // The failing post hook still left a result for the call.
    expect(outputsOf(worker.history())).toHaveLength(1)
  })

  it("removing a hook stops it from running", async () => {
    const worker = Worker.create({ client: new ScriptedClient([textResponse("ok")]) })
    const remove = worker.addHook("PreLlmRequest", () => PreLlmRequest.cancel("x"))
    remove()
    await expect(worker.run("x")).resolves.toMatchObject({ status: "finished" })
  })
})
