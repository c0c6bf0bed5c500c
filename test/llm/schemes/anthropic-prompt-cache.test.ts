import { describe, expect, it } from "vitest"
import { Item } from "../../../src/llm/item.ts"
import type { Request } from "../../../src/llm/request.ts"
import { anthropicScheme } from "../../../src/llm/schemes/anthropic.ts"

const base: Request = {
  model: "claude-sonnet-4-5",
  systemPrompt: "You are terse.",
  items: [
    Item.userText("What is in notes.txt?"),
    Item.functionCall("toolu_01", "read_file", '{"path":"notes.txt"}'),
    Item.functionCallOutput("toolu_01", "milk, eggs"),
    Item.assistantText("Milk and eggs."),
    Item.userText("And the date?")
  ],
  tools: [{ name: "read_file", description: "Read a file", inputSchema: { type: "object", properties: { path: { type: "string" } }, required: ["path"], additionalProperties: false } }],
  config: {}
}

type Body = { system: unknown; messages: Array<{ role: string; content: Array<Record<string, unknown>> }> }

describe("Anthropic prompt-cache breakpoints for a stable prefix", () => {
  it("sends no cache_control without a stable prefix", () => {
    expect(anthropicScheme.encodeRequest(base)).not.toContain("cache_control")
  })

  it("marks the system prompt, the block that ends the prefix and the conversation's last block", () => {
    const body = JSON.parse(anthropicScheme.encodeRequest({ ...base, promptCache: { prefixItems: 4 } })) as Body
    expect(body.system).toEqual([{ type: "text", text: "You are terse.", cache_control: { type: "ephemeral" } }])
    const marked = body.messages.flatMap((m) => m.content).filter((block) => "cache_control" in block)
    expect(marked).toEqual([
      { type: "text", text: "Milk and eggs.", cache_control: { type: "ephemeral" } },
      { type: "text", text: "And the date?", cache_control: { type: "ephemeral" } }
    ])
  })

  it("uses one marker when the prefix ends the conversation", () => {
    const body = JSON.parse(anthropicScheme.encodeRequest({ ...base, promptCache: { prefixItems: 5 } })) as Body
    expect(body.messages.flatMap((m) => m.content).filter((block) => "cache_control" in block)).toHaveLength(1)
  })

  it("keeps the marked prefix byte-identical as the conversation grows", () => {
    const first = anthropicScheme.encodeRequest({ ...base, promptCache: { prefixItems: 3 } })
    const longer = anthropicScheme.encodeRequest({
      ...base,
      items: [...base.items, Item.assistantText("It is Monday."), Item.userText("Thanks")],
      promptCache: { prefixItems: 3 }
    })
    const cut = first.indexOf('"cache_control":{"type":"ephemeral"}}', first.indexOf("tool_result")) + 10
    expect(longer.slice(0, cut)).toBe(first.slice(0, cut))
  })
})
