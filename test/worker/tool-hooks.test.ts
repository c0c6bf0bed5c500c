import { Effect } from "effect"
import { describe, expect, expectTypeOf, it } from "vitest"
import { z } from "zod"
import {
  type Item,
  type MutableWorker,
  HookAborted,
  HookFailed,
  PostToolCall,
  PreToolCall,
  ToolHook,
  Worker,
  defineTool,
  toolFailure
} from "../../src/index.ts"
import { ScriptedClient, textResponse, toolCallResponse } from "./support/scripted-client.ts"

const weather = defineTool({
  name: "get_weather",
  description: "Weather forecast for a city",
  parameters: z.object({ city: z.string(), days: z.int().min(1).max(14).optional() }),
  execute: ({ city, days }) => ({ city, days: days ?? 1, forecast: "sunny" as const })
})

const clock = defineTool({
  name: "clock",
  description: "The time",
  execute: () => "12:00"
})

const call = (args: string, name = "get_weather", id = "c1") => new ScriptedClient([toolCallResponse([{ id, name, args }]), textResponse("done")])

const outputs = (items: ReadonlyArray<Item>) => items.flatMap((i) => (i.type === "function_call_output" ? [i.output] : []))

const workerWith = (client: ScriptedClient): MutableWorker => {
  const worker = Worker.create({ client })
  worker.registerTools([weather, clock])
  return worker
}

describe("typed per-tool hooks", () => {
  it("PreToolCall sees the decoded arguments and rewrites them, typed and checked", async () => {
    const worker = workerWith(call('{"city":"Paris"}'))
    const seen: Array<unknown> = []
    worker.addToolHook(weather, "PreToolCall", ({ call }) => {
      expectTypeOf(call.arguments).toEqualTypeOf<{ city: string; days?: number | undefined }>()
      seen.push(call.arguments)
      return ToolHook.rewriteArguments({ ...call.arguments, days: 3 })
    })
    await worker.run("weather?")
    expect(seen).toEqual([{ city: "Paris" }])
    expect(outputs(worker.history())).toEqual(['{"city":"Paris","days":3,"forecast":"sunny"}'])
  })

  it("runs after the plain PreToolCall hooks and sees their rewrite; a plain deny stops it", async () => {
    const worker = workerWith(call('{"city":"Paris"}'))
    const order: Array<string> = []
    worker.addToolHook(weather, "PreToolCall", ({ call }) => void order.push(`typed:${call.arguments.city}`))
    worker.addHook("PreToolCall", ({ call }) => {
      order.push("plain")
      call.arguments = '{"city":"Rome"}'
    })
    await worker.run("weather?")
    expect(order).toEqual(["plain", "typed:Rome"])

    const denied = workerWith(call('{"city":"Paris"}'))
    const typed: Array<string> = []
    denied.addHook("PreToolCall", () => PreToolCall.deny("no weather today"))
    denied.addToolHook(weather, "PreToolCall", () => void typed.push("ran"))
    await denied.run("weather?")
    expect(typed).toEqual([])
    expect(outputs(denied.history())[0]).toContain("no weather today")
  })

  it("a rewrite the schema refuses fails the run with HookFailed naming the tool and the issue", async () => {
    const worker = workerWith(call('{"city":"Paris"}'))
    // The types cannot see a range: `days` is a number, but the schema allows 1 to 14.
    worker.addToolHook(weather, "PreToolCall", ({ call }) => ToolHook.rewriteArguments({ ...call.arguments, days: 99 }))
    const error = await worker.run("weather?").catch((e: unknown) => e)
    expect(error).toBeInstanceOf(HookFailed)
    expect((error as HookFailed).message).toMatch(/^PreToolCall hook for tool "get_weather" rewrote the arguments to a value its schema refuses: .*days/)
    expect(worker.history().filter((i) => i.type === "function_call_output")).toHaveLength(1)
  })

  it("skip, deny and abort from a typed hook act as the plain ones do", async () => {
    const skipped = workerWith(call('{"city":"Paris"}'))
    skipped.addToolHook(weather, "PreToolCall", () => ToolHook.skip("cached"))
    await skipped.run("x")
    expect(outputs(skipped.history())[0]).toContain("cached")

    const aborted = workerWith(call('{"city":"Paris"}'))
    aborted.addToolHook(weather, "PreToolCall", () => Effect.succeed(ToolHook.abort("stop here")))
    await expect(aborted.run("x")).rejects.toBeInstanceOf(HookAborted)
  })

  it("a hook registered for one tool never sees another tool's calls, nor a same-named tool from another definition", async () => {
    const worker = workerWith(call("{}", "clock"))
    const seen: Array<string> = []
    worker.addToolHook(weather, "PreToolCall", () => void seen.push("weather"))
    worker.addToolHook(clock, "PreToolCall", () => void seen.push("clock"))
    await worker.run("time?")
    expect(seen).toEqual(["clock"])

    const lookalike = defineTool({ name: "get_weather", description: "same name", parameters: z.object({ city: z.string() }), execute: () => "x" })
    const other = workerWith(call('{"city":"Paris"}'))
    other.addToolHook(lookalike, "PreToolCall", () => void seen.push("lookalike"))
    await other.run("weather?")
    expect(seen).toEqual(["clock"])
  })

  it("arguments that do not decode reach no typed hook; the tool answers the model", async () => {
    const worker = workerWith(call('{"city":42}'))
    const seen: Array<unknown> = []
    worker.addToolHook(weather, "PreToolCall", ({ call }) => void seen.push(call.arguments))
    await worker.run("x")
    expect(seen).toEqual([])
    expect(outputs(worker.history())[0]).toMatch(/city/)
  })

  it("PostToolCall sees the handler's value before it became text, and rewrites it before the plain hooks", async () => {
    const worker = workerWith(call('{"city":"Paris","days":2}'))
    const order: Array<string> = []
    worker.addToolHook(weather, "PostToolCall", ({ call, output }) => {
      expectTypeOf(output).toEqualTypeOf<{ city: string; days: number; forecast: "sunny" }>()
      order.push(`typed:${output.days}:${call.arguments.city}`)
      return ToolHook.rewriteOutput({ ...output, city: output.city.toUpperCase() })
    })
    worker.addHook("PostToolCall", ({ result }) => {
      order.push(`plain:${result.output}`)
      return PostToolCall.continue()
    })
    await worker.run("x")
    expect(order).toEqual(["typed:2:Paris", 'plain:{"city":"PARIS","days":2,"forecast":"sunny"}'])
    expect(outputs(worker.history())).toEqual(['{"city":"PARIS","days":2,"forecast":"sunny"}'])
  })

  it("a typed PostToolCall rewrite with no JSON form is HookFailed; a typed abort ends the run after the result is kept", async () => {
    const cyclic = workerWith(call('{"city":"Paris"}'))
    cyclic.addToolHook(weather, "PostToolCall", ({ output }) => {
      const loop: Record<string, unknown> = { ...output }
      loop["self"] = loop
      return ToolHook.rewriteOutput(loop as typeof output)
    })
    const error = await cyclic.run("x").catch((e: unknown) => e)
    expect(error).toBeInstanceOf(HookFailed)
    expect((error as HookFailed).message).toMatch(/^PostToolCall hook for tool "get_weather" rewrote the output to a value with no JSON form/)

    const aborted = workerWith(call('{"city":"Paris"}'))
    aborted.addToolHook(weather, "PostToolCall", () => ToolHook.abort("enough"))
    await expect(aborted.run("x")).rejects.toMatchObject({ _tag: "HookAborted", reason: "enough" })
    expect(outputs(aborted.history())).toEqual(['{"city":"Paris","days":1,"forecast":"sunny"}'])
  })

  it("a typed PostToolCall hook does not run for a failed call, and the returned function removes a hook", async () => {
    const failing = defineTool({ name: "fails", description: "d", execute: () => toolFailure("broken") })
    const worker = Worker.create({ client: call("{}", "fails") })
    worker.registerTool(failing)
    const seen: Array<string> = []
    worker.addToolHook(failing, "PostToolCall", () => void seen.push("post"))
    await worker.run("x")
    expect(seen).toEqual([])

    const again = workerWith(call('{"city":"Paris"}'))
    const remove = again.addToolHook(weather, "PreToolCall", () => void seen.push("pre"))
    remove()
    await again.run("x")
    expect(seen).toEqual([])
  })

  it("plain JavaScript gets a TypeError for a wrong point or definition", () => {
    const worker = workerWith(call("{}"))
    const loose = worker.addToolHook.bind(worker) as unknown as (d: unknown, p: unknown, h: unknown) => unknown
    expect(() => loose(weather, "OnTurnEnd", () => undefined)).toThrow(/not a typed hook point/)
    expect(() => loose(() => [], "PreToolCall", () => undefined)).toThrow(/made by defineTool/)
  })
})

