import fc from "fast-check"
import { describe, expect, it } from "vitest"
import type { LlmClient, StreamOptions } from "../../src/llm/client.ts"
import type { Event } from "../../src/llm/event.ts"
import type { Item } from "../../src/llm/item.ts"
import { LlmCancelled } from "../../src/llm/llm-error.ts"
import type { Request } from "../../src/llm/request.ts"
import { ToolMeta } from "../../src/tool/tool-meta.ts"
import { Worker } from "../../src/worker/worker.ts"
import { Cancelled } from "../../src/worker/worker-error.ts"
import { textResponse, toolCallResponse } from "./support/scripted-client.ts"
import { collectUnhandledRejections } from "../support/unhandled-rejections.ts"

/**
 * Cancellation at arbitrary points, deterministically: every stream event, tool completion and hook step is a
 * step released by fast-check's scheduler (in an order it picks), and the cancel fires right after the k-th
 * step, k generated — before the request, mid-stream, between tool completions in any order, inside a hook, or
 * never (k past the end of the run). No timers: the scheduler alone decides, and the seed makes it reproducible.
 */

/** The scheduler's steps, counted; `onStep` runs after each one (the cancel hooks in here). */
class Steps {
  count = 0
  onStep: (count: number) => void = () => undefined
  constructor(private readonly s: fc.Scheduler) {}
  next(label: string): Promise<void> {
    return this.s.schedule(Promise.resolve(), label).then(() => this.onStep(++this.count))
  }
}

type Behaviour = "ok" | "fail" | "ignores-signal"

/** A client whose every event is released by the scheduler; calls tools until it sees results, then answers. */
class ScheduledClient implements LlmClient {
  readonly provider = "scheduled"
  readonly model = "scheduled-model"
  readonly scheme = "anthropic" as const
  constructor(private readonly steps: Steps, private readonly behaviours: ReadonlyArray<Behaviour>) {}

  encodeRequest(request: Request): string {
    return JSON.stringify({ tools: request.tools, items: request.items })
  }

  validate(): ReadonlyArray<never> {
    return []
  }

  stream(request: Request, options?: StreamOptions): AsyncIterable<Event> {
    const last = request.items.at(-1)
    const response =
      last?.type === "function_call_output"
        ? textResponse("done")
        // The same ids on every run: reused ids must not confuse pairing either.
        : toolCallResponse(this.behaviours.map((b, i) => ({ id: `call_${i}`, name: `tool_${b}`, args: `{"i":${i}}` })))
    const steps = this.steps
    const signal = options?.signal
    return (async function* () {
      for (const event of response.events) {
        await steps.next("event")
        if (signal?.aborted === true) throw new LlmCancelled({ message: "cancelled" })
        yield event
      }
    })()
  }
}

const toolsFor = (steps: Steps) =>
  (["ok", "fail", "ignores-signal"] as const).map((behaviour) => () => [
    ToolMeta.make(`tool_${behaviour}`).inputSchema({ type: "object", properties: { i: { type: "number" } } }),
    {
      execute: async (_args: string, context: { readonly signal: AbortSignal }) => {
        const done = steps.next(`tool ${behaviour}`)
        if (behaviour === "ignores-signal") {
          await done
          return "finished anyway"
        }
        await Promise.race([done, new Promise((_, reject) => context.signal.addEventListener("abort", () => reject(new Error("aborted")), { once: true }))])
        if (behaviour === "fail") throw new Error("tool failed")
        return "ok"
      }
    }
  ] as const)

/** Every call has exactly one result, and every result answers a call. */
const pairedOnce = (history: ReadonlyArray<Item>): boolean => {
  const calls = history.flatMap((i) => (i.type === "function_call" ? [i.callId] : []))
  const results = history.flatMap((i) => (i.type === "function_call_output" ? [i.callId] : []))
  return new Set(calls).size === calls.length && results.length === calls.length && results.every((id) => calls.includes(id))
}

const unhandled = collectUnhandledRejections()

describe("cancellation races (seeded property)", () => {
  it("a run cancelled anywhere settles with Cancelled or a result, answers every call once, and the worker is reusable", async () => {
    const outcomes = new Set<string>()
    await fc.assert(
      fc.asyncProperty(
        fc.scheduler(),
        fc.array(fc.constantFrom<Behaviour>("ok", "fail", "ignores-signal"), { minLength: 1, maxLength: 4 }),
        fc.constantFrom("cancel()", "signal", "hook"),
        fc.boolean(),
        fc.nat({ max: 30 }),
        async (s, behaviours, how, withHook, cancelAfter) => {
          const steps = new Steps(s)
          const worker = Worker.create({ client: new ScheduledClient(steps, behaviours), maxParallelTools: 2 })
          worker.registerTools(toolsFor(steps))
          if (withHook) worker.addHook("PreToolCall", async () => void (await steps.next("hook")))
          const controller = new AbortController()
          const cancel = () => (how === "signal" ? controller.abort() : worker.cancel())
          if (cancelAfter === 0) cancel()
          steps.onStep = (count) => {
            if (count === cancelAfter) cancel()
          }
          const running = worker
            .run("go", how === "signal" ? { signal: controller.signal } : undefined)
            .then((result) => ({ result }), (error: unknown) => ({ error }))
          const settled = await s.waitFor(running)
          steps.onStep = () => undefined
          await s.waitIdle()
          outcomes.add("error" in settled ? "cancelled" : "finished")

          if ("error" in settled) expect(settled.error).toBeInstanceOf(Cancelled)
          else expect(settled.result.status).toBe("finished")
          expect(pairedOnce(worker.history())).toBe(true)

          // Reusable: a later run is not touched by the earlier cancel and finishes.
          const again = await s.waitFor(worker.run("again"))
          await s.waitIdle()
          expect(again.status).toBe("finished")
          expect(pairedOnce(worker.history())).toBe(true)
        }
      ),
      { numRuns: 1000, seed: 20_250_707, endOnFailure: true }
    )
    await new Promise((resolve) => setImmediate(resolve))
    expect(unhandled).toEqual([])
    // The schedules really did cover both ends.
    expect([...outcomes].sort()).toEqual(["cancelled", "finished"])
  }, 60_000)
})
