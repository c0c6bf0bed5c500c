/**
 * The hostile model: what it emits reaches the Worker through a genuine-shaped stream over real loopback HTTP.
 *
 * | test                                                           | ISSUE7 bullet                                                |
 * |----------------------------------------------------------------|--------------------------------------------------------------|
 * | 10,000-deep arguments → InvalidArgument result; worker reusable | Crashes: "Tool arguments nested a few thousand levels deep"  |
 * | 40 MiB of one call's arguments never reach the tool             | Unbounded: "argument accumulation per response: no cap"      |
 * | 80 MiB of answer text → typed failure, not kept                 | Unbounded: "Text … accumulation per response: no cap"        |
 * | 10,000 calls in one response → one result each, in order, capped parallelism (×4) | Unbounded: "Calls per response and parallelism" |
 * | two calls under one id → unique ids, each runs once, deterministic | Lost calls: "Two calls under one id"                      |
 * | calls without ids → unique generated ids                        | Lost calls: "Responses calls that arrive without ids"        |
 * | id reused across turns, then a pause → resume runs the call     | Lost calls: "An id reused across turns, then a pause"        |
 * | pause on the first call of a batch → hasPendingCalls            | Lost calls: "After a pause on the first call … false"        |
 * | unknown tool name of 1 MiB → short error result                 | Unbounded: "a 1 MiB tool name was echoed back"               |
 * | `__proto__` keys in arguments → no prototype change, key kept   | Smaller defects: "`__proto__` … look for the same mistake"   |
 * | 1 MiB unknown key / 20,000 wrong items → short error text (×2)   | Unbounded: "Error texts for the model … `… and 997 more`"    |
 * | arguments that are not JSON / not an object → error result      | Tests and figures: exactly one result per call               |
 * | pause → push → lock() → resume(): typed refusal or clean resume  | Lost calls: "Pause → push a message → lock() → resume()"     |
 * Every test also checks: the run settles, rejections are `WorkerError`s, one result per call, unique ids, the
 * next request is well formed, and no unhandled rejection happened.
 */
import { describe, expect, it } from "vitest"
import { z } from "zod"
import { type Item, type MutableWorker, PreToolCall, Worker, defineTool, isWorkerError } from "../../src/index.ts"
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
import { ALL_SCHEMES, type HostileScheme, type WireCall } from "./support/wire.ts"

const MiB = 1024 * 1024

watchUnhandled()
const serve = hostileServers()

const done = (scheme: HostileScheme): Reply => answer(scheme, { text: ["Done."] })
const calling = (scheme: HostileScheme, calls: ReadonlyArray<WireCall>): Reply => answer(scheme, { calls })

/** Anthropic ids look like `toolu_…`, the others like `call_…`; the shape does not matter to the rules. */
const id = (scheme: HostileScheme, n: number | string): string => (scheme === "anthropic" ? `toolu_h0st${n}` : `call_h0st${n}`)

const outputs = (history: ReadonlyArray<Item>) => history.filter((item) => item.type === "function_call_output")
const calls = (history: ReadonlyArray<Item>) => history.filter((item) => item.type === "function_call")

/** The last request the server received is well formed for its provider. */
const expectLastRequestWellFormed = (scheme: HostileScheme, server: HostileProvider): void => {
  const last = server.requests.at(-1)
  expect(last, "the worker sent a request").toBeDefined()
  expectWellFormedExchange(scheme, last?.body ?? "{}")
}

