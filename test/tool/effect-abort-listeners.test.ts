import { getEventListeners } from "node:events"
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { defineTool } from "../../src/tool/define-tool.ts"
import { fromEffect } from "../../src/tool/tool-constructors.ts"
import { ToolMeta } from "../../src/tool/tool-meta.ts"
import { registerDefinitions } from "../../src/tool-server/registration.ts"
import { ToolServer } from "../../src/tool-server/tool-server.ts"

const collectWarnings = (): { readonly warnings: Array<string>; readonly stop: () => void } => {
  const warnings: Array<string> = []
  const listener = (warning: Error): void => void warnings.push(`${warning.name}: ${warning.message}`)
  process.on("warning", listener)
  return { warnings, stop: () => process.off("warning", listener) }
}

describe("Effect-written tools share one abort watcher per signal", () => {
  const handle = new ToolServer().handle()
  registerDefinitions(handle, [
    defineTool({ name: "sleepy", description: "", execute: () => Effect.as(Effect.sleep("20 millis"), "slept") }),
    () => [ToolMeta.make("raw_effect"), fromEffect(() => Effect.as(Effect.sleep("20 millis"), "raw"))],
    defineTool({ name: "forever", description: "", execute: () => Effect.never })
  ])

  it("100 parallel calls on one signal: no MaxListenersExceeded warning, at most one listener, released work", async () => {
    const { warnings, stop } = collectWarnings()
    const signal = new AbortController().signal
    const calls = Array.from({ length: 100 }, (_, i) => handle.callTool(i % 2 === 0 ? "sleepy" : "raw_effect", "{}", { signal }))
    expect(getEventListeners(signal, "abort").length).toBeLessThanOrEqual(1)
    const outputs = await Promise.all(calls)
    expect(outputs.filter((o) => o === "slept")).toHaveLength(50)
    // After the calls: the one shared listener at most, and nothing of the calls left on it.
    expect(getEventListeners(signal, "abort").length).toBeLessThanOrEqual(1)
    await new Promise((resolve) => setTimeout(resolve, 10))
    stop()
    expect(warnings.filter((w) => w.includes("MaxListeners"))).toEqual([])
  })

  it("aborting the shared signal interrupts every running fiber", async () => {
    const controller = new AbortController()
    const calls = Array.from({ length: 100 }, () => handle.callTool("forever", "{}", { signal: controller.signal }).catch((e: { _tag: string }) => e._tag))
    setTimeout(() => controller.abort(), 10)
    expect(new Set(await Promise.all(calls))).toEqual(new Set(["ToolCancelled"]))
  })
})
