import { describe, expect, it } from "vitest"
import type { Item } from "../../src/llm/item.ts"
import { ToolMeta } from "../../src/tool/tool-meta.ts"
import { Worker } from "../../src/worker/worker.ts"
import { ScriptedClient, textResponse, toolCallResponse } from "./support/scripted-client.ts"
import { EchoTool, echoDefinition } from "./support/tools.ts"

const outputs = (items: ReadonlyArray<Item>) => items.flatMap((i) => (i.type === "function_call_output" ? [i] : []))

/** ≈10 KiB of nested arrays inside an object: enough to overflow any recursive walker. */
const deep = (levels: number) => `{"v":${"[".repeat(levels)}${"]".repeat(levels)}}`

describe("arguments nested too deep", () => {
  it("get an error result for that call; the run finishes and the next run does not replay the call", async () => {
    const echo = new EchoTool()
    const client = new ScriptedClient([
      toolCallResponse([{ id: "deep", name: "echo", args: deep(5000) }, { id: "fine", name: "echo", args: '{"v":"ok"}' }]),
      textResponse("noted"),
      textResponse("second run")
    ])
    const worker = Worker.create({ client })
    worker.registerTool(echoDefinition("echo", echo))
    const result = await worker.run("go")
    expect(result.status).toBe("finished")
    const [tooDeep, fine] = outputs(result.items)
    expect(tooDeep).toMatchObject({ callId: "deep", isError: true })
    expect(tooDeep?.output).toBe('Invalid arguments for tool "echo": arguments nested deeper than 64 levels')
    expect(fine).toMatchObject({ callId: "fine", isError: false })
    expect(echo.calls).toEqual(['{"v":"ok"}'])
    const again = await worker.run("again")
    expect(again.status).toBe("finished")
    expect(outputs(again.items)).toEqual([])
  })

  it("survive the OpenAI strict-mode restore path too", async () => {
    const client = new ScriptedClient([toolCallResponse([{ id: "deep", name: "strict", args: deep(5000) }]), textResponse("ok")], "openai-chat")
    const worker = Worker.create({ client })
    worker.registerTool(() => [
      ToolMeta.make("strict").inputSchema({ type: "object", properties: { v: { type: "array" } }, required: ["v"], additionalProperties: false }),
      { execute: async () => "ran" }
    ])
    const result = await worker.run("go")
    expect(outputs(result.items)[0]?.output).toContain("arguments nested deeper than 64 levels")
  })

  it("the bound is configurable (maxArgumentDepth)", async () => {
    const script = () => new ScriptedClient([toolCallResponse([{ id: "c", name: "echo", args: deep(4) }]), textResponse("ok")])
    const strict = Worker.create({ client: script(), maxArgumentDepth: 4 })
    strict.registerTool(echoDefinition())
    expect(outputs((await strict.run("go")).items)[0]?.output).toContain("nested deeper than 4 levels")
    const roomy = Worker.create({ client: script(), maxArgumentDepth: 5 })
    roomy.registerTool(echoDefinition())
    expect(outputs((await roomy.run("go")).items)[0]?.isError).toBe(false)
    expect(() => Worker.create({ client: script(), maxArgumentDepth: 0 })).toThrow(RangeError)
  })
})

describe("a tool that answers with a hostile value", () => {
  const revoked = (() => {
    const { proxy, revoke } = Proxy.revocable({}, {})
    revoke()
    return proxy
  })()
  const hostile: ReadonlyArray<readonly [string, () => unknown]> = [
    ["a revoked Proxy", () => revoked],
    ["an object whose message getter throws", () => ({ get message(): string { throw new Error("no") }, toString() { throw new Error("no") } })],
    ["a symbol", () => Symbol("s")],
    ["null", () => null]
  ]
  // Rejections with such values are described inside the tool server (hardened and tested with the tool layer).
  it.each(hostile)("gets an error result when it resolves to something whose String() throws (%s)", async (_, make) => {
    const client = new ScriptedClient([toolCallResponse([{ id: "c", name: "bad", args: "{}" }]), textResponse("ok")])
    const worker = Worker.create({ client })
    worker.registerTool(() => [ToolMeta.make("bad"), { execute: async () => make() as string }])
    const result = await worker.run("go")
    expect(result.status).toBe("finished")
    expect(outputs(result.items)).toHaveLength(1)
  })
})
