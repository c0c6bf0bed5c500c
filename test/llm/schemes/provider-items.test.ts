import { describe, expect, it } from "vitest"
import type { Event } from "../../../src/llm/event.ts"
import { HostedTool } from "../../../src/llm/hosted-tools.ts"
import { Item, type ProviderItem } from "../../../src/llm/item.ts"
import { ResponseMeter, defaultResponseLimits } from "../../../src/llm/limits.ts"
import type { Request } from "../../../src/llm/request.ts"
import { anthropicScheme } from "../../../src/llm/schemes/anthropic.ts"
import { geminiScheme } from "../../../src/llm/schemes/gemini.ts"
import { createAnthropicDecoder } from "../../../src/llm/schemes/anthropic-decoder.ts"
import { openAiResponsesScheme } from "../../../src/llm/schemes/openai-responses.ts"
import { collectFixture, decodeFixture } from "./support/decode-fixture.ts"

/** Decision 0025: output the library does not model is kept as provider items and citations, per format. */
const providerOutputs = (events: ReadonlyArray<Event>): Array<ProviderItem> =>
  events.flatMap((event) => (event.type === "provider_output" ? [event.item] : []))
const kinds = (items: ReadonlyArray<{ readonly type: string; readonly kind?: string }>) =>
  items.map((item) => (item.type === "provider_item" ? `provider:${item.kind}` : item.type))

describe("OpenAI Responses: unmodelled output items", () => {
  it("hosted-web-search: the web_search_call item is kept whole, in order, and the url_citation with its text block", () => {
    const events = decodeFixture(openAiResponsesScheme, "hosted-web-search")
    const [search] = providerOutputs(events)
    expect(search?.kind).toBe("web_search_call")
    expect(JSON.parse(search?.json ?? "")).toMatchObject({ type: "web_search_call", status: "completed", action: { type: "search", sources: [{}, {}] } })
    const citation = events.find((event) => event.type === "citation")
    expect(citation).toMatchObject({ type: "citation", index: 2, citation: { scheme: "openai-responses", kind: "url_citation" } })
    // Indices come from one sequence: the provider output sits between the reasoning block and the text block.
    expect(events.flatMap((event) => ("index" in event && event.type !== "citation" ? [event.index] : []))).toEqual([0, 0, 1, 2, 2, 2, 2])
    const response = collectFixture(openAiResponsesScheme, "hosted-web-search")
    expect(kinds(response.items)).toEqual(["reasoning", "provider:web_search_call", "message"])
    expect(response.citations).toHaveLength(1)
  })

  it("custom-tool-call: a custom tool call is kept (with its full input), never offered as a function call", () => {
    const response = collectFixture(openAiResponsesScheme, "custom-tool-call")
    expect(kinds(response.items)).toEqual(["provider:custom_tool_call"])
    expect(JSON.parse((response.items[0] as ProviderItem).json)).toMatchObject({ call_id: "call_Hx2kQ9mZ", input: "SELECT name FROM planets WHERE moons > 10" })
    expect(response.stopReason).toBe("end_turn")
  })

  it("a provider item goes back as the input item it was, and only to Responses", () => {
    const [item] = collectFixture(openAiResponsesScheme, "hosted-web-search").items.filter((each) => each.type === "provider_item")
    const request: Request = { model: "m", items: [Item.userText("q"), item as ProviderItem], tools: [], config: {} }
    expect(JSON.parse(openAiResponsesScheme.encodeRequest(request)).input[1]).toEqual(JSON.parse((item as ProviderItem).json))
    expect(anthropicScheme.encodeRequest(request)).not.toContain("web_search_call")
    expect(geminiScheme.encodeRequest(request)).not.toContain("web_search_call")
  })
})

