import { describe, expectTypeOf, it } from "vitest"
import { Item } from "../../src/llm/item.ts"
import { Hook, OnTurnEnd, PostToolCall, PreToolCall, StreamHook } from "../../src/worker/hooks.ts"
import { type CacheLockedWorker, type MutableWorker, Worker } from "../../src/worker/worker.ts"
import { ScriptedClient } from "./support/scripted-client.ts"
import { echoDefinition } from "./support/tools.ts"

// Compile-time pins: each @ts-expect-error must stay an error, or `tsc --noEmit` fails.
const typeOnly = (locked: CacheLockedWorker, mutable: MutableWorker): void => {
  // @ts-expect-error registering tools needs the Mutable state
  locked.registerTool(echoDefinition())
  // @ts-expect-error
  locked.registerTools([echoDefinition()])
  // @ts-expect-error the system prompt is locked
  locked.setSystemPrompt("x")
  // @ts-expect-error the history prefix is locked
  locked.setHistory([])
  // @ts-expect-error
  locked.pushItem(Item.userText("x"))
  // @ts-expect-error the request config is locked
  locked.setConfig({ maxTokens: 1 })
  // @ts-expect-error already locked
  locked.lock()
  // @ts-expect-error not locked
  mutable.unlock()
  // @ts-expect-error a PostToolCall hook cannot skip
  mutable.addHook("PostToolCall", () => PreToolCall.skip("no"))
  // @ts-expect-error an OnTurnEnd hook cannot return a PreToolCall result
  mutable.addHook("OnTurnEnd", () => PreToolCall.deny("no"))
  // @ts-expect-error a stream hook cannot pause
  mutable.addHook("OnTextDelta", () => PreToolCall.pause())
  // @ts-expect-error an OnPromptSubmit hook cannot skip
  mutable.addHook("OnPromptSubmit", async () => PreToolCall.skip("no"))
  // @ts-expect-error no such hook point
  mutable.addHook("OnSomething", () => Hook.continue())
  // @ts-expect-error OnTurnEnd has no "continue"
  mutable.addHook("OnTurnEnd", () => Hook.continue())
}

describe("worker types", () => {
  it("the states are distinct types with the right methods", () => {
    const mutable = Worker.create({ client: new ScriptedClient([]) })
    expectTypeOf(mutable).toEqualTypeOf<MutableWorker>()
    expectTypeOf(mutable.lock).returns.toEqualTypeOf<CacheLockedWorker>()
    expectTypeOf<CacheLockedWorker["unlock"]>().returns.toEqualTypeOf<MutableWorker>()
    expectTypeOf<CacheLockedWorker>().not.toHaveProperty("registerTool")
    expectTypeOf<CacheLockedWorker>().not.toHaveProperty("setSystemPrompt")
    expectTypeOf<MutableWorker>().toHaveProperty("registerTool")
    // The legal results compile.
    mutable.addHook("PostToolCall", () => PostToolCall.rewriteResult("x"))
    mutable.addHook("OnTurnEnd", () => OnTurnEnd.continueWith([Item.userText("again")]))
    mutable.addHook("OnStreamChunk", () => StreamHook.abort("x"))
    mutable.addHook("PreToolCall", async () => PreToolCall.deny("x"))
    void typeOnly
  })
})