describe("hostile model: arguments nested 10,000 levels deep", () => {
  const DEPTH = 10_000
  const deep = `{"a":${"[".repeat(DEPTH)}${"]".repeat(DEPTH)}}`
  for (const scheme of ALL_SCHEMES) {
    it(`${scheme}: each call gets an InvalidArgument result naming the depth, and the worker stays usable`, async () => {
      const server = await serve(scheme, [
        calling(scheme, [
          { id: id(scheme, "d1"), name: "deep_zod", args: deep },
          { id: id(scheme, "d2"), name: "deep_json_schema", args: deep },
          { id: id(scheme, "d3"), name: "deep_strict", args: deep }
        ]),
        done(scheme)
      ])
      const ran: Array<string> = []
      const worker = Worker.create({ client: clientFor(scheme, server) })
      worker.registerTools([
        defineTool({ name: "deep_zod", description: "takes anything", parameters: z.object({ a: z.unknown() }), execute: () => void ran.push("zod") }),
        defineTool({
          name: "deep_json_schema",
          description: "takes anything",
          parameters: { type: "object", properties: { a: {} }, additionalProperties: false },
          execute: () => void ran.push("json")
        }),
        // Closed, all-required and typed: sent to OpenAI in strict mode, so its arguments go through the restore.
        handTool(
          "deep_strict",
          { type: "object", properties: { a: { type: "array", items: { type: "array" } } }, required: ["a"], additionalProperties: false },
          async () => {
            ran.push("strict")
            return "ran"
          }
        )
      ])
      const first = await settleRun(worker, worker.run("go deep"))
      expectSettledAsWorker(first)
      expect(first.kind, show(first)).toBe("resolved")
      const history = worker.history()
      expectOneResultPerCall(history)
      expect(calls(history)).toHaveLength(3)
      expect(ran, "no tool saw the over-deep arguments").toEqual([])
      for (const output of outputs(history)) {
        expect(output.isError, output.output.slice(0, 200)).toBe(true)
        expect(output.output).toMatch(/deeper than \d+ levels/i)
      }
      expectLastRequestWellFormed(scheme, server)
      // The worker is not broken for good: the next run does not replay the call and die again.
      const second = await settleRun(worker, worker.run("and now?"))
      expect(second.kind, show(second)).toBe("resolved")
      expectOneResultPerCall(worker.history())
    })
  }
})

describe("hostile model: huge volumes in one response", () => {
  for (const scheme of ["openai-chat", "anthropic"] as const) {
    it(`${scheme}: 40 MiB of one call's arguments never reach the tool; the call is answered with an error (or the run fails typed)`, { timeout: 60_000 }, async () => {
      function* hugeArgs(): Generator<string> {
        yield '{"blob":"'
        const piece = "x".repeat(64 * 1024)
        for (let i = 0; i < 640; i++) yield piece
        yield '"}'
      }
      const server = await serve(scheme, [calling(scheme, [{ id: id(scheme, "huge"), name: "take_blob", args: hugeArgs() }]), done(scheme)])
      const received: Array<number> = []
      const worker = Worker.create({ client: clientFor(scheme, server) })
      worker.registerTool(
        defineTool({
          name: "take_blob",
          description: "takes a blob",
          parameters: z.object({ blob: z.string() }),
          execute: ({ blob }) => {
            received.push(blob.length)
            return "took it"
          }
        })
      )
      const settled = await settleRun(worker, worker.run("send it"), 40_000)
      expectSettledAsWorker(settled)
      expect(Math.max(0, ...received), "argument bytes that reached the tool").toBeLessThan(40 * MiB)
      if (settled.kind === "resolved") {
        expectOneResultPerCall(worker.history())
        const [output] = outputs(worker.history())
        expect(output?.isError).toBe(true)
      }
    })
  }

  // Assumes the default text cap is below 80 MiB (the issue's figure: 600 MiB were taken, up to V8's limit).
  it("openai-chat: 80 MiB of answer text fails the response with a typed error and is not kept", { timeout: 60_000 }, async () => {
    function* text(): Generator<string> {
      const piece = "y".repeat(64 * 1024)
      for (let i = 0; i < 1280; i++) yield piece
    }
    const server = await serve("openai-chat", [answer("openai-chat", { text: text() })])
    const worker = Worker.create({ client: clientFor("openai-chat", server) })
    const settled = await settleRun(worker, worker.run("talk"), 40_000)
    expectSettledAsWorker(settled)
    expect(settled.kind, show(settled)).toBe("rejected")
    const kept = worker
      .history()
      .flatMap((item) => (item.type === "message" ? item.content : []))
      .reduce((sum, part) => sum + ("text" in part ? part.text.length : 0), 0)
    expect(kept).toBeLessThan(80 * MiB)
  })

  // 10,000 on two wire formats, 2,500 on the other two: the per-call work is the same, the time is not.
  for (const [scheme, N] of [["openai-chat", 10_000], ["anthropic", 10_000], ["openai-responses", 2_500], ["gemini", 2_500]] as const) {
    it(`${scheme}: ${N} calls in one response each get exactly one result, in model order, not all run at once`, { timeout: 60_000 }, async () => {
      const wire = Array.from({ length: N }, (_, n): WireCall => ({ id: id(scheme, n), name: "tick", args: `{"n":${n}}` }))
      const server = await serve(scheme, [calling(scheme, wire), done(scheme)])
      let inFlight = 0
      let peak = 0
      let runs = 0
      const worker = Worker.create({ client: clientFor(scheme, server) })
      worker.registerTool(
        handTool("tick", ANY_OBJECT, async () => {
          runs++
          peak = Math.max(peak, ++inFlight)
          await new Promise((resolve) => setImmediate(resolve))
          inFlight--
          return "tock"
        })
      )
      const settled = await settleRun(worker, worker.run("tick a lot"), 40_000)
      expectSettledAsWorker(settled)
      expect(settled.kind, show(settled)).toBe("resolved")
      const history = worker.history()
      expectOneResultPerCall(history)
      expect(calls(history)).toHaveLength(N)
      expect(outputs(history).map((o) => o.callId), "results in model order").toEqual(calls(history).map((c) => c.callId))
      expect(runs).toBeLessThanOrEqual(N)
      expect(peak, "tool calls running at once").toBeLessThan(N)
      expectLastRequestWellFormed(scheme, server)
    })
  }
})

