import { describe, expect, it } from "vitest"
import type { Item } from "../../src/llm/item.ts"
import { ToolMeta } from "../../src/tool/tool-meta.ts"
import { ToolServer } from "../../src/tool-server/tool-server.ts"
import { PreLlmRequest } from "../../src/worker/hooks.ts"
import { Worker } from "../../src/worker/worker.ts"
import { ScriptedClient, textResponse, toolCallResponse } from "./support/scripted-client.ts"
import { EchoTool, echoDefinition } from "./support/tools.ts"

const outputs = (items: ReadonlyArray<Item>) => items.flatMap((i) => (i.type === "function_call_output" ? [i] : []))
const manyCalls = (n: number, name = "probe") => Array.from({ length: n }, (_, i) => ({ id: `c${i}`, name, args: `{"i":${i}}` }))

describe("parallel tool calls", () => {
  it("run at most maxParallelTools at once, with results in model order", async () => {
    let inFlight = 0
    let peak = 0
    const client = new ScriptedClient([toolCallResponse(manyCalls(40)), textResponse("ok")])
    const worker = Worker.create({ client, maxParallelTools: 4 })
    worker.registerTool(() => [
      ToolMeta.make("probe"),
      {
        execute: async (args: string) => {
          peak = Math.max(peak, ++inFlight)
          // Later calls finish first, so order comes from the worker, not from completion.
          const i = (JSON.parse(args) as { i: number }).i
          for (let k = 0; k < 40 - i; k++) await Promise.resolve()
          inFlight--
          return `r${i}`
        }
      }
    ])
    const result = await worker.run("go")
    expect(peak).toBe(4)
    expect(outputs(result.items).map((o) => o.output)).toEqual(Array.from({ length: 40 }, (_, i) => `r${i}`))
  })

  it("default to 16 at once", async () => {
    let inFlight = 0
    let peak = 0
    const client = new ScriptedClient([toolCallResponse(manyCalls(100)), textResponse("ok")])
    const worker = Worker.create({ client })
    worker.registerTool(() => [
      ToolMeta.make("probe"),
      {
        execute: async () => {
          peak = Math.max(peak, ++inFlight)
          await Promise.resolve()
          inFlight--
          return "r"
        }
      }
    ])
    await worker.run("go")
    expect(peak).toBe(16)
  })
})

describe("calls per response", () => {
  it("past maxCallsPerResponse get an error result without running, and a warning is reported", async () => {
    const echo = new EchoTool()
    const client = new ScriptedClient([toolCallResponse(manyCalls(10, "echo")), textResponse("ok")])
    const worker = Worker.create({ client, maxCallsPerResponse: 3 })
    worker.registerTool(echoDefinition("echo", echo))
    const warnings: Array<string> = []
    worker.subscribe({ onWarning: (e) => void warnings.push(e.message) })
    const result = await worker.run("go")
    expect(echo.calls).toHaveLength(3)
    const results = outputs(result.items)
    expect(results).toHaveLength(10)
    expect(results.slice(3).every((o) => o.isError && o.output.includes("at most 3 are executed per response"))).toBe(true)
    expect(warnings.some((w) => w.includes("maxCallsPerResponse"))).toBe(true)
  })

  it("10,000 calls in one response: every call answered, at most 128 executed by default", async () => {
    const echo = new EchoTool()
    const client = new ScriptedClient([toolCallResponse(manyCalls(10_000, "echo")), textResponse("ok")])
    const worker = Worker.create({ client })
    worker.registerTool(echoDefinition("echo", echo))
    const result = await worker.run("go")
    expect(echo.calls).toHaveLength(128)
    expect(outputs(result.items)).toHaveLength(10_000)
  })
})

describe("the tool set of a request", () => {
  it("a tool another worker registers mid-run is not executed: the model was never offered it", async () => {
    const server = new ToolServer()
    const neighbour = Worker.create({ client: new ScriptedClient([textResponse("-")]), toolServer: server })
    let ran = false
    const client = new ScriptedClient([
      () => {
        // While this worker's first request is in flight, the other worker registers a tool on the shared server.
        neighbour.registerTool(() => [ToolMeta.make("late"), { execute: async () => ((ran = true), "late ran") }])
        return toolCallResponse([{ id: "c", name: "late", args: "{}" }])
      },
      textResponse("ok")
    ])
    const worker = Worker.create({ client, toolServer: server })
    worker.registerTool(echoDefinition())
    const result = await worker.run("go")
    expect(ran).toBe(false)
    expect(outputs(result.items)[0]?.output).toBe('Unknown tool "late". Available tools: echo')
    // The next request offers it, and a call of it then runs.
    expect(client.requests[1]?.tools.map((t) => t.name)).toEqual(["echo", "late"])
  })

  it("a tool a PreLlmRequest hook removed from the request is not executed", async () => {
    const echo = new EchoTool()
    const client = new ScriptedClient([toolCallResponse([{ id: "c", name: "echo", args: "{}" }]), textResponse("ok")])
    const worker = Worker.create({ client })
    worker.registerTool(echoDefinition("echo", echo))
    worker.addHook("PreLlmRequest", ({ context }) => PreLlmRequest.rewrite({ ...context, tools: [] }))
    const result = await worker.run("go")
    expect(echo.calls).toEqual([])
    expect(outputs(result.items)[0]?.output).toBe('Unknown tool "echo". Available tools: (none)')
  })

  it("the unknown-tool error quotes a short prefix of a 1 MiB name and a bounded list of tools", async () => {
    const name = "n".repeat(1 << 20)
    const client = new ScriptedClient([toolCallResponse([{ id: "c", name, args: "{}" }]), textResponse("ok")])
    const worker = Worker.create({ client })
    worker.registerTools(Array.from({ length: 50 }, (_, i) => echoDefinition(`tool_${String(i).padStart(2, "0")}`)))
    const [result] = outputs((await worker.run("go")).items)
    expect(result?.output.length).toBeLessThan(1000)
    expect(result?.output).toContain("more characters")
    expect(result?.output).toContain("… and 30 more")
  })
})

describe("per-tool deadlines", () => {
  it("are looked up by own key only: a tool named after an Object.prototype member has no deadline of its own", async () => {
    const names = ["constructor", "toString", "valueOf"]
    const client = new ScriptedClient([toolCallResponse(names.map((name, i) => ({ id: `c${i}`, name, args: "{}" }))), textResponse("ok")])
    const worker = Worker.create({ client, toolTimeouts: {} })
    for (const name of names) {
      worker.registerTool(() => [
        ToolMeta.make(name),
        // Settles on a later macrotask: with Object.prototype's function taken for a deadline it timed out first.
        { execute: () => new Promise<string>((resolve) => setTimeout(() => resolve(`${name} answered`), 15)) }
      ])
    }
    const result = await worker.run("go")
    expect(outputs(result.items).map((o) => [o.output, o.isError])).toEqual(names.map((name) => [`${name} answered`, false]))
  })
})
