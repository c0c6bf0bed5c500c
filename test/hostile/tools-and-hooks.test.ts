/**
 * Hostile tools, hooks and subscribers, end to end over real loopback HTTP (`Worker.create` + `registerTool` +
 * `run`): they reject with values that cannot be described, return or throw enormous texts, ignore their
 * signals, register tools behind a running worker's back and edit what they are handed.
 *
 * | test                                                               | ISSUE7 bullet                                           |
 * |--------------------------------------------------------------------|---------------------------------------------------------|
 * | hand-written Tool rejects / throws an undescribable value (×12)     | Crashes: "describing a thrown value never throws"       |
 * | defineTool handler throws an undescribable value (×6)               | Crashes: "describing a thrown value never throws"       |
 * | a hook throws / returns a hostile value at each point (×21)         | Crashes: "every hook failure is HookFailed …"           |
 * | an OnAbort observer throws a hostile value → original error kept    | Crashes: "every run rejection is a WorkerError"         |
 * | async subscriber rejects → warning, no unhandled rejection          | Crashes: "An async subscriber whose promise rejects"    |
 * | subscriber throws a hostile Proxy → warning, run goes on            | Crashes: "Hooks and subscribers throwing hostile values"|
 * | tool returns 4 MiB of mixed UTF-16 → capped, marked, well-formed    | Unbounded: "Cap output per tool … cut on a UTF-8 boundary" |
 * | tool fails with a 32 MiB message → capped and marked                | Unbounded: "a 50 MiB error message were sent whole"     |
 * | tool ignores its signal → timeout result / cancel settles the run   | Honest limits: what holds for in-process tools          |
 * | another worker registers a tool mid-run → not executed              | Lost calls: "the tool set is snapshotted per request"   |
 * | hooks edit the history they are handed → stored history unchanged  | Smaller defects: "A hook's history copy is shallow"     |
 * | 60 parallel Effect tool calls → no MaxListenersExceeded warning     | Unbounded: "Each parallel Effect tool call adds …"      |
 */
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { z } from "zod"
import { type HookPoint, type Item, Tool, ToolServer, Worker, defineTool } from "../../src/index.ts"
import {
  clientFor,
  expectOneResultPerCall,
  expectSettledAsWorker,
  expectWellFormedExchange,
  settleRun,
  show,
  hostileServers,
  watchUnhandled
} from "./support/harness.ts"
import { type HostileProvider, type Reply, answer } from "./support/hostile-provider.ts"
import { ANY_OBJECT, handTool } from "./support/tools.ts"
import type { WireCall } from "./support/wire.ts"

const MiB = 1024 * 1024
const SCHEME = "openai-chat" as const

const unhandled = watchUnhandled()
const start = hostileServers()
const serve = (script: ReadonlyArray<Reply>): Promise<HostileProvider> => start(SCHEME, script)

const calling = (calls: ReadonlyArray<WireCall>): Reply => answer(SCHEME, { calls })
const done: Reply = answer(SCHEME, { text: ["Done."] })
const oneCall = (name: string, args = "{}"): ReadonlyArray<Reply> => [calling([{ id: "call_h0st1", name, args }]), done]

const outputs = (history: ReadonlyArray<Item>) => history.filter((item) => item.type === "function_call_output")