// Compile-time pins: each @ts-expect-error must stay an error, or `tsc --noEmit` fails.
const typeOnly = (worker: MutableWorker): void => {
  // @ts-expect-error city must be a string
  worker.addToolHook(weather, "PreToolCall", () => ToolHook.rewriteArguments({ city: 42 }))
  // @ts-expect-error days must be a number
  worker.addToolHook(weather, "PreToolCall", ({ call }) => ToolHook.rewriteArguments({ ...call.arguments, days: "3" }))
  // @ts-expect-error the output's forecast is "sunny"
  worker.addToolHook(weather, "PostToolCall", ({ output }) => ToolHook.rewriteOutput({ ...output, forecast: 1 }))
  // @ts-expect-error a PostToolCall hook cannot skip
  worker.addToolHook(weather, "PostToolCall", () => ToolHook.skip("no"))
  // @ts-expect-error typed hooks exist for PreToolCall and PostToolCall only
  worker.addToolHook(weather, "OnTurnEnd", () => undefined)
  // @ts-expect-error a PreToolCall hook's arguments are the tool's, not text
  worker.addToolHook(weather, "PreToolCall", ({ call }) => call.arguments.toUpperCase())
  // The legal forms compile.
  worker.addToolHook(weather, "PreToolCall", async ({ call }) => (call.arguments.days === undefined ? ToolHook.rewriteArguments({ city: call.arguments.city, days: 1 }) : undefined))
  worker.addToolHook(clock, "PostToolCall", ({ output }) => ToolHook.rewriteOutput(`${output} UTC`))
}
void typeOnly
