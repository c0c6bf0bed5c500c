import { describe, expect, it } from "vitest"
import type { Event } from "../../src/llm/event.ts"
import { HostedTool } from "../../src/llm/hosted-tools.ts"
import type { ProviderItem } from "../../src/llm/item.ts"
import { LlmConfigError } from "../../src/llm/llm-error.ts"
import type { WorkerEvent } from "../../src/worker/subscriber.ts"
import { Worker } from "../../src/worker/worker.ts"
import { ScriptedClient } from "./support/scripted-client.ts"

/** Decision 0025 at the Worker: provider items are shown, kept in history, never executed. */
const search: ProviderItem = {
  type: "provider_item",
  scheme: "anthropic",
  kind: "server_tool_use",
  json: '{"type":"server_tool_use","id":"srvtoolu_w1","name":"web_search","input":{"query":"ferry times"}}'
}

const response: ReadonlyArray<Event> = [
  { type: "status", status: "started" },
  { type: "block_start", index: 0, block: { kind: "text" } },
  { type: "block_delta", index: 0, delta: { kind: "text", text: "Searching." } },
  { type: "block_stop", index: 0 },
  { type: "provider_output", index: 1, item: search },
  { type: "block_start", index: 2, block: { kind: "text" } },
  { type: "citation", index: 2, citation: { scheme: "anthropic", kind: "web_search_result_location", json: '{"url":"https://ferry.example.org"}' } },
  { type: "block_delta", index: 2, delta: { kind: "text", text: "The ferry leaves at 9." } },
  { type: "block_stop", index: 2 },
  { type: "status", status: "completed", stopReason: "end_turn" }
]

describe("Worker and provider items", () => {
  it("subscribers see provider_output and citation; history keeps the item between the two messages; nothing runs", async () => {
    const client = new ScriptedClient([{ events: response }], "anthropic")
    const worker = Worker.create({ client, config: { hostedTools: [HostedTool.anthropicWebSearch()] } })
    const seen: Array<WorkerEvent> = []
    worker.subscribe({ onProviderOutput: (event) => seen.push(event), onCitation: (event) => seen.push(event) })
    const result = await worker.run("When is the ferry?")
    expect(seen).toEqual([
      { type: "provider_output", turn: 1, index: 1, ordinal: 1, item: search },
      { type: "citation", turn: 1, index: 2, citation: { scheme: "anthropic", kind: "web_search_result_location", json: '{"url":"https://ferry.example.org"}' } }
    ])
    expect(worker.history().map((item) => item.type)).toEqual(["message", "message", "provider_item", "message"])
    expect(result.status).toBe("finished")
    expect(client.requests).toHaveLength(1)
    expect(client.requests[0]?.config.hostedTools?.map((tool) => tool.definition["name"])).toEqual(["web_search"])
  })

  it("refuses at creation a hosted tool declared for another provider", () => {
    const client = new ScriptedClient([{ events: response }], "gemini")
    expect(() => Worker.create({ client, config: { hostedTools: [HostedTool.anthropicWebSearch()] } })).toThrow(LlmConfigError)
    const worker = Worker.create({ client })
    expect(() => worker.setConfig({ hostedTools: [HostedTool.openAiWebSearch()] })).toThrow(/declared for openai-responses/)
  })

  it("a provider item handed in from outside must be one bounded JSON object", () => {
    const client = new ScriptedClient([{ events: response }], "anthropic")
    const bad = (json: string) => Worker.create({ client, history: [{ ...search, json }] })
    expect(() => bad("not json")).toThrow(/not valid JSON/)
    expect(() => bad("[1]")).toThrow(/must be a JSON object/)
    expect(() => bad(`${"[".repeat(100)}${"]".repeat(100)}`)).toThrow(/nested deeper than 64/)
    expect(Worker.create({ client, history: [search] }).history()).toEqual([search])
  })
})