describe("hostile model: call ids", () => {
  const cityTool = (log: Array<string>) =>
    defineTool({
      name: "weather",
      description: "weather for a city",
      parameters: z.object({ city: z.string() }),
      execute: ({ city }) => {
        log.push(city)
        return `sunny in ${city}`
      }
    })

  const runDuplicate = async (scheme: HostileScheme) => {
    const dup = id(scheme, "dup")
    const server = await serve(scheme, [
      calling(scheme, [
        { id: dup, name: "weather", args: '{"city":"Paris"}' },
        { id: dup, name: "weather", args: '{"city":"Tokyo"}' }
      ]),
      done(scheme)
    ])
    const log: Array<string> = []
    const worker = Worker.create({ client: clientFor(scheme, server) })
    worker.registerTool(cityTool(log))
    const settled = await settleRun(worker, worker.run("weather twice"))
    return { server, log, worker, settled }
  }

  for (const scheme of ALL_SCHEMES) {
    it(`${scheme}: two calls under one id get unique ids, each runs once with its own arguments, deterministically`, async () => {
      const { server, log, worker, settled } = await runDuplicate(scheme)
      expectSettledAsWorker(settled)
      expect(settled.kind, show(settled)).toBe("resolved")
      expectOneResultPerCall(worker.history())
      expect([...log].sort()).toEqual(["Paris", "Tokyo"])
      expectLastRequestWellFormed(scheme, server)
      const again = await runDuplicate(scheme)
      expect(calls(again.worker.history()).map((c) => c.callId), "the same stream gets the same ids").toEqual(
        calls(worker.history()).map((c) => c.callId)
      )
    })
  }

  // Anthropic always sends ids (one missing is a protocol error); the other three may not.
  for (const scheme of ["openai-chat", "openai-responses", "gemini"] as const) {
    it(`${scheme}: calls that arrive without ids get unique non-empty ids and one result each`, async () => {
      const server = await serve(scheme, [
        calling(scheme, [
          { name: "weather", args: '{"city":"Oslo"}' },
          { name: "weather", args: '{"city":"Lima"}' }
        ]),
        done(scheme)
      ])
      const log: Array<string> = []
      const worker = Worker.create({ client: clientFor(scheme, server) })
      worker.registerTool(cityTool(log))
      const settled = await settleRun(worker, worker.run("weather"))
      expectSettledAsWorker(settled)
      expect(settled.kind, show(settled)).toBe("resolved")
      expectOneResultPerCall(worker.history())
      expect([...log].sort()).toEqual(["Lima", "Oslo"])
      expectLastRequestWellFormed(scheme, server)
    })
  }

  for (const scheme of ["openai-chat", "anthropic"] as const) {
    it(`${scheme}: an id reused across turns, then a pause: resume() runs the paused call and every call has its result`, async () => {
      const same = id(scheme, "same")
      const server = await serve(scheme, [
        calling(scheme, [{ id: same, name: "weather", args: '{"city":"Rome"}' }]),
        calling(scheme, [{ id: same, name: "weather", args: '{"city":"Bern"}' }]),
        done(scheme)
      ])
      const log: Array<string> = []
      const worker: MutableWorker = Worker.create({ client: clientFor(scheme, server) })
      worker.registerTool(cityTool(log))
      let paused = false
      worker.addHook("PreToolCall", ({ call }) => {
        if (call.arguments.includes("Bern") && !paused) {
          paused = true
          return PreToolCall.pause("ask the user first")
        }
        return undefined
      })
      const first = await settleRun(worker, worker.run("weather, twice"))
      expectSettledAsWorker(first)
      expect(first.kind === "resolved" && first.value.status, show(first)).toBe("paused")
      expect(worker.hasPendingCalls).toBe(true)
      const resumed = await settleRun(worker, worker.resume())
      expectSettledAsWorker(resumed)
      expect(resumed.kind === "resolved" && resumed.value.status, show(resumed)).toBe("finished")
      expect(log).toEqual(["Rome", "Bern"])
      expectOneResultPerCall(worker.history())
      expectLastRequestWellFormed(scheme, server)
    })
  }

  it("openai-chat: a pause on the first call of a batch leaves the batch pending; resume runs each call once", async () => {
    const scheme = "openai-chat"
    const server = await serve(scheme, [
      calling(scheme, [
        { id: "call_b1", name: "weather", args: '{"city":"Kyiv"}' },
        { id: "call_b2", name: "weather", args: '{"city":"Riga"}' }
      ]),
      done(scheme)
    ])
    const log: Array<string> = []
    const worker = Worker.create({ client: clientFor(scheme, server) })
    worker.registerTool(cityTool(log))
    let paused = false
    worker.addHook("PreToolCall", () => {
      if (paused) return undefined
      paused = true
      return PreToolCall.pause()
    })
    const first = await settleRun(worker, worker.run("weather"))
    expect(first.kind === "resolved" && first.value.status, show(first)).toBe("paused")
    expect(worker.hasPendingCalls, "the paused batch is pending").toBe(true)
    const resumed = await settleRun(worker, worker.resume())
    expect(resumed.kind === "resolved" && resumed.value.status, show(resumed)).toBe("finished")
    expect([...log].sort()).toEqual(["Kyiv", "Riga"])
    expectOneResultPerCall(worker.history())
    expectLastRequestWellFormed(scheme, server)
  })
})

