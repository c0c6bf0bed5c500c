import { describe, expect, it } from "vitest"
import { jsonSchema } from "../../src/schema/codec.ts"
import { defineTool } from "../../src/tool/define-tool.ts"
import { observeOutput, outputObserver } from "../../src/tool/output-observer.ts"
import type { ToolContext } from "../../src/tool/tool.ts"
import { ToolMeta } from "../../src/tool/tool-meta.ts"
import { registerDefinitions } from "../../src/tool-server/registration.ts"
import { ToolServer, callToolParsed } from "../../src/tool-server/tool-server.ts"

// One module instance per test file: this file starts with no call observed yet, the state every program has until
// its first typed PostToolCall hook (the lookup is skipped until then, decision 0086).
const context = (callId: string): ToolContext => ({ callId, signal: new AbortController().signal, meta: ToolMeta.make("t") })

describe("the output observer of a typed call", () => {
  it("is found for the observed call only, once calls went unobserved before the first observer", async () => {
    const handle = new ToolServer().handle()
    registerDefinitions(handle, [
      defineTool({
        name: "double",
        description: "doubles",
        parameters: jsonSchema<{ n: number }>({ type: "object", properties: { n: { type: "number" } }, required: ["n"] }),
        execute: ({ n }) => ({ doubled: n * 2 })
      })
    ])
    const before = context("before")
    expect(outputObserver(before)).toBeUndefined()
    expect(await handle.callTool("double", '{"n":1}')).toBe('{"doubled":2}')

    const seen: Array<unknown> = []
    const output = await callToolParsed(handle, "double", '{"n":2}', { observeOutput: (value) => void seen.push(value) })
    expect(output).toBe('{"doubled":4}')
    expect(seen).toEqual([{ doubled: 4 }])

    // Later calls without an observer still see none, and the first context never got one.
    expect(await handle.callTool("double", '{"n":3}', { signal: new AbortController().signal })).toBe('{"doubled":6}')
    expect(seen).toHaveLength(1)
    expect(outputObserver(before)).toBeUndefined()
    const observed = context("observed")
    const observer = (): void => undefined
    observeOutput(observed, observer)
    expect(outputObserver(observed)).toBe(observer)
    expect(outputObserver(context("other"))).toBeUndefined()
  })
})
