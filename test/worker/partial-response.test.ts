import { describe, expect, it } from "vitest"
import type { Event } from "../../src/llm/event.ts"
import { Item } from "../../src/llm/item.ts"
import { LlmProviderError } from "../../src/llm/llm-error.ts"
import { Worker } from "../../src/worker/worker.ts"
import { Cancelled, ClientFailed, HookAborted } from "../../src/worker/worker-error.ts"
import { ScriptedClient } from "./support/scripted-client.ts"

/** Reasoning, then answer text cut off mid-stream, with the usage the provider sent before giving up. */
const cutOff: ReadonlyArray<Event> = [
  { type: "status", status: "started" },
  { type: "block_start", index: 0, block: { kind: "thinking" } },
  { type: "block_delta", index: 0, delta: { kind: "thinking", text: "Plan: greet" } },
  { type: "block_stop", index: 0 },
  { type: "block_start", index: 1, block: { kind: "text" } },
  { type: "block_delta", index: 1, delta: { kind: "text", text: "Hello, wor" } },
  { type: "usage", inputTokens: 20, outputTokens: 9, totalTokens: 29, reasoningTokens: 4, raw: { prompt_tokens: 20, extra: "kept" } }
]

describe("the partial output of a response that did not complete", () => {
  it("rides on ClientFailed: text, reasoning and usage so far, none of it in history", async () => {
    const fail = new LlmProviderError({ code: "overloaded", message: "overloaded" })
    const worker = Worker.create({ client: new ScriptedClient([{ events: cutOff, fail }]) })
    const error = await worker.run("hi").catch((e: unknown) => e)
    expect(error).toBeInstanceOf(ClientFailed)
    expect((error as ClientFailed).error).toBe(fail)
    expect((error as ClientFailed).partial).toEqual({
      text: "Hello, wor",
      reasoning: "Plan: greet",
      usage: { inputTokens: 20, outputTokens: 9, totalTokens: 29, reasoningTokens: 4 },
      rawUsage: { prompt_tokens: 20, extra: "kept" }
    })
    expect(worker.history()).toEqual([Item.userText("hi")])
  })

  it("rides on Cancelled when the run is cancelled mid-stream", async () => {
    const worker = Worker.create({ client: new ScriptedClient([{ events: cutOff, stallAfter: cutOff.length }]) })
    worker.subscribe({
      onUsage: () => {
        setTimeout(() => worker.cancel(), 0)
      }
    })
    const error = await worker.run("hi").catch((e: unknown) => e)
    expect(error).toBeInstanceOf(Cancelled)
    expect((error as Cancelled).partial?.text).toBe("Hello, wor")
    expect((error as Cancelled).partial?.reasoning).toBe("Plan: greet")
    expect((error as Cancelled).partial?.usage.outputTokens).toBe(9)
  })

  it("rides on HookAborted when a stream hook aborts the response", async () => {
    const worker = Worker.create({ client: new ScriptedClient([{ events: cutOff }]) })
    worker.addHook("OnTextDelta", () => ({ _tag: "Abort", reason: "enough" }) as const)
    const error = await worker.run("hi").catch((e: unknown) => e)
    expect(error).toBeInstanceOf(HookAborted)
    expect((error as HookAborted).partial?.text).toBe("Hello, wor")
  })

  it("is absent on a Cancelled that came before any response", async () => {
    const controller = new AbortController()
    controller.abort()
    const worker = Worker.create({ client: new ScriptedClient([{ events: cutOff }]) })
    const error = await worker.run("hi", { signal: controller.signal }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(Cancelled)
    expect((error as Cancelled).partial).toBeUndefined()
  })
})

describe("usage across a run", () => {
  it("sums the responses' counts, keeps the sum rule, and hands raw usage per response to subscribers", async () => {
    const response = (input: number, output: number, raw: Record<string, number>): { events: ReadonlyArray<Event> } => ({
      events: [
        { type: "status", status: "started" },
        { type: "block_start", index: 0, block: { kind: "tool_use", id: `c${input}`, name: "missing" } },
        { type: "block_delta", index: 0, delta: { kind: "input_json", json: "{}" } },
        { type: "block_stop", index: 0, stopReason: "tool_use" },
        { type: "usage", inputTokens: input, outputTokens: output, totalTokens: input + output, reasoningTokens: 1, raw },
        { type: "status", status: "completed", stopReason: "tool_use" }
      ]
    })
    const last: { events: ReadonlyArray<Event> } = {
      events: [
        { type: "status", status: "started" },
        { type: "usage", inputTokens: 7 },
        { type: "status", status: "completed", stopReason: "end_turn" }
      ]
    }
    const worker = Worker.create({ client: new ScriptedClient([response(10, 2, { a: 1 }), response(20, 3, { b: 2 }), last]) })
    const raws: Array<unknown> = []
    const completes: Array<unknown> = []
    worker.subscribe({ onUsage: (event) => raws.push(event.raw) })
    worker.addHook("OnStreamComplete", (input) => {
      completes.push(input.rawUsage)
    })
    const result = await worker.run("go")
    expect(result.usage).toEqual({ inputTokens: 37, outputTokens: 5, totalTokens: 42, reasoningTokens: 2 })
    expect(raws).toEqual([{ a: 1 }, { b: 2 }, undefined])
    expect(completes).toEqual([{ a: 1 }, { b: 2 }, undefined])
  })
})