describe("hostile model: names and keys", () => {
  for (const scheme of ALL_SCHEMES) {
    it(`${scheme}: an unknown tool name of 1 MiB gets a short error result, not an echo`, async () => {
      const name = "n".repeat(MiB)
      const server = await serve(scheme, [calling(scheme, [{ id: id(scheme, "unk"), name, args: "{}" }]), done(scheme)])
      const worker = Worker.create({ client: clientFor(scheme, server) })
      worker.registerTool(handTool("known", ANY_OBJECT, async () => "ok"))
      const settled = await settleRun(worker, worker.run("call something"))
      expectSettledAsWorker(settled)
      expect(settled.kind, show(settled)).toBe("resolved")
      expectOneResultPerCall(worker.history())
      const [output] = outputs(worker.history())
      expect(output?.isError).toBe(true)
      expect(output?.output).toMatch(/unknown tool/i)
      expect(output?.output.length ?? Infinity, "error text length").toBeLessThan(4 * 1024)
    })
  }

  for (const scheme of ["openai-chat", "anthropic"] as const) {
    it(`${scheme}: \`__proto__\` keys in arguments never change a prototype and are never silently dropped`, async () => {
      const args = '{"__proto__":{"polluted":true},"city":"Paris"}'
      const server = await serve(scheme, [
        calling(scheme, [
          { id: id(scheme, "p1"), name: "open_args", args },
          { id: id(scheme, "p2"), name: "strict_args", args },
          { id: id(scheme, "p3"), name: "zod_args", args }
        ]),
        done(scheme)
      ])
      const received = new Map<string, string>()
      const worker = Worker.create({ client: clientFor(scheme, server) })
      worker.registerTools([
        handTool("open_args", ANY_OBJECT, async (text) => {
          received.set("open_args", text)
          return "ok"
        }),
        // Closed and all-required: OpenAI gets it in strict mode, so its arguments go through the strict restore.
        handTool(
          "strict_args",
          { type: "object", properties: { city: { type: "string" } }, required: ["city"], additionalProperties: false },
          async (text) => {
            received.set("strict_args", text)
            return "ok"
          }
        ),
        defineTool({ name: "zod_args", description: "z", parameters: z.object({ city: z.string() }), execute: ({ city }) => city })
      ])
      const settled = await settleRun(worker, worker.run("pollute"))
      expectSettledAsWorker(settled)
      expect(settled.kind, show(settled)).toBe("resolved")
      expect(({} as Record<string, unknown>)["polluted"], "Object.prototype is untouched").toBeUndefined()
      expectOneResultPerCall(worker.history())
      // A tool that accepts any object sees the key as data, exactly as the model sent it.
      const open = received.get("open_args")
      expect(open, "the open tool ran").toBeDefined()
      const parsed = JSON.parse(open ?? "{}") as object
      expect(Object.hasOwn(parsed, "__proto__"), `open_args received ${open}`).toBe(true)
      // A closed schema either refuses the unknown key (error result) or passes it on as data — never drops it.
      const strict = received.get("strict_args")
      const strictOutput = outputs(worker.history())[1]
      if (strict === undefined) expect(strictOutput?.isError).toBe(true)
      else expect(Object.hasOwn(JSON.parse(strict) as object, "__proto__"), `strict_args received ${strict}`).toBe(true)
      expectLastRequestWellFormed(scheme, server)
    })
  }
})

