import { ToolMeta } from "../../src/tool/tool-meta.ts"
import { describe, expect, it } from "vitest"
import { Item } from "../../src/llm/item.ts"
import { LlmHttpError } from "../../src/llm/llm-error.ts"
import { OnTurnEnd } from "../../src/worker/hooks.ts"
import { Worker } from "../../src/worker/worker.ts"
import { ClientFailed, MaxTurnsExceeded } from "../../src/worker/worker-error.ts"
import { ScriptedClient, textResponse, toolCallResponse } from "./support/scripted-client.ts"
import { EchoTool, echoDefinition, slowDefinition, strictNumberDefinition } from "./support/tools.ts"

/** Every function_call in a request is answered by exactly one output, and answers follow their calls. */
const assertPaired = (items: ReadonlyArray<Item>): void => {
  const open = new Set<string>()
  const answered = new Set<string>()
  for (const item of items) {
    if (item.type === "function_call") open.add(item.callId)
    if (item.type === "function_call_output") {
      expect(open.has(item.callId)).toBe(true)
      expect(answered.has(item.callId)).toBe(false)
      answered.add(item.callId)
    }
  }
  expect([...open].filter((id) => !answered.has(id))).toEqual([])
}

describe("the turn loop", () => {
  it("finishes on a text answer and reports items and usage", async () => {
    const client = new ScriptedClient([textResponse("Hello there", { inputTokens: 10, outputTokens: 3 })])
    const worker = Worker.create({ client, systemPrompt: "be brief" })
    const result = await worker.run("hi")
    expect(result.status).toBe("finished")
    expect(result.items).toEqual([Item.userText("hi"), Item.assistantText("Hello there")])
    expect(result.usage).toEqual({ inputTokens: 10, outputTokens: 3, totalTokens: 13 })
    expect(client.requests[0]?.systemPrompt).toBe("be brief")
    expect(worker.history()).toEqual(result.items)
  })

  it("runs tool calls, appends outputs in model order and asks the model again", async () => {
    const log: Array<string> = []
    const client = new ScriptedClient([
      toolCallResponse([
        { id: "c1", name: "slow", args: "{}" },
        { id: "c2", name: "fast", args: "{}" }
      ]),
      textResponse("done")
    ])
    const worker = Worker.create({ client })
    worker.registerTools([slowDefinition("slow", 40, false, log), slowDefinition("fast", 5, false, log)])
    const result = await worker.run("go")
    expect(result.status).toBe("finished")
    // Parallel: both started before either ended; the fast one ended first, yet outputs stay in model order.
    expect(log).toEqual(["start:slow", "start:fast", "end:fast", "end:slow"])
    const outputs = result.items.filter((i) => i.type === "function_call_output")
    expect(outputs.map((o) => o.callId)).toEqual(["c1", "c2"])
    expect(outputs.map((o) => o.output)).toEqual(["slow done", "fast done"])
    const second = client.requests[1]
    expect(second?.items.map((i) => i.type)).toEqual(["message", "function_call", "function_call", "function_call_output", "function_call_output"])
    assertPaired(second?.items ?? [])
  })

  it("answers a call to an unknown tool with an error result, without running anything", async () => {
    const echo = new EchoTool()
    const client = new ScriptedClient([toolCallResponse([{ id: "c1", name: "nope", args: "{}" }]), textResponse("ok")])
    const worker = Worker.create({ client })
    worker.registerTool(echoDefinition("echo", echo))
    const result = await worker.run("go")
    const output = result.items.find((i) => i.type === "function_call_output")
    expect(output).toMatchObject({ callId: "c1", isError: true })
    expect(output?.type === "function_call_output" && output.output).toContain('Unknown tool "nope"')
    expect(echo.calls).toEqual([])
    assertPaired(client.requests[1]?.items ?? [])
  })

  it("sends the tool's InvalidArgument message back, and rejects non-object or malformed arguments", async () => {
    const client = new ScriptedClient([
      toolCallResponse([
        { id: "a", name: "square", args: '{"n":"x"}' },
        { id: "b", name: "square", args: "[1]" },
        { id: "c", name: "square", args: '{"n":' },
        { id: "d", name: "square", args: '{"n":4}' }
      ]),
      textResponse("ok")
    ])
    const worker = Worker.create({ client })
    worker.registerTool(strictNumberDefinition)
    const result = await worker.run("go")
    const outputs = result.items.flatMap((i) => (i.type === "function_call_output" ? [[i.output, i.isError] as const] : []))
    expect(outputs[0]).toEqual(["n: expected a number", true])
    expect(outputs[1]?.[0]).toMatch(/must be a JSON object, got an array/)
    expect(outputs[2]?.[0]).toMatch(/not valid JSON/)
    expect(outputs[3]).toEqual(["16", false])
  })

  it("times a slow tool out with a timeout result, and the run goes on", async () => {
    const client = new ScriptedClient([toolCallResponse([{ id: "t", name: "slow", args: "{}" }]), textResponse("ok")])
    const worker = Worker.create({ client, toolTimeouts: { slow: 20 } })
    worker.registerTool(slowDefinition("slow", 5_000, true))
    const results: Array<string> = []
    worker.subscribe({ onToolResult: (e) => results.push(e.outcome.status) })
    const started = Date.now()
    const result = await worker.run("go")
    expect(Date.now() - started).toBeLessThan(2_000)
    expect(results).toEqual(["timeout"])
    expect(result.items.find((i) => i.type === "function_call_output")).toMatchObject({ isError: true })
  })

  it("fails with MaxTurnsExceeded when the model never stops calling tools", async () => {
    const client = new ScriptedClient([(_r, n) => toolCallResponse([{ id: `c${n}`, name: "echo", args: "{}" }])])
    const worker = Worker.create({ client, maxTurns: 3 })
    worker.registerTool(echoDefinition())
    const aborts: Array<string> = []
    worker.addHook("OnAbort", (input) => {
      aborts.push(input.error._tag)
    })
    await expect(worker.run("loop")).rejects.toBeInstanceOf(MaxTurnsExceeded)
    expect(client.requests).toHaveLength(3)
    expect(aborts).toEqual(["MaxTurnsExceeded"])
    assertPaired(worker.history())
  })

  it("loops again with OnTurnEnd continueWith (self-correction) and finishes once satisfied", async () => {
    const client = new ScriptedClient([textResponse("not json"), textResponse('{"ok":true}')])
    const worker = Worker.create({ client })
    worker.addHook("OnTurnEnd", ({ history }) => {
      const last = history[history.length - 1]
      const text = last?.type === "message" ? last.content.map((p) => ("text" in p ? p.text : "")).join("") : ""
      try {
        JSON.parse(text)
        return OnTurnEnd.finish()
      } catch {
        return OnTurnEnd.continueWith([Item.userText("invalid JSON, fix it")])
      }
    })
    const result = await worker.run("give json")
    expect(result.status).toBe("finished")
    expect(client.requests).toHaveLength(2)
    expect(client.requests[1]?.items.at(-1)).toEqual(Item.userText("invalid JSON, fix it"))
    expect(result.items.at(-1)).toEqual(Item.assistantText('{"ok":true}'))
  })

  it("maps a client failure to ClientFailed, fires OnAbort with its message, and keeps nothing of the response", async () => {
    const fail = new LlmHttpError({ status: 500, body: "boom", message: "HTTP 500" })
    const client = new ScriptedClient([{ ...textResponse("partial"), fail }])
    const worker = Worker.create({ client })
    const reasons: Array<string> = []
    worker.addHook("OnAbort", ({ reason }) => {
      reasons.push(reason)
    })
    const error = await worker.run("hi").catch((e: unknown) => e)
    expect(error).toBeInstanceOf(ClientFailed)
    expect((error as ClientFailed).error).toBe(fail)
    expect(reasons).toEqual(["HTTP 500"])
    expect(worker.history()).toEqual([Item.userText("hi")])
  })

  it("restores OpenAI strict nulls to absent optional properties before the tool runs", async () => {
    const echo = new EchoTool()
    const client = new ScriptedClient(
      [toolCallResponse([{ id: "c", name: "echo", args: '{"v":null}' }]), textResponse("ok")],
      "openai-chat"
    )
    const worker = Worker.create({ client })
    // A closed object can be sent in strict mode, so its optional `v` arrives as null and is restored to absent.
    worker.registerTool(() => [
      ToolMeta.make("echo").inputSchema({ type: "object", properties: { v: { type: "string" } }, additionalProperties: false }),
      echo
    ])
    await worker.run("go")
    expect(echo.calls).toEqual(["{}"])
  })
})
