import { describe, expect, it } from "vitest"
import { defineTool } from "../../src/tool/define-tool.ts"
import { PostToolCall } from "../../src/worker/hooks.ts"
import { Worker } from "../../src/worker/worker.ts"
import { ScriptedClient, textResponse, toolCallResponse } from "../worker/support/scripted-client.ts"

const bytes = (text: string): number => Buffer.byteLength(text, "utf8")

const outputsOf = (items: ReadonlyArray<{ readonly type: string }>): Array<string> =>
  items.flatMap((item) => (item.type === "function_call_output" ? [(item as unknown as { output: string }).output] : []))

describe("tool output limits in the Worker", () => {
  const big = defineTool({ name: "big", description: "", execute: () => "b".repeat(500_000) })
  const capped = defineTool({ name: "capped", description: "", maxOutputBytes: 300, execute: () => "c".repeat(10_000) })
  const failing = defineTool({
    name: "failing",
    description: "",
    execute: () => {
      throw new Error("f".repeat(5 * 1024 * 1024))
    }
  })
  const script = (): ScriptedClient =>
    new ScriptedClient([
      toolCallResponse([
        { id: "c1", name: "big", args: "{}" },
        { id: "c2", name: "capped", args: "{}" },
        { id: "c3", name: "failing", args: "{}" }
      ]),
      textResponse("done")
    ])

  it("caps outputs and error texts at the Worker's default, a tool's own cap winning", async () => {
    const worker = Worker.create({ client: script(), maxToolOutputBytes: 4096 })
    worker.registerTools([big, capped, failing])
    const result = await worker.run("go")
    const [b, c, f] = outputsOf(result.items)
    expect(bytes(b ?? "")).toBeLessThanOrEqual(4096)
    expect(b).toMatch(/output truncated: \d+ of 500000 bytes dropped\]$/)
    expect(bytes(c ?? "")).toBeLessThanOrEqual(300)
    expect(bytes(f ?? "")).toBeLessThanOrEqual(4096)
    expect(f).toMatch(/output truncated/)
  })

  it("defaults to 100 KiB and caps what PostToolCall hooks make of a result", async () => {
    const worker = Worker.create({ client: script() })
    worker.registerTools([big, capped, failing])
    worker.addHook("PostToolCall", ({ result }) => PostToolCall.rewriteResult(`${result.output}${"h".repeat(200_000)}`))
    const result = await worker.run("go")
    for (const output of outputsOf(result.items)) expect(bytes(output)).toBeLessThanOrEqual(100 * 1024)
    expect(bytes(outputsOf(result.items)[1] ?? "")).toBeLessThanOrEqual(300)
  })

  it("refuses a cap that cannot hold the marker", () => {
    expect(() => Worker.create({ client: script(), maxToolOutputBytes: 10 })).toThrow(RangeError)
  })
})