describe("hostile model: error texts stay short", () => {
  const tools = () => [
    defineTool({ name: "zod_list", description: "numbers", parameters: z.object({ items: z.array(z.number()) }).strict(), execute: () => "ok" }),
    defineTool({
      name: "json_list",
      description: "numbers",
      parameters: { type: "object", properties: { items: { type: "array", items: { type: "number" } } }, additionalProperties: false },
      execute: () => "ok"
    })
  ]

  /** Both list tools called with `args` on OpenAI Chat; the run must finish with one (refused) result per call. */
  const refusedOutputs = async (args: string, idPrefix: string) => {
    const server = await serve("openai-chat", [
      calling("openai-chat", [
        { id: `call_${idPrefix}1`, name: "zod_list", args },
        { id: `call_${idPrefix}2`, name: "json_list", args }
      ]),
      done("openai-chat")
    ])
    const worker = Worker.create({ client: clientFor("openai-chat", server) })
    worker.registerTools(tools())
    const settled = await settleRun(worker, worker.run("go"))
    expect(settled.kind, show(settled)).toBe("resolved")
    expectOneResultPerCall(worker.history())
    return outputs(worker.history())
  }

  it("openai-chat: a 1 MiB unknown key is quoted by a short prefix only", async () => {
    const key = "k".repeat(MiB)
    const args = `{"items":[],${JSON.stringify(key)}:1}`
    for (const output of await refusedOutputs(args, "key")) {
      expect(output.isError).toBe(true)
      expect(output.output.length, output.output.slice(0, 200)).toBeLessThan(4 * 1024)
    }
  })

  it("openai-chat: 20,000 wrong-typed items give a handful of issues and a count of the rest", async () => {
    const args = `{"items":[${Array.from({ length: 20_000 }, () => '"nope"').join(",")}]}`
    for (const output of await refusedOutputs(args, "items")) {
      expect(output.isError).toBe(true)
      expect(output.output.length, output.output.slice(0, 200)).toBeLessThan(8 * 1024)
      expect(output.output).toMatch(/and \d[\d,. ]* more|stopped at the first issue/i)
    }
  })

  for (const scheme of ["openai-chat", "anthropic", "openai-responses"] as const) {
    it(`${scheme}: arguments that are not JSON, or not an object, get one error result each`, async () => {
      const server = await serve(scheme, [
        calling(scheme, [
          { id: id(scheme, "bad1"), name: "zod_list", args: '{"items":[1,2' },
          { id: id(scheme, "bad2"), name: "zod_list", args: "[1,2,3]" },
          { id: id(scheme, "bad3"), name: "json_list", args: '"just a string"' }
        ]),
        done(scheme)
      ])
      const worker = Worker.create({ client: clientFor(scheme, server) })
      worker.registerTools(tools())
      const settled = await settleRun(worker, worker.run("go"))
      expectSettledAsWorker(settled)
      expect(settled.kind, show(settled)).toBe("resolved")
      expectOneResultPerCall(worker.history())
      for (const output of outputs(worker.history())) expect(output.isError).toBe(true)
      expectLastRequestWellFormed(scheme, server)
    })
  }
})

