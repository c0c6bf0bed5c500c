import { readFileSync, writeFileSync } from "node:fs"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { Item } from "../../../src/llm/item.ts"
import type { Request, RequestConfig, ToolSpec } from "../../../src/llm/request.ts"
import { anthropicScheme } from "../../../src/llm/schemes/anthropic.ts"
import { ANTHROPIC_DEFAULT_MAX_TOKENS } from "../../../src/llm/schemes/anthropic-config.ts"
import { tools } from "./support/tool-specs.ts"

const MODEL = "claude-sonnet-4-5-20250929"
const SIGNATURE = "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds6Gj8kGvJ2Z8c3pVHcBJZFyaFSSxMdIGnthpRKzIZc1DY9yvMDCMa6xcEA=="

const toolHistory = [
  Item.userText("Weather in Paris and the contents of notes.txt?"),
  Item.assistantText("Checking both."),
  Item.functionCall("toolu_01A", "get_weather", '{"city":"Paris","unit":"c"}'),
  Item.functionCall("toolu_01B", "files.read", '{"path":"notes.txt"}'),
  Item.functionCallOutput("toolu_01A", '{"temperature":18}'),
  Item.functionCallOutput("toolu_01B", "ENOENT: notes.txt does not exist", true),
  Item.assistantText("Paris is at 18°C; notes.txt does not exist."),
  Item.userText("Thanks!")
]

const SCENARIOS: Record<string, Request> = {
  "simple-text": {
    model: MODEL,
    systemPrompt: "You are terse.",
    items: [Item.userText("Say hello.")],
    tools: [],
    config: {}
  },
  "with-tools": {
    model: MODEL,
    systemPrompt: "Use tools when they help.",
    items: [Item.userText("Weather in Paris and the contents of notes.txt?")],
    tools,
    config: { toolChoice: { type: "auto" } }
  },
  "tool-history": { model: MODEL, systemPrompt: "Use tools when they help.", items: toolHistory, tools, config: {} },
  "reasoning-roundtrip": {
    model: MODEL,
    items: [
      Item.userText("What time is it in Berlin?"),
      { type: "reasoning", text: "The user wants the time in Berlin.", data: { provider: "anthropic", signature: SIGNATURE } },
      { type: "reasoning", text: "", data: { provider: "anthropic", redacted: "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIw" } },
      // Reasoning from other providers cannot be verified by Anthropic and is never sent there.
      { type: "reasoning", text: "Gemini's thought", data: { provider: "gemini", thoughtSignature: "c2ln" } },
      { type: "reasoning", text: "A summary without data" },
      Item.functionCall("toolu_01T", "get_weather", '{"city":"Berlin","unit":"c"}'),
      Item.functionCallOutput("toolu_01T", '{"temperature":9}')
    ],
    tools,
    config: { reasoning: { budgetTokens: 2048 } }
  },
  "all-config": {
    model: MODEL,
    systemPrompt: "Answer with one word.",
    items: [Item.userText("Weather in Oslo?")],
    tools,
    config: {
      maxTokens: 512,
      temperature: 0.2,
      topP: 0.9,
      topK: 40,
      stopSequences: ["END"],
      toolChoice: { type: "tool", name: "get_weather" },
      parallelToolCalls: false
    }
  }
}

const goldenPath = (name: string): URL => new URL(`../../fixtures/requests/anthropic/${name}.json`, import.meta.url)