describe("Anthropic: server tool blocks and citations", () => {
  it("server-tool-web-search: server_tool_use with its streamed input assembled, the result block verbatim, cited text", () => {
    const response = collectFixture(anthropicScheme, "server-tool-web-search")
    expect(kinds(response.items)).toEqual(["message", "provider:server_tool_use", "provider:web_search_tool_result", "message"])
    const use = response.items[1] as ProviderItem
    expect(JSON.parse(use.json)).toEqual({ type: "server_tool_use", id: "srvtoolu_01Ab3Cd5Ef7Gh9", name: "web_search", input: { query: "lighthouse opening hours" } })
    expect(response.citations).toMatchObject([{ index: 3, citation: { scheme: "anthropic", kind: "web_search_result_location" } }])
    expect(response.abortedToolCalls).toEqual([])
  })

  it("server-tool-code-execution: bash_code_execution call and result are kept; the text after them too", () => {
    const response = collectFixture(anthropicScheme, "server-tool-code-execution")
    expect(kinds(response.items)).toEqual(["provider:server_tool_use", "provider:bash_code_execution_tool_result", "message"])
    expect(JSON.parse((response.items[1] as ProviderItem).json).content.stdout).toBe("42\n")
  })

  it("blocks go back in place, and a cache breakpoint can land on one", () => {
    const items = collectFixture(anthropicScheme, "server-tool-code-execution").items
    const body = JSON.parse(
      anthropicScheme.encodeRequest({ model: "m", items: [Item.userText("q"), ...items.slice(0, 2)], tools: [], config: {}, promptCache: { prefixItems: 3 } })
    )
    expect(body.messages[1].content.map((block: { type: string }) => block.type)).toEqual(["server_tool_use", "bash_code_execution_tool_result"])
    expect(body.messages[1].content[1].cache_control).toEqual({ type: "ephemeral" })
  })

  it("a server tool's streamed input counts against maxProviderBytes, and too-deep input is refused", () => {
    const limits = { ...defaultResponseLimits, maxProviderBytes: 64 }
    const start = [
      { event: "message_start", data: '{"type":"message_start","message":{"usage":{"input_tokens":1}}}' },
      { event: "content_block_start", data: '{"type":"content_block_start","index":0,"content_block":{"type":"server_tool_use","id":"srvtoolu_x","name":"web_search","input":{}}}' }
    ]
    const piece = (json: string) => ({
      event: "content_block_delta",
      data: JSON.stringify({ type: "content_block_delta", index: 0, delta: { type: "input_json_delta", partial_json: json } })
    })
    const bounded = createAnthropicDecoder({ limits })
    for (const message of start) bounded.push(message)
    bounded.push(piece(`{"query":"${"a".repeat(40)}`))
    expect(() => bounded.push(piece("b".repeat(40)))).toThrow(/maxProviderBytes = 64/)

    const deep = createAnthropicDecoder()
    for (const message of start) deep.push(message)
    deep.push(piece(`${'{"a":'.repeat(100)}1${"}".repeat(100)}`))
    expect(() => deep.push({ event: "content_block_stop", data: '{"type":"content_block_stop","index":0}' })).toThrow(/nested deeper than 64/)
  })
})

describe("Gemini: code parts, server calls and grounding", () => {
  it("code-execution: executableCode and codeExecutionResult parts are kept between the texts", () => {
    const response = collectFixture(geminiScheme, "code-execution")
    expect(kinds(response.items)).toEqual(["message", "provider:executableCode", "provider:codeExecutionResult", "message"])
    expect(JSON.parse((response.items[2] as ProviderItem).json)).toEqual({ codeExecutionResult: { outcome: "OUTCOME_OK", output: "55\n" } })
  })

  it("google-search-grounding: groundingMetadata is a citation of the open text block; the text is whole", () => {
    const response = collectFixture(geminiScheme, "google-search-grounding")
    expect(kinds(response.items)).toEqual(["message"])
    expect(response.citations).toMatchObject([{ index: 0, citation: { scheme: "gemini", kind: "groundingMetadata" } }])
    expect(JSON.parse(response.citations[0]?.citation.json ?? "").groundingChunks[0].web.uri).toBe("https://museum.example.org/hours")
  })

  it("with a server-side MCP tool declared, a call to an undeclared name is kept, not offered for execution", () => {
    const chunk = (parts: unknown, finish?: string) => ({
      event: "message",
      data: JSON.stringify({ candidates: [{ content: { role: "model", parts }, ...(finish === undefined ? {} : { finishReason: finish }) }] })
    })
    const request: Request = {
      model: "gemini-2.5-flash",
      items: [Item.userText("weather?")],
      tools: [],
      config: { hostedTools: [HostedTool.of("gemini", { mcpServers: [{ name: "weather" }] })] }
    }
    const decoder = geminiScheme.decoder(request)
    const events = [
      ...decoder.push(chunk([{ functionCall: { name: "weather_get", args: { city: "Oslo" } } }, { functionResponse: { name: "weather_get", response: { t: -3 } } }])),
      ...decoder.push(chunk([{ text: "It is -3 °C." }], "STOP")),
      ...decoder.end()
    ]
    expect(providerOutputs(events).map((item) => item.kind)).toEqual(["functionCall", "functionResponse"])
    expect(events.some((event) => event.type === "block_start" && event.block.kind === "tool_use")).toBe(false)
  })
})

describe("bounds on unmodelled output", () => {
  it("provider outputs and citations count against maxProviderBytes", () => {
    const meter = new ResponseMeter({ ...defaultResponseLimits, maxProviderBytes: 100 })
    const item: ProviderItem = { type: "provider_item", scheme: "gemini", kind: "executableCode", json: `{"executableCode":{"code":"${"x".repeat(60)}"}}` }
    meter.check({ type: "provider_output", index: 0, item })
    expect(() => meter.check({ type: "citation", citation: { scheme: "gemini", kind: "groundingMetadata", json: item.json } })).toThrow(/maxProviderBytes = 100/)
  })

  it("a too-deep output item is a protocol error, never a stack overflow", () => {
    const decoder = openAiResponsesScheme.decoder()
    const deep = `${'{"a":'.repeat(5000)}1${"}".repeat(5000)}`
    decoder.push({ event: "", data: '{"type":"response.created","response":{}}' })
    expect(() =>
      decoder.push({ event: "", data: `{"type":"response.output_item.done","output_index":0,"item":{"type":"web_search_call","action":${deep}}}` })
    ).toThrow(/nested deeper than 64/)
  })
})