/** Values no describer can read: every way of turning them into text throws. */
const HOSTILE_VALUES: ReadonlyArray<{ readonly name: string; readonly make: () => unknown }> = [
  {
    name: "object whose toString / toJSON / message getter throw",
    make: () => ({
      get message(): string {
        throw new Error("message getter")
      },
      toString(): string {
        throw new Error("toString")
      },
      toJSON(): unknown {
        throw new Error("toJSON")
      }
    })
  },
  {
    name: "Proxy whose every trap throws",
    make: () => {
      const trap = (): never => {
        throw new Error("trap")
      }
      return new Proxy({}, { get: trap, has: trap, ownKeys: trap, getPrototypeOf: trap, getOwnPropertyDescriptor: trap, apply: trap })
    }
  },
  {
    name: "revoked Proxy",
    make: () => {
      const { proxy, revoke } = Proxy.revocable({}, {})
      revoke()
      return proxy
    }
  },
  {
    name: "Error whose message getter throws",
    make: () => {
      const error = new Error("hidden")
      Object.defineProperty(error, "message", {
        get(): string {
          throw new Error("message getter")
        }
      })
      return error
    }
  },
  { name: "object without a prototype", make: () => Object.create(null) as object },
  { name: "Symbol", make: () => Symbol("hostile") }
]

describe("hostile tools: failures that cannot be described", () => {
  for (const { name, make } of HOSTILE_VALUES) {
    for (const how of ["rejects with", "throws synchronously"] as const) {
      it(`a hand-written Tool that ${how} a ${name} gets an error result; the run finishes`, async () => {
        const server = await serve(oneCall("hostile"))
        const worker = Worker.create({ client: clientFor(SCHEME, server) })
        const tool: Tool = {
          execute:
            how === "rejects with"
              ? () => Promise.reject(make())
              : () => {
                  throw make()
                }
        }
        worker.registerTool(handTool("hostile", ANY_OBJECT, (args, context) => tool.execute(args, context)))
        const settled = await settleRun(worker, worker.run("call it"))
        expectSettledAsWorker(settled)
        expect(settled.kind, show(settled)).toBe("resolved")
        expectOneResultPerCall(worker.history())
        expect(outputs(worker.history())[0]?.isError).toBe(true)
        expectWellFormedExchange(SCHEME, server.requests.at(-1)?.body ?? "{}")
      })
    }

    it(`a defineTool handler that throws a ${name} gets an error result; the run finishes`, async () => {
      const server = await serve(oneCall("hostile_defined"))
      const worker = Worker.create({ client: clientFor(SCHEME, server) })
      worker.registerTool(
        defineTool({
          name: "hostile_defined",
          description: "fails badly",
          execute: () => {
            throw make()
          }
        })
      )
      const settled = await settleRun(worker, worker.run("call it"))
      expectSettledAsWorker(settled)
      expect(settled.kind, show(settled)).toBe("resolved")
      expect(outputs(worker.history())[0]?.isError).toBe(true)
    })
  }
})

describe("hostile hooks: every hook failure is HookFailed, every rejection a WorkerError", () => {
  const POINTS: ReadonlyArray<HookPoint> = ["OnPromptSubmit", "PreLlmRequest", "OnStreamChunk", "OnTextDelta", "PreToolCall", "PostToolCall", "OnTurnEnd"]
  const hostile = HOSTILE_VALUES.slice(0, 2)
  for (const point of POINTS) {
    for (const { name, make } of hostile) {
      it(`${point} throwing a ${name} ends the run with HookFailed`, async () => {
        const server = await serve([answer(SCHEME, { text: ["Let me check."], calls: [{ id: "call_h0st1", name: "noop", args: "{}" }] }), done])
        const worker = Worker.create({ client: clientFor(SCHEME, server) })
        worker.registerTool(handTool("noop", ANY_OBJECT, async () => "ok"))
        worker.addHook(point, () => {
          throw make()
        })
        const settled = await settleRun(worker, worker.run("go"))
        expectSettledAsWorker(settled)
        expect(settled.kind, show(settled)).toBe("rejected")
        if (settled.kind === "rejected") expect((settled.error as { _tag?: unknown })._tag, show(settled)).toBe("HookFailed")
        expectOneResultPerCall(worker.history())
      })
    }
    it(`${point} returning a hostile Proxy ends the run with HookFailed`, async () => {
      const server = await serve([answer(SCHEME, { text: ["Let me check."], calls: [{ id: "call_h0st1", name: "noop", args: "{}" }] }), done])
      const worker = Worker.create({ client: clientFor(SCHEME, server) })
      worker.registerTool(handTool("noop", ANY_OBJECT, async () => "ok"))
      const proxy = (HOSTILE_VALUES[1] as { make: () => unknown }).make()
      worker.addHook(point, (() => proxy) as never)
      const settled = await settleRun(worker, worker.run("go"))
      expectSettledAsWorker(settled)
      expect(settled.kind, show(settled)).toBe("rejected")
      if (settled.kind === "rejected") expect((settled.error as { _tag?: unknown })._tag, show(settled)).toBe("HookFailed")
    })
  }

  it("an OnAbort observer throwing a hostile Proxy does not replace the run's own WorkerError", async () => {
    const server = await serve(oneCall("noop"))
    const worker = Worker.create({ client: clientFor(SCHEME, server) })
    worker.registerTool(handTool("noop", ANY_OBJECT, async () => "ok"))
    worker.addHook("PreToolCall", () => ({ _tag: "Abort", reason: "stop here" }))
    worker.addHook("OnAbort", () => {
      throw (HOSTILE_VALUES[1] as { make: () => unknown }).make()
    })
    const settled = await settleRun(worker, worker.run("go"))
    expectSettledAsWorker(settled)
    expect(settled.kind === "rejected" && (settled.error as { _tag?: unknown })._tag, show(settled)).toBe("HookAborted")
  })
})