describe("hostile model: a pause, then lock()", () => {
  it("openai-chat: pause → push a message → lock() either refuses with a typed error naming the call, or resume() and later runs succeed", async () => {
    const scheme = "openai-chat"
    const server = await serve(scheme, [calling(scheme, [{ id: "call_lock1", name: "weather", args: '{"city":"Nice"}' }]), done(scheme)])
    const log: Array<string> = []
    const worker = Worker.create({ client: clientFor(scheme, server) })
    worker.registerTool(
      defineTool({ name: "weather", description: "w", parameters: z.object({ city: z.string() }), execute: ({ city }) => void log.push(city) })
    )
    let paused = false
    worker.addHook("PreToolCall", () => {
      if (paused) return undefined
      paused = true
      return PreToolCall.pause()
    })
    const first = await settleRun(worker, worker.run("weather"))
    expect(first.kind === "resolved" && first.value.status, show(first)).toBe("paused")
    worker.pushItem({ type: "message", role: "user", content: [{ type: "input_text", text: "also, hurry" }] })
    let locked
    try {
      locked = worker.lock()
    } catch (refusal) {
      // Decision A: lock() refuses while calls are pending, with a typed error that names them.
      expect((refusal as { _tag?: unknown })._tag, String(refusal)).toEqual(expect.any(String))
      expect(String((refusal as { message?: unknown }).message)).toContain("call_lock1")
      return
    }
    // Decision B: the locked prefix stops before the pending batch, so resume() and later runs keep it intact.
    const resumed = await settleRun(locked, locked.resume())
    expect(resumed.kind === "resolved" && resumed.value.status, show(resumed)).toBe("finished")
    const later = await settleRun(locked, locked.run("thanks"))
    expect(later.kind === "resolved" && later.value.status, show(later)).toBe("finished")
    expect(log).toEqual(["Nice"])
    expectOneResultPerCall(locked.history())
    if (later.kind === "rejected") expect(isWorkerError(later.error)).toBe(true)
  })
})
