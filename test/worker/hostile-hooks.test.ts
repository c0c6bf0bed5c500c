import { describe, expect, it } from "vitest"
import type { HookPoint } from "../../src/worker/hooks.ts"
import { Worker } from "../../src/worker/worker.ts"
import { HookFailed, isOwnWorkerError } from "../../src/worker/worker-error.ts"
import { ScriptedClient, textResponse, toolCallResponse } from "./support/scripted-client.ts"
import { echoDefinition } from "./support/tools.ts"

const revoked = (): object => {
  const { proxy, revoke } = Proxy.revocable({}, {})
  revoke()
  return proxy
}
const trap = (): object =>
  new Proxy({}, {
    get: () => {
      throw new Error("trap")
    },
    getPrototypeOf: () => {
      throw new Error("trap")
    },
    has: () => {
      throw new Error("trap")
    },
    ownKeys: () => {
      throw new Error("trap")
    }
  })
const throwingGetters = (): object => ({
  get message(): string {
    throw new Error("getter")
  },
  get _tag(): string {
    throw new Error("getter")
  },
  toString(): string {
    throw new Error("toString")
  },
  toJSON(): string {
    throw new Error("toJSON")
  }
})

/** Values a hook may throw, reject with, or return. */
const HOSTILE: ReadonlyArray<readonly [string, () => unknown]> = [
  ["a revoked Proxy", revoked],
  ["a trapping Proxy", trap],
  ["an object with throwing getters", throwingGetters],
  ["a symbol", () => Symbol("s")],
  ["null", () => null],
  ["a BigInt", () => 10n]
]

const POINTS: ReadonlyArray<HookPoint> = [
  "OnPromptSubmit",
  "PreLlmRequest",
  "OnStreamChunk",
  "OnTextDelta",
  "OnToolCallDelta",
  "OnStreamComplete",
  "PreToolCall",
  "PostToolCall",
  "OnTurnEnd"
]

const script = () => new ScriptedClient([toolCallResponse([{ id: "c", name: "echo", args: '{"v":"x"}' }], "checking"), textResponse("done")])

const failure = async (worker: { run(input: string): Promise<unknown> }): Promise<unknown> => {
  try {
    await worker.run("go")
  } catch (error) {
    return error
  }
  throw new Error("the run did not fail")
}

describe.each(POINTS)("a hostile %s hook", (point) => {
  it.each(HOSTILE)("throwing %s ends the run with HookFailed", async (_, make) => {
    const worker = Worker.create({ client: script() })
    worker.registerTool(echoDefinition())
    worker.addHook(point, () => {
      throw make()
    })
    const error = await failure(worker)
    expect(error).toBeInstanceOf(HookFailed)
    expect((error as HookFailed).point).toBe(point)
    // The worker is usable afterwards: every call it left has a result.
    const calls = worker.history().filter((i) => i.type === "function_call").length
    expect(worker.history().filter((i) => i.type === "function_call_output")).toHaveLength(calls)
  })

  it.each(HOSTILE)("rejecting with %s ends the run with HookFailed", async (_, make) => {
    const worker = Worker.create({ client: script() })
    worker.registerTool(echoDefinition())
    worker.addHook(point, () => Promise.reject(make()))
    const error = await failure(worker)
    expect(error).toBeInstanceOf(HookFailed)
  })

  it.each(HOSTILE)("returning %s ends the run with HookFailed", async (_, make) => {
    const worker = Worker.create({ client: script() })
    worker.registerTool(echoDefinition())
    worker.addHook(point, () => make() as never)
    const error = await failure(worker)
    expect(error).toBeInstanceOf(HookFailed)
  })
})

describe("hook results with hostile fields", () => {
  const cases: ReadonlyArray<readonly [HookPoint, () => unknown]> = [
    ["PreToolCall", () => ({ _tag: "Skip", get reason(): string { throw new Error("no") } })],
    ["PreToolCall", () => ({ _tag: "Deny", reason: Symbol("r") })],
    ["PreToolCall", () => ({ _tag: "RewriteArguments", arguments: { toString: () => "{}" } })],
    ["PostToolCall", () => ({ _tag: "RewriteResult", output: revoked() })],
    ["OnPromptSubmit", () => ({ _tag: "RewritePrompt", item: revoked() })],
    ["OnPromptSubmit", () => ({ _tag: "RewritePrompt", item: { type: "message", role: "user", content: "not an array" } })],
    ["PreLlmRequest", () => ({ _tag: "RewriteRequest", context: trap() })],
    ["PreLlmRequest", () => ({ _tag: "RewriteRequest", context: { systemPrompt: 1, items: [], tools: [], config: {} } })],
    ["OnTurnEnd", () => ({ _tag: "ContinueWith", items: [revoked()] })],
    ["OnTurnEnd", () => ({ _tag: "Pause", reason: 42 })]
  ]
  it.each(cases)("a %s result end the run with HookFailed (%#)", async (point, make) => {
    const worker = Worker.create({ client: script() })
    worker.registerTool(echoDefinition())
    worker.addHook(point, () => make() as never)
    const error = await failure(worker)
    expect(error).toBeInstanceOf(HookFailed)
  })

  it("in-place edits that leave a non-string behind are the hook's failure", async () => {
    const pre = Worker.create({ client: script() })
    pre.registerTool(echoDefinition())
    pre.addHook("PreToolCall", ({ call }) => {
      ;(call as { arguments: unknown }).arguments = revoked()
    })
    expect(await failure(pre)).toBeInstanceOf(HookFailed)
    const post = Worker.create({ client: script() })
    post.registerTool(echoDefinition())
    post.addHook("PostToolCall", ({ result }) => {
      ;(result as { output: unknown }).output = trap()
    })
    expect(await failure(post)).toBeInstanceOf(HookFailed)
    const request = Worker.create({ client: script() })
    request.addHook("PreLlmRequest", ({ context }) => {
      context.items.push(trap() as never)
    })
    expect(await failure(request)).toBeInstanceOf(HookFailed)
  })
})

describe("every run rejection is a WorkerError", () => {
  it.each(HOSTILE)("a client whose stream throws %s", async (_, make) => {
    const client = new ScriptedClient([{ events: [{ type: "status", status: "started" }], fail: make() }])
    const worker = Worker.create({ client })
    expect(isOwnWorkerError(await failure(worker))).toBe(true)
  })

  it.each(HOSTILE)("a run signal that is %s", async (_, make) => {
    const worker = Worker.create({ client: script() })
    let error: unknown
    try {
      await worker.run("go", { signal: make() as AbortSignal })
    } catch (thrown) {
      error = thrown
    }
    // Anything but a real signal is refused as a WorkerError; null / undefined-like values mean "no signal".
    if (error !== undefined) expect(isOwnWorkerError(error)).toBe(true)
    expect((await worker.run("again")).status).toBe("finished")
  })

  it("OnAbort observers that throw hostile values do not change the error", async () => {
    const worker = Worker.create({ client: script() })
    worker.addHook("OnPromptSubmit", () => ({ _tag: "Cancel", reason: "stop" }))
    worker.addHook("OnAbort", () => {
      throw revoked()
    })
    const error = await failure(worker)
    expect(isOwnWorkerError(error)).toBe(true)
    expect((error as { _tag: string })._tag).toBe("HookAborted")
  })
})