describe("hostile subscribers", () => {
  it("an async subscriber whose promise rejects is reported as a warning, never as an unhandled rejection", async () => {
    const server = await serve(oneCall("noop"))
    const worker = Worker.create({ client: clientFor(SCHEME, server) })
    worker.registerTool(handTool("noop", ANY_OBJECT, async () => "ok"))
    const warnings: Array<string> = []
    worker.subscribe({ onWarning: (event) => void warnings.push(event.message) })
    // A subscriber is typed to return nothing; a JS caller can hand in an async function anyway.
    worker.subscribe({ onStatus: (async () => Promise.reject(new Error("subscriber boom"))) as never })
    const settled = await settleRun(worker, worker.run("go"))
    expectSettledAsWorker(settled)
    expect(settled.kind, show(settled)).toBe("resolved")
    // Let the rejections of the last status events surface.
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(unhandled.seen, "unhandled rejections").toEqual([])
    expect(warnings.some((message) => /subscriber/i.test(message)), `warnings: ${JSON.stringify(warnings)}`).toBe(true)
  })

  it("a subscriber throwing a hostile Proxy misses its delivery; the others are warned and the run goes on", async () => {
    const server = await serve(oneCall("noop"))
    const worker = Worker.create({ client: clientFor(SCHEME, server) })
    worker.registerTool(handTool("noop", ANY_OBJECT, async () => "ok"))
    const warnings: Array<string> = []
    worker.subscribe({ onWarning: (event) => void warnings.push(event.message) })
    worker.subscribe({
      onTurnStart: () => {
        throw (HOSTILE_VALUES[1] as { make: () => unknown }).make()
      }
    })
    const settled = await settleRun(worker, worker.run("go"))
    expectSettledAsWorker(settled)
    expect(settled.kind, show(settled)).toBe("resolved")
    expect(warnings.length).toBeGreaterThan(0)
    expectOneResultPerCall(worker.history())
  })
})

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

