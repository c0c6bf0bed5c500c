import { describe, expect, it } from "vitest"
import { Item } from "../../src/llm/item.ts"
import { DuplicateName, RegistrationFailed } from "../../src/tool-server/tool-server-error.ts"
import { ToolMeta } from "../../src/tool/tool-meta.ts"
import { Worker } from "../../src/worker/worker.ts"
import { StaleWorker, WorkerBusy, WorkerLocked } from "../../src/worker/worker-error.ts"
import { ScriptedClient, textResponse } from "./support/scripted-client.ts"
import { echoDefinition } from "./support/tools.ts"

const client = () => new ScriptedClient([textResponse("ok")])

describe("worker states", () => {
  it("runs each factory exactly once, at registration", () => {
    let made = 0
    const worker = Worker.create({ client: client() })
    worker.registerTool(() => {
      made++
      return [ToolMeta.make("t"), { execute: async () => "x" }]
    })
    expect(made).toBe(1)
    expect(worker.toolServerHandle().names()).toEqual(["t"])
  })

  it("registration errors are typed and all-or-nothing", () => {
    const worker = Worker.create({ client: client() })
    worker.registerTool(echoDefinition("a"))
    expect(() => worker.registerTools([echoDefinition("b"), echoDefinition("a")])).toThrow(DuplicateName)
    expect(() =>
      worker.registerTools([
        echoDefinition("c"),
        () => {
          throw new Error("factory broke")
        }
      ])
    ).toThrow(RegistrationFailed)
    expect(worker.toolServerHandle().names()).toEqual(["a"])
  })

  it("lock() and unlock() retire the old object: every method on it throws StaleWorker", async () => {
    const mutable = Worker.create({ client: client() })
    const locked = mutable.lock()
    expect(() => mutable.history()).toThrow(StaleWorker)
    expect(() => mutable.setSystemPrompt("x")).toThrow(StaleWorker)
    await expect(mutable.run("x")).rejects.toBeInstanceOf(StaleWorker)
    const back = locked.unlock()
    expect(() => locked.cancel()).toThrow(StaleWorker)
    expect(() => locked.unlock()).toThrow(StaleWorker)
    expect(back.state).toBe("mutable")
  })

  it("Mutable-only methods on a locked worker throw WorkerLocked at run time", () => {
    const locked = Worker.create({ client: client() }).lock()
    const loose = locked as unknown as Record<string, (...args: Array<unknown>) => unknown>
    for (const method of ["registerTool", "registerTools", "setSystemPrompt", "setConfig", "setHistory", "pushItem", "truncateHistory", "lock"]) {
      expect(() => loose[method]?.call(locked, [])).toThrow(WorkerLocked)
    }
    expect(locked.state).toBe("cache-locked")
  })

  it("history editing on a mutable worker", () => {
    const worker = Worker.create({ client: client() })
    worker.pushItem(Item.userText("a"), Item.assistantText("b"), Item.userText("c"))
    worker.truncateHistory(2)
    expect(worker.history()).toEqual([Item.userText("a"), Item.assistantText("b")])
    worker.setHistory([Item.userText("z")])
    expect(worker.history()).toEqual([Item.userText("z")])
    worker.setConfig({ maxTokens: 10, temperature: 0 })
    expect(worker.config).toEqual({ maxTokens: 10, temperature: 0 })
  })

  it("keeps a frozen copy of its config: it changes through setConfig only", () => {
    const given: { maxTokens: number; temperature?: number } = { maxTokens: 10 }
    const worker = Worker.create({ client: client(), config: given })
    given.temperature = 1
    expect(worker.config).toEqual({ maxTokens: 10 })
    expect(Object.isFrozen(worker.config)).toBe(true)
    worker.setConfig(given)
    expect(worker.config).toEqual({ maxTokens: 10, temperature: 1 })
    expect(worker.config).not.toBe(given)
  })

  it("a second run while one is in progress is refused with WorkerBusy, and edits wait too", async () => {
    const worker = Worker.create({ client: new ScriptedClient([{ ...textResponse("ok"), delayMs: 5 }]) })
    const first = worker.run("a")
    await expect(worker.run("b")).rejects.toBeInstanceOf(WorkerBusy)
    expect(() => worker.pushItem(Item.userText("x"))).toThrow(WorkerBusy)
    await expect(first).resolves.toMatchObject({ status: "finished" })
  })

  it("hooks and subscribers survive lock() and unlock()", async () => {
    const mutable = Worker.create({ client: new ScriptedClient([textResponse("ok")]) })
    const seen: Array<string> = []
    mutable.addHook("OnTurnEnd", () => void seen.push("hook"))
    mutable.subscribe({ onStatus: (e) => seen.push(e.status) })
    await mutable.lock().run("hi")
    expect(seen).toEqual(["running", "hook", "finished"])
  })
})
