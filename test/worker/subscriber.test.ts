import { Effect, Fiber, Stream } from "effect"
import { describe, expect, it } from "vitest"
import { Worker } from "../../src/worker/worker.ts"
import type { WorkerEvent } from "../../src/worker/subscriber.ts"
import { ScriptedClient, textResponse, toolCallResponse } from "./support/scripted-client.ts"
import { echoDefinition } from "./support/tools.ts"

const script = () =>
  new ScriptedClient([
    toolCallResponse([{ id: "c1", name: "echo", args: '{"v":"x"}' }], "let me check"),
    textResponse("done", { inputTokens: 5, outputTokens: 1 })
  ])

describe("subscribers", () => {
  it("get turn, block, completion, tool result, usage, status and cache events in order", async () => {
    const worker = Worker.create({ client: script() })
    worker.registerTool(echoDefinition())
    const seen: Array<string> = []
    const texts: Array<string> = []
    const unsubscribe = worker.subscribe({
      onEvent: (e) => seen.push(e.type),
      onText: (t) => texts.push(t),
      onToolCallCompleted: (e) => texts.push(`call:${e.call.name}:${e.call.arguments}`),
      onToolResult: (e) => texts.push(`result:${e.outcome.status}:${e.outcome.output}`),
      onTextCompleted: (e) => texts.push(`text:${e.text}`)
    })
    await worker.run("go")
    expect(seen.slice(0, 4)).toEqual(["status", "cache_report", "turn_start", "block_start"])
    expect(seen).toContain("usage")
    expect(seen.at(-1)).toBe("status")
    expect(texts).toEqual([
      "let me check",
      "text:let me check",
      'call:echo:{"v":"x"}',
      'result:ok:echo:{"v":"x"}',
      "done",
      "text:done"
    ])
    unsubscribe()
    const before = seen.length
    await worker.run("again")
    expect(seen.length).toBe(before)
  })

  it("a block left open by the stream is reported as a warning and left out of history", async () => {
    const worker = Worker.create({
      client: new ScriptedClient([
        {
          events: [
            { type: "block_start", index: 0, block: { kind: "text" } },
            { type: "block_delta", index: 0, delta: { kind: "text", text: "complete" } },
            { type: "block_stop", index: 0 },
            { type: "block_start", index: 1, block: { kind: "tool_use", id: "c", name: "echo" } },
            { type: "block_delta", index: 1, delta: { kind: "input_json", json: '{"v"' } }
          ]
        }
      ])
    })
    worker.registerTool(echoDefinition())
    const warnings: Array<string> = []
    worker.subscribe({ onWarning: (e) => warnings.push(e.message) })
    const result = await worker.run("hi")
    expect(warnings).toEqual(["stream protocol issue: tool_use block 1 was never stopped"])
    expect(result.items.map((i) => i.type)).toEqual(["message", "message"])
  })

  it("a throwing subscriber does not break the run, and the others are told", async () => {
    const worker = Worker.create({ client: new ScriptedClient([textResponse("ok")]) })
    worker.subscribe({
      onEvent: () => {
        throw new Error("ui bug")
      }
    })
    const warnings: Array<string> = []
    worker.subscribe({ onWarning: ({ message }) => warnings.push(message) })
    await expect(worker.run("hi")).resolves.toMatchObject({ status: "finished" })
    expect(warnings.length).toBeGreaterThan(0)
    expect(warnings[0]).toMatch(/a subscriber threw on "status": ui bug/)
  })

  it("as an async iterable", async () => {
    const worker = Worker.create({ client: new ScriptedClient([textResponse("hello")]) })
    const collected: Array<WorkerEvent["type"]> = []
    const reading = (async () => {
      for await (const event of worker.events()) {
        collected.push(event.type)
        if (event.type === "status" && event.status === "finished") break
      }
    })()
    await worker.run("hi")
    await reading
    expect(collected[0]).toBe("status")
    expect(collected).toContain("text_completed")
    expect(collected.at(-1)).toBe("status")
  })

  it("as an Effect Stream", async () => {
    const worker = Worker.create({ client: new ScriptedClient([textResponse("hello")]) })
    const program = Effect.gen(function* () {
      const fiber = yield* Effect.forkChild(
        Stream.runCollect(worker.eventStream().pipe(Stream.takeUntil((e) => e.type === "status" && e.status === "finished")))
      )
      yield* Effect.sleep("5 millis")
      yield* Effect.promise(() => worker.run("hi"))
      return yield* Fiber.join(fiber)
    })
    const events = await Effect.runPromise(program)
    const types = [...events].map((e) => e.type)
    expect(types).toContain("block_delta")
    expect(types.at(-1)).toBe("status")
  })
})

describe("class-based subscribers", () => {
  it("have their methods called with their own `this`", async () => {
    class Transcript {
      text = ""
      finished = 0
      onText(delta: string): void {
        this.text += delta
      }
      onStatus(event: { readonly status: string }): void {
        if (event.status === "finished") this.finished++
      }
    }
    const transcript = new Transcript()
    const worker = Worker.create({ client: new ScriptedClient([textResponse("Hello there")]) })
    worker.subscribe(transcript)
    await worker.run("hi")
    expect(transcript.text).toBe("Hello there")
    expect(transcript.finished).toBe(1)
  })
})