describe("hostile tool output: capped before it reaches history and the model", () => {
  it("a 4 MiB result of mixed 1-4 byte characters is cut on a character boundary with a visible truncation marker", async () => {
    const server = await serve(oneCall("dump"))
    const worker = Worker.create({ client: clientFor(SCHEME, server) })
    // 1 + 2 + 3 + 4 UTF-8 bytes per group: any byte offset can fall inside a character.
    const big = "aé€😀".repeat(Math.ceil((4 * MiB) / 10))
    worker.registerTool(handTool("dump", ANY_OBJECT, async () => big))
    const settled = await settleRun(worker, worker.run("dump"))
    expect(settled.kind, show(settled)).toBe("resolved")
    const [output] = outputs(worker.history())
    expect(output?.output.length ?? Infinity, "output kept in history").toBeLessThan(1 * MiB)
    expect(output?.output).toMatch(/truncat/i)
    expect(output?.output, "cut on a character boundary").not.toMatch(LONE_SURROGATE)
    expect(output?.output).not.toContain("\uFFFD")
    expect(server.requests[1]?.body.length ?? Infinity, "bytes sent to the model").toBeLessThan(2 * MiB)
  })

  it("a tool failing with a 32 MiB message gets a capped, marked error result", async () => {
    const server = await serve(oneCall("fail_loudly"))
    const worker = Worker.create({ client: clientFor(SCHEME, server) })
    worker.registerTool(
      handTool("fail_loudly", ANY_OBJECT, async () => {
        throw new Error("e".repeat(32 * MiB))
      })
    )
    const settled = await settleRun(worker, worker.run("fail"))
    expect(settled.kind, show(settled)).toBe("resolved")
    const [output] = outputs(worker.history())
    expect(output?.isError).toBe(true)
    expect(output?.output.length ?? Infinity).toBeLessThan(1 * MiB)
    expect(output?.output).toMatch(/truncat/i)
  })
})

describe("hostile tools that ignore their signal", () => {
  it("a tool that never settles and ignores its signal gets a timeout result at toolTimeoutMs", async () => {
    const server = await serve(oneCall("stuck"))
    const worker = Worker.create({ client: clientFor(SCHEME, server), toolTimeoutMs: 300 })
    worker.registerTool(handTool("stuck", ANY_OBJECT, () => new Promise<string>(() => undefined)))
    const settled = await settleRun(worker, worker.run("go"))
    expect(settled.kind, show(settled)).toBe("resolved")
    const [output] = outputs(worker.history())
    expect(output?.isError).toBe(true)
    expect(output?.output).toMatch(/time(d)? ?out/i)
  })

  it("cancel() while such a tool runs settles the run with Cancelled, and the call still gets a result", async () => {
    const server = await serve(oneCall("stuck"))
    const worker = Worker.create({ client: clientFor(SCHEME, server) })
    let started: () => void = () => undefined
    const running = new Promise<void>((resolve) => (started = resolve))
    worker.registerTool(
      handTool("stuck", ANY_OBJECT, () => {
        started()
        return new Promise<string>(() => undefined)
      })
    )
    const run = worker.run("go")
    await running
    worker.cancel()
    const settled = await settleRun(worker, run)
    expectSettledAsWorker(settled)
    expect(settled.kind === "rejected" && (settled.error as { _tag?: unknown })._tag, show(settled)).toBe("Cancelled")
    expectOneResultPerCall(worker.history())
  })
})