describe("Anthropic request encoding", () => {
  for (const [name, request] of Object.entries(SCENARIOS)) {
    it(`matches the golden body: ${name}`, () => {
      const body = anthropicScheme.encodeRequest(request)
      if (process.env["UPDATE_GOLDEN"] === "1") writeFileSync(goldenPath(name), `${body}\n`)
      expect(body).toBe(readFileSync(goldenPath(name), "utf8").trimEnd())
    })
  }

  it("builds the documented structure for a tool history", () => {
    const body = JSON.parse(anthropicScheme.encodeRequest(SCENARIOS["tool-history"] as Request))
    expect(body.max_tokens).toBe(ANTHROPIC_DEFAULT_MAX_TOKENS)
    expect(body.stream).toBe(true)
    expect(body.messages.map((message: { role: string }) => message.role)).toEqual(["user", "assistant", "user", "assistant", "user"])
    expect(body.messages[1].content).toEqual([
      { type: "text", text: "Checking both." },
      { type: "tool_use", id: "toolu_01A", name: "get_weather", input: { city: "Paris", unit: "c" } },
      { type: "tool_use", id: "toolu_01B", name: "files_read", input: { path: "notes.txt" } }
    ])
    expect(body.messages[2].content).toEqual([
      { type: "tool_result", tool_use_id: "toolu_01A", content: '{"temperature":18}' },
      { type: "tool_result", tool_use_id: "toolu_01B", content: "ENOENT: notes.txt does not exist", is_error: true }
    ])
    expect(body.tools.map((tool: { name: string }) => tool.name)).toEqual(["files_read", "get_weather"])
  })

  it("puts tool results first in a user message and merges consecutive same-role items", () => {
    const body = JSON.parse(
      anthropicScheme.encodeRequest({
        model: MODEL,
        items: [
          Item.userText("Go."),
          Item.functionCall("toolu_1", "get_weather", "{}"),
          Item.userText("Also, hurry."),
          Item.functionCallOutput("toolu_1", "done")
        ],
        tools,
        config: {}
      })
    )
    expect(body.messages[2]).toEqual({
      role: "user",
      content: [
        { type: "tool_result", tool_use_id: "toolu_1", content: "done" },
        { type: "text", text: "Also, hurry." }
      ]
    })
  })

  it("sends reasoning back only when Anthropic produced it", () => {
    const body = JSON.parse(anthropicScheme.encodeRequest(SCENARIOS["reasoning-roundtrip"] as Request))
    expect(body.thinking).toEqual({ type: "enabled", budget_tokens: 2048 })
    expect(body.max_tokens).toBe(ANTHROPIC_DEFAULT_MAX_TOKENS + 2048)
    expect(body.messages[1].content.map((block: { type: string }) => block.type)).toEqual(["thinking", "redacted_thinking", "tool_use"])
    expect(body.messages[1].content[0]).toEqual({ type: "thinking", thinking: "The user wants the time in Berlin.", signature: SIGNATURE })
  })

  it("maps the tool choice, with parallel calls switched off", () => {
    const body = JSON.parse(anthropicScheme.encodeRequest(SCENARIOS["all-config"] as Request))
    expect(body.tool_choice).toEqual({ type: "tool", name: "get_weather", disable_parallel_tool_use: true })
    const choice = (config: RequestConfig) => JSON.parse(anthropicScheme.encodeRequest({ model: MODEL, items: [], tools, config })).tool_choice
    expect(choice({ toolChoice: { type: "required" } })).toEqual({ type: "any" })
    expect(choice({ toolChoice: { type: "none" }, parallelToolCalls: false })).toEqual({ type: "none" })
    expect(choice({ parallelToolCalls: false })).toEqual({ type: "auto", disable_parallel_tool_use: true })
    expect(choice({ toolChoice: { type: "tool", name: "files.read" } })).toEqual({ type: "tool", name: "files_read" })
    expect(choice({})).toBeUndefined()
  })

  it("omits and reports what extended thinking forbids", () => {
    const request: Request = {
      model: MODEL,
      items: [Item.userText("Hi")],
      tools,
      config: { temperature: 0.5, topK: 5, topP: 0.5, toolChoice: { type: "required" }, reasoning: { effort: "medium" } }
    }
    expect(anthropicScheme.validate(request).map((warning) => warning.setting)).toEqual(["temperature", "topK", "topP", "toolChoice"])
    const body = JSON.parse(anthropicScheme.encodeRequest(request))
    expect(body).not.toHaveProperty("temperature")
    expect(body).not.toHaveProperty("top_k")
    expect(body).not.toHaveProperty("top_p")
    expect(body).not.toHaveProperty("tool_choice")
    expect(body.thinking).toEqual({ type: "enabled", budget_tokens: 4096 })
  })

  it("drops thinking the API would refuse, and says why", () => {
    const warnings = (config: RequestConfig) => anthropicScheme.validate({ model: MODEL, items: [], tools: [], config })
    expect(warnings({ reasoning: { budgetTokens: 500 } })[0]?.setting).toBe("reasoning.budgetTokens")
    expect(warnings({ maxTokens: 2000, reasoning: { budgetTokens: 2000 } })[0]?.setting).toBe("reasoning.budgetTokens")
    expect(JSON.parse(anthropicScheme.encodeRequest({ model: MODEL, items: [], tools: [], config: { reasoning: { budgetTokens: 500 } } }))).not.toHaveProperty("thinking")
    expect(warnings({ toolChoice: { type: "required" } })[0]?.setting).toBe("toolChoice")
    expect(warnings({ maxTokens: 100, temperature: 1 })).toEqual([])
  })

  it("reports history it cannot send: bad arguments and orphan outputs", () => {
    const request: Request = {
      model: MODEL,
      items: [Item.userText("Hi"), Item.functionCall("toolu_1", "get_weather", "[1]"), Item.functionCallOutput("toolu_9", "lost")],
      tools,
      config: {}
    }
    expect(anthropicScheme.validate(request).map((warning) => warning.setting)).toEqual(["items[1].arguments", "items[2]"])
    const body = JSON.parse(anthropicScheme.encodeRequest(request))
    expect(body.messages).toEqual([
      { role: "user", content: [{ type: "text", text: "Hi" }] },
      { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "get_weather", input: {} }] }
    ])
  })

  it("encodes the same request to the same bytes, whatever order the tools come in", () => {
    const toolArb = fc.record({
      name: fc.stringMatching(/^[a-z][a-z0-9_]{0,11}$/),
      description: fc.string({ maxLength: 20 }),
      inputSchema: fc.constant({ type: "object", properties: { x: { type: "number" } }, additionalProperties: false })
    })
    fc.assert(
      fc.property(
        fc.uniqueArray(toolArb, { selector: (tool) => tool.name, minLength: 1, maxLength: 6 }),
        fc.string({ maxLength: 30 }),
        fc.option(fc.integer({ min: 1, max: 8192 }), { nil: undefined }),
        (specs, text, maxTokens) => {
          const build = (order: ReadonlyArray<ToolSpec>): Request => ({
            model: MODEL,
            systemPrompt: "sys",
            items: [Item.userText(text), Item.functionCall("toolu_x", specs[0]?.name ?? "t", '{"x":1}')],
            tools: order,
            config: maxTokens === undefined ? {} : { maxTokens }
          })
          const once = anthropicScheme.encodeRequest(build(specs))
          expect(anthropicScheme.encodeRequest(build([...specs]))).toBe(once)
          expect(anthropicScheme.encodeRequest(build([...specs].reverse()))).toBe(once)
        }
      )
    )
  })
})
