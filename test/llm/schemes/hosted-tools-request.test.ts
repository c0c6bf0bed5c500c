import { readFileSync, writeFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import { HostedTool, hostedToolEntries, lintHostedTools } from "../../../src/llm/hosted-tools.ts"
import { Item } from "../../../src/llm/item.ts"
import type { Request } from "../../../src/llm/request.ts"
import type { Scheme } from "../../../src/llm/scheme.ts"
import { anthropicScheme } from "../../../src/llm/schemes/anthropic.ts"
import { geminiScheme } from "../../../src/llm/schemes/gemini.ts"
import { openAiChatScheme } from "../../../src/llm/schemes/openai-chat.ts"
import { openAiResponsesScheme } from "../../../src/llm/schemes/openai-responses.ts"
import { collectFixture } from "./support/decode-fixture.ts"
import { tools } from "./support/tool-specs.ts"

/**
 * Decision 0025 end to end on the wire: a response with hosted-tool output (the project's own fixtures) enters
 * history, and the follow-up request declares the hosted tools next to the function tools and sends that output
 * back verbatim. The golden bodies were checked against each provider's published request schema.
 */
const followUp = (scheme: Scheme, fixture: string, model: string, hosted: ReadonlyArray<HostedTool>): Request => {
  const question = Item.userText("Answer with sources, please.")
  const first: Request = { model, items: [question], tools, config: { hostedTools: hosted } }
  const response = collectFixture(scheme, fixture, first)
  return { ...first, items: [question, ...response.items, Item.userText("Thanks. And tomorrow?")] }
}

const SCENARIOS: ReadonlyArray<{ readonly scheme: Scheme; readonly fixture: string; readonly request: () => Request }> = [
  {
    scheme: openAiResponsesScheme,
    fixture: "hosted-web-search",
    request: () => followUp(openAiResponsesScheme, "hosted-web-search", "gpt-5-mini", [HostedTool.openAiWebSearch({ searchContextSize: "low" })])
  },
  {
    scheme: anthropicScheme,
    fixture: "server-tool-web-search",
    request: () =>
      followUp(anthropicScheme, "server-tool-web-search", "claude-sonnet-4-5-20250929", [
        HostedTool.anthropicWebSearch({ maxUses: 3, allowedDomains: ["example.org"] }),
        HostedTool.anthropicCodeExecution()
      ])
  },
  {
    scheme: geminiScheme,
    fixture: "code-execution",
    request: () => followUp(geminiScheme, "code-execution", "gemini-2.5-flash", [HostedTool.geminiCodeExecution(), HostedTool.geminiGoogleSearch()])
  }
]

const goldenPath = (scheme: string): URL => new URL(`../../fixtures/requests/${scheme}/hosted-tools.json`, import.meta.url)

describe("hosted tools and provider items in requests", () => {
  for (const { scheme, fixture, request } of SCENARIOS) {
    it(`${scheme.name}: matches the golden body after ${fixture}`, () => {
      const body = scheme.encodeRequest(request())
      if (process.env["UPDATE_GOLDEN"] === "1") writeFileSync(goldenPath(scheme.name), `${body}\n`)
      expect(body).toBe(readFileSync(goldenPath(scheme.name), "utf8").trimEnd())
      expect(scheme.validate(request())).toEqual([])
    })
  }

  it("hosted tools follow the function tools, in an order independent of how they were declared", () => {
    const search = HostedTool.anthropicWebSearch({ maxUses: 2 })
    const code = HostedTool.anthropicCodeExecution()
    const encode = (hosted: ReadonlyArray<HostedTool>) =>
      anthropicScheme.encodeRequest({ model: "m", items: [Item.userText("hi")], tools, config: { hostedTools: hosted } })
    expect(encode([search, code])).toBe(encode([code, search, code]))
    const body = JSON.parse(encode([search, code]))
    expect(body.tools.map((tool: { name: string }) => tool.name)).toEqual(["files_read", "get_weather", "web_search", "code_execution"])
    // A definition's key order does not matter either: entries are written in canonical key order.
    expect(hostedToolEntries([HostedTool.of("anthropic", { name: "x", type: "t" })], "anthropic")).toBe(
      hostedToolEntries([HostedTool.of("anthropic", { type: "t", name: "x" })], "anthropic")
    )
  })

  it("hosted tools alone still send a tools array", () => {
    const body = JSON.parse(
      geminiScheme.encodeRequest({ model: "m", items: [Item.userText("hi")], tools: [], config: { hostedTools: [HostedTool.geminiGoogleSearch()] } })
    )
    expect(body.tools).toEqual([{ googleSearch: {} }])
  })

  it("a scheme leaves out other schemes' hosted tools and provider items, with a warning for each", () => {
    const request: Request = {
      model: "m",
      items: [
        Item.userText("hi"),
        { type: "provider_item", scheme: "anthropic", kind: "server_tool_use", json: '{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{}}' }
      ],
      tools: [],
      config: { hostedTools: [HostedTool.anthropicWebSearch()] }
    }
    for (const scheme of [openAiChatScheme, openAiResponsesScheme, geminiScheme]) {
      const body = scheme.encodeRequest(request)
      expect(body).not.toContain("server_tool_use")
      expect(body).not.toContain("web_search")
      expect(scheme.validate(request).map((warning) => warning.setting).sort()).toEqual(["hostedTools", "items[1]"])
    }
  })

  it("lint refuses a hosted tool declared for another provider", () => {
    const lints = lintHostedTools([HostedTool.openAiWebSearch(), HostedTool.geminiGoogleSearch()], "gemini")
    expect(lints).toEqual([
      {
        _tag: "SchemaLint",
        provider: "gemini",
        severity: "error",
        tool: "web_search",
        path: "",
        message: "hosted tool web_search is declared for openai-responses and cannot be sent to gemini"
      }
    ])
  })

  it("HostedTool.of keeps a deep-frozen JSON copy and refuses what is not a bounded JSON object", () => {
    const definition = { type: "web_search", filters: { allowed_domains: ["example.org"] } }
    const tool = HostedTool.of("openai-responses", definition)
    definition.filters.allowed_domains.push("changed.example")
    expect(tool.definition).toEqual({ filters: { allowed_domains: ["example.org"] }, type: "web_search" })
    expect(Object.isFrozen((tool.definition["filters"] as { allowed_domains: unknown }).allowed_domains)).toBe(true)
    let deep: Record<string, unknown> = {}
    const root = deep
    for (let i = 0; i < 100; i++) deep = (deep["x"] = {}) as Record<string, unknown>
    expect(() => HostedTool.of("gemini", root as never)).toThrow(/nested deeper than 64/)
    expect(() => HostedTool.of("gemini", [] as never)).toThrow(TypeError)
    expect(() => HostedTool.of("openai-chat" as never, {})).toThrow(TypeError)
  })
})