describe("hostile neighbours and editors", () => {
  it("a tool another worker registers on the shared ToolServer mid-run is not executed by this run", async () => {
    const server = await serve([calling([{ id: "call_late", name: "late_tool", args: "{}" }]), done])
    const shared = new ToolServer()
    const worker = Worker.create({ client: clientFor(SCHEME, server), toolServer: shared })
    const neighbour = Worker.create({ client: clientFor(SCHEME, server), toolServer: shared })
    worker.registerTool(handTool("early_tool", ANY_OBJECT, async () => "early"))
    let lateRuns = 0
    let registered = false
    worker.addHook("OnStreamChunk", () => {
      if (registered) return undefined
      registered = true
      neighbour.registerTool(
        handTool("late_tool", ANY_OBJECT, async () => {
          lateRuns++
          return "late"
        })
      )
      return undefined
    })
    const settled = await settleRun(worker, worker.run("go"))
    expectSettledAsWorker(settled)
    expect(server.requests[0]?.body, "the first request did not offer late_tool").not.toContain("late_tool")
    expect(lateRuns, "a tool the request never offered was executed").toBe(0)
    const [output] = outputs(worker.history())
    expect(output?.isError).toBe(true)
    expectOneResultPerCall(worker.history())
  })

  it("hooks editing the history items they are handed cannot rewrite the stored history", async () => {
    const server = await serve(oneCall("noop"))
    const worker = Worker.create({ client: clientFor(SCHEME, server) })
    worker.registerTool(handTool("noop", ANY_OBJECT, async () => "ok"))
    const vandalise = (history: ReadonlyArray<Item>): void => {
      for (const item of history) {
        try {
          const mutable = item as { content?: Array<{ text?: string }>; output?: string; arguments?: string; callId?: string }
          if (mutable.content?.[0] !== undefined) mutable.content[0].text = "REWRITTEN"
          if (mutable.output !== undefined) mutable.output = "REWRITTEN"
          if (mutable.arguments !== undefined) mutable.arguments = "REWRITTEN"
          if (mutable.callId !== undefined) mutable.callId = "REWRITTEN"
        } catch {
          // frozen items refuse the edit: exactly what the rule asks for
        }
      }
    }
    worker.addHook("OnPromptSubmit", ({ history }) => vandalise(history))
    worker.addHook("OnTurnEnd", ({ history }) => vandalise(history))
    const settled = await settleRun(worker, worker.run("original prompt"))
    expect(settled.kind, show(settled)).toBe("resolved")
    const stored = JSON.stringify(worker.history())
    expect(stored).not.toContain("REWRITTEN")
    expect(stored).toContain("original prompt")
    expectOneResultPerCall(worker.history())
  })

  it("60 parallel Effect tool calls share one abort watcher: no MaxListenersExceeded warning", async () => {
    const N = 60
    const server = await serve([calling(Array.from({ length: N }, (_, n) => ({ id: `call_fx${n}`, name: "fx", args: "{}" }))), done])
    const worker = Worker.create({ client: clientFor(SCHEME, server) })
    worker.registerTool(
      defineTool({ name: "fx", description: "an Effect tool", parameters: z.object({}), execute: () => Effect.as(Effect.sleep("20 millis"), "fx done") })
    )
    expect(await maxListenerWarnings(worker)).toEqual([])
    expectOneResultPerCall(worker.history())
  })
})

/** Runs `worker` to the end with a run signal and returns the MaxListenersExceeded warnings the process raised. */
const maxListenerWarnings = async (worker: ReturnType<typeof Worker.create>): Promise<Array<string>> => {
  const warnings: Array<string> = []
  const onWarning = (warning: Error): void => void warnings.push(`${warning.name}: ${warning.message}`)
  process.on("warning", onWarning)
  try {
    const settled = await settleRun(worker, worker.run("go", { signal: new AbortController().signal }))
    expect(settled.kind, show(settled)).toBe("resolved")
    await new Promise((resolve) => setTimeout(resolve, 20))
  } finally {
    process.off("warning", onWarning)
  }
  return warnings.filter((w) => /MaxListeners/i.test(w))
}

// `Tool.fromEffect` is the other public way to write an Effect tool; it must share the watcher too.
describe("hostile tools: Tool.fromEffect", () => {
  it("60 parallel Tool.fromEffect calls: no MaxListenersExceeded warning", async () => {
    const N = 60
    const server = await serve([calling(Array.from({ length: N }, (_, n) => ({ id: `call_fe${n}`, name: "fe", args: "{}" }))), done])
    const worker = Worker.create({ client: clientFor(SCHEME, server) })
    const effectTool = Tool.fromEffect(() => Effect.as(Effect.sleep("20 millis"), "fe done"))
    worker.registerTool(handTool("fe", ANY_OBJECT, (args, context) => effectTool.execute(args, context)))
    expect(await maxListenerWarnings(worker)).toEqual([])
  })
})
