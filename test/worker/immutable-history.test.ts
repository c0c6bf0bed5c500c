import { describe, expect, it } from "vitest"
import { isCacheable } from "../../src/llm/fragment-cache.ts"
import { Item, type ProviderItem } from "../../src/llm/item.ts"
import { Worker } from "../../src/worker/worker.ts"
import { ScriptedClient, textResponse, toolCallResponse } from "./support/scripted-client.ts"
import { echoDefinition } from "./support/tools.ts"

const script = () => new ScriptedClient([toolCallResponse([{ id: "c", name: "echo", args: '{"v":"x"}' }]), textResponse("done")])

describe("history items are immutable", () => {
  it("editing an item a hook received throws and leaves the stored history as it was", async () => {
    const worker = Worker.create({ client: script() })
    worker.registerTool(echoDefinition())
    const attempts: Array<string> = []
    worker.addHook("OnTurnEnd", ({ history }) => {
      const call = history.find((i) => i.type === "function_call")
      try {
        ;(call as { arguments: string }).arguments = '{"v":"forged"}'
      } catch (error) {
        attempts.push((error as Error).constructor.name)
      }
      const message = history[0]
      try {
        ;(message as unknown as { content: Array<unknown> }).content.push({ type: "input_text", text: "forged" })
      } catch (error) {
        attempts.push((error as Error).constructor.name)
      }
    })
    await worker.run("go")
    expect(attempts).toEqual(["TypeError", "TypeError"])
    const call = worker.history().find((i) => i.type === "function_call")
    expect(call).toMatchObject({ arguments: '{"v":"x"}' })
    expect(worker.history()[0]).toEqual(Item.userText("go"))
  })

  it("items from history(), run results and events are frozen", async () => {
    const worker = Worker.create({ client: script() })
    worker.registerTool(echoDefinition())
    const fromEvents: Array<object> = []
    worker.subscribe({ onToolCallCompleted: (e) => void fromEvents.push(e.call) })
    const result = await worker.run("go")
    for (const item of [...worker.history(), ...result.items, ...fromEvents]) expect(Object.isFrozen(item)).toBe(true)
  })

  it("items handed in are copied: editing the caller's object later changes nothing", () => {
    const mine = { type: "message", role: "user", content: [{ type: "input_text", text: "original" }] } as { type: "message"; role: "user"; content: Array<{ type: "input_text"; text: string }> }
    const worker = Worker.create({ client: script(), history: [mine] })
    worker.pushItem(mine)
    mine.content[0]!.text = "edited"
    mine.content.push({ type: "input_text", text: "more" })
    expect(worker.history()).toEqual([Item.userText("original"), Item.userText("original")])
  })

  it("a provider item handed in is owned like the rest: a frozen copy the request encoders may cache", () => {
    const mine: { -readonly [K in keyof ProviderItem]: ProviderItem[K] } = {
      type: "provider_item",
      scheme: "anthropic",
      kind: "server_tool_use",
      json: '{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{}}'
    }
    const worker = Worker.create({ client: script(), history: [mine] })
    mine.json = '{"type":"forged"}'
    const [owned] = worker.history()
    expect(owned).not.toBe(mine)
    expect(owned).toMatchObject({ kind: "server_tool_use", json: '{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{}}' })
    expect(Object.isFrozen(owned)).toBe(true)
    expect(isCacheable(owned as Item)).toBe(true)
    expect(isCacheable(mine)).toBe(false)
  })

  it("an owned item's memo is invisible and cannot be copied or forged: copies are owned afresh", () => {
    const worker = Worker.create({ client: script(), history: [Item.userText("hi")] })
    const [owned] = worker.history()
    expect(Reflect.ownKeys(owned as object)).toEqual(["type", "role", "content"])
    expect(JSON.stringify(owned)).toBe('{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}')
    // Spread, structuredClone and a Proxy carry no memo: each is read and copied again, not taken as owned.
    for (const lookalike of [{ ...(owned as Item) }, structuredClone(owned), new Proxy(owned as Item, {})]) {
      worker.setHistory([lookalike as Item])
      const [again] = worker.history()
      expect(again).not.toBe(lookalike)
      expect(again).toEqual(owned)
    }
    // The owned item itself passes through untouched.
    worker.setHistory([owned as Item])
    expect(worker.history()[0]).toBe(owned)
  })

  it("values that are not items are refused where they enter", () => {
    const worker = Worker.create({ client: script() })
    expect(() => worker.pushItem({ type: "message", role: "system", content: [] } as never)).toThrow(TypeError)
    expect(() => worker.setHistory([null as never])).toThrow(TypeError)
    expect(worker.history()).toEqual([])
  })
})
