import { readFileSync, writeFileSync } from "node:fs"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { type FunctionCallItem, Item } from "../../../src/llm/item.ts"
import type { Request, RequestConfig, ToolSpec } from "../../../src/llm/request.ts"
import { geminiScheme } from "../../../src/llm/schemes/gemini.ts"
import { GENERATED_CALL_ID_PREFIX } from "../../../src/llm/schemes/gemini-decoder.ts"
import { parseSseText } from "../../../src/llm/sse.ts"
import { tools } from "./support/tool-specs.ts"

const MODEL = "gemini-2.5-flash"
const SIGNATURE = "CiQB0e2Kb7Tp3Yx2Sh0M8y6mdNhUJ0vH6bVNq1WlU9+Xb7cKaQHR7YpvQ6lTz7C"
const GENERATED_A = `${GENERATED_CALL_ID_PREFIX}0f8e2c1a-7b5d-4e0a-9c6b-3d2f1e0a9b8c`
const GENERATED_B = `${GENERATED_CALL_ID_PREFIX}5a4b3c2d-1e0f-4a9b-8c7d-6e5f4a3b2c1d`

const signedCall = (callId: string, name: string, args: string, thoughtSignature: string): FunctionCallItem => ({
  ...Item.functionCall(callId, name, args),
  thoughtSignature
})

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
  "tool-history": {
    model: MODEL,
    systemPrompt: "Use tools when they help.",
    items: [
      Item.userText("Weather in Paris and the contents of notes.txt?"),
      Item.assistantText("Checking both."),
      signedCall(GENERATED_A, "get_weather", '{"city":"Paris","unit":"c"}', SIGNATURE),
      Item.functionCall(GENERATED_B, "files.read", '{"path":"notes.txt"}'),
      Item.functionCallOutput(GENERATED_A, '{"temperature":18}'),
      Item.functionCallOutput(GENERATED_B, "ENOENT: notes.txt does not exist", true),
      Item.assistantText("Paris is at 18°C; notes.txt does not exist."),
      Item.userText("Thanks!")
    ],
    tools,
    config: {}
  },
  "reasoning-roundtrip": {
    model: MODEL,
    items: [
      Item.userText("What time is it in Berlin?"),
      { type: "reasoning", text: "**Finding the time**", data: { provider: "gemini", thoughtSignature: "c2lnLXRob3VnaHQ=" } },
      // Reasoning from other providers is never sent to Gemini.
      { type: "reasoning", text: "Claude's thought", data: { provider: "anthropic", signature: "EqQB" } },
      signedCall("8f2k1p0q", "get_weather", '{"city":"Berlin","unit":"c"}', SIGNATURE),
      Item.functionCallOutput("8f2k1p0q", '{"temperature":9}'),
      Item.assistantText("It is 9°C in Berlin."),
      { type: "reasoning", text: "", data: { provider: "gemini", thoughtSignature: "c2lnLXRleHQ=" } }
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
      parallelToolCalls: false,
      reasoning: { effort: "low" }
    }
  }
}

const goldenPath = (name: string): URL => new URL(`../../fixtures/requests/gemini/${name}.json`, import.meta.url)
const encode = (request: Request) => JSON.parse(geminiScheme.encodeRequest(request))

describe("Gemini request encoding", () => {
  for (const [name, request] of Object.entries(SCENARIOS)) {
    it(`matches the golden body: ${name}`, () => {
      const body = geminiScheme.encodeRequest(request)
      if (process.env["UPDATE_GOLDEN"] === "1") writeFileSync(goldenPath(name), `${body}\n`)
      expect(body).toBe(readFileSync(goldenPath(name), "utf8").trimEnd())
    })
  }

  it("sends calls back with their signatures, and results by function name, errors as response.error", () => {
    const body = encode(SCENARIOS["tool-history"] as Request)
    expect(body.contents.map((content: { role: string }) => content.role)).toEqual(["user", "model", "user", "model", "user"])
    expect(body.contents[1].parts).toEqual([
      { text: "Checking both." },
      { functionCall: { name: "get_weather", args: { city: "Paris", unit: "c" } }, thoughtSignature: SIGNATURE },
      { functionCall: { name: "files.read", args: { path: "notes.txt" } } }
    ])
    expect(body.contents[2].parts).toEqual([
      { functionResponse: { name: "get_weather", response: { output: '{"temperature":18}' } } },
      { functionResponse: { name: "files.read", response: { error: "ENOENT: notes.txt does not exist" } } }
    ])
  })

  it("keeps ids Gemini issued and drops ids it never saw", () => {
    const body = encode(SCENARIOS["reasoning-roundtrip"] as Request)
    expect(body.contents[1].parts).toEqual([
      { text: "**Finding the time**", thought: true, thoughtSignature: "c2lnLXRob3VnaHQ=" },
      { functionCall: { id: "8f2k1p0q", name: "get_weather", args: { city: "Berlin", unit: "c" } }, thoughtSignature: SIGNATURE }
    ])
    expect(body.contents[2].parts).toEqual([
      { functionResponse: { id: "8f2k1p0q", name: "get_weather", response: { output: '{"temperature":9}' } } }
    ])
    expect(body.contents[3].parts).toEqual([{ text: "It is 9°C in Berlin." }, { text: "", thoughtSignature: "c2lnLXRleHQ=" }])
    expect(body.generationConfig).toEqual({ thinkingConfig: { thinkingBudget: 2048, includeThoughts: true } })
  })

  it("round-trips a decoded stream: signature back on its call, made-up ids left out", () => {
    const decoder = geminiScheme.decoder()
    const sse = readFileSync(new URL("../../fixtures/sse/gemini/parallel-tool-calls.sse", import.meta.url), "utf8")
    const events = [...parseSseText(sse).flatMap((message) => decoder.push(message)), ...decoder.end()]
    const calls: Array<FunctionCallItem> = []
    for (const event of events) {
      if (event.type === "block_start" && event.block.kind === "tool_use") {
        const { id, name, thoughtSignature } = event.block
        calls.push(thoughtSignature === undefined ? Item.functionCall(id, name, "") : signedCall(id, name, "", thoughtSignature))
      }
      if (event.type === "block_delta" && event.delta.kind === "input_json") {
        const call = calls.at(-1) as FunctionCallItem
        calls[calls.length - 1] = { ...call, arguments: call.arguments + event.delta.json }
      }
    }
    const body = encode({
      model: MODEL,
      items: [Item.userText("Weather in Paris and Tokyo?"), ...calls, ...calls.map((call) => Item.functionCallOutput(call.callId, "sunny"))],
      tools,
      config: {}
    })
    expect(body.contents[1].parts).toEqual([
      { functionCall: { name: "get_weather", args: { location: "Paris" } }, thoughtSignature: expect.stringMatching(/^CiQB/) },
      { functionCall: { name: "get_weather", args: { location: "Tokyo" } } }
    ])
    expect(body.contents[2].parts).toHaveLength(2)
  })

  it("finds the name of the latest call with a reused id", () => {
    const body = encode({
      model: MODEL,
      items: [
        Item.functionCall("c1", "get_weather", "{}"),
        Item.functionCallOutput("c1", "a"),
        Item.functionCall("c1", "files.read", "{}"),
        Item.functionCallOutput("c1", "b")
      ],
      tools,
      config: {}
    })
    expect(body.contents[3].parts[0].functionResponse.name).toBe("files.read")
  })

  it("maps tool choice to functionCallingConfig", () => {
    const calling = (config: RequestConfig) => encode({ model: MODEL, items: [], tools, config }).toolConfig
    expect(calling({ toolChoice: { type: "auto" } })).toEqual({ functionCallingConfig: { mode: "AUTO" } })
    expect(calling({ toolChoice: { type: "none" } })).toEqual({ functionCallingConfig: { mode: "NONE" } })
    expect(calling({ toolChoice: { type: "required" } })).toEqual({ functionCallingConfig: { mode: "ANY" } })
    expect(calling({ toolChoice: { type: "tool", name: "files.read" } })).toEqual({
      functionCallingConfig: { mode: "ANY", allowedFunctionNames: ["files.read"] }
    })
    expect(calling({})).toBeUndefined()
  })

  it("reports what Gemini cannot honour and leaves it out", () => {
    const request = SCENARIOS["all-config"] as Request
    expect(geminiScheme.validate(request).map((warning) => warning.setting)).toEqual(["parallelToolCalls"])
    expect(geminiScheme.validate({ model: MODEL, items: [], tools: [], config: { toolChoice: { type: "required" } } })[0]?.setting).toBe(
      "toolChoice"
    )
    expect(geminiScheme.validate({ model: MODEL, items: [], tools, config: { toolChoice: { type: "tool", name: "nope" } } })[0]?.setting).toBe(
      "toolChoice"
    )
    expect(geminiScheme.validate(SCENARIOS["simple-text"] as Request)).toEqual([])
  })

  it("reports an output whose call is missing, and leaves it out", () => {
    const request: Request = { model: MODEL, items: [Item.userText("Hi"), Item.functionCallOutput("ghost", "boo")], tools, config: {} }
    expect(geminiScheme.validate(request).map((warning) => warning.setting)).toEqual(["items[1]"])
    expect(encode(request).contents).toEqual([{ role: "user", parts: [{ text: "Hi" }] }])
  })

  it("encodes the same request to the same bytes, whatever order the tools come in", () => {
    const toolArb = fc.record({
      name: fc.stringMatching(/^[a-z][a-z0-9_.]{0,11}$/),
      description: fc.string({ minLength: 1, maxLength: 20 }),
      inputSchema: fc.constant({ type: "object", properties: { x: { type: "number" } }, additionalProperties: false })
    })
    fc.assert(
      fc.property(
        fc.uniqueArray(toolArb, { selector: (tool) => tool.name, minLength: 1, maxLength: 6 }),
        fc.string({ maxLength: 30 }),
        fc.option(fc.double({ min: 0, max: 2, noNaN: true }), { nil: undefined }),
        (specs, text, temperature) => {
          const build = (order: ReadonlyArray<ToolSpec>): Request => ({
            model: MODEL,
            systemPrompt: "sys",
            items: [
              Item.userText(text),
              Item.functionCall("c1", specs[0]?.name ?? "t", '{"x":1}'),
              Item.functionCallOutput("c1", text, text.length % 2 === 0)
            ],
            tools: order,
            config: temperature === undefined ? {} : { temperature }
          })
          const once = geminiScheme.encodeRequest(build(specs))
          expect(geminiScheme.encodeRequest(build([...specs]))).toBe(once)
          expect(geminiScheme.encodeRequest(build([...specs].reverse()))).toBe(once)
        }
      )
    )
  })
})

describe("Gemini tool schemas for older endpoints", () => {
  it("sends the OpenAPI-subset `parameters` when asked, and JSON Schema by default", async () => {
    const { makeGeminiScheme } = await import("../../../src/llm/schemes/gemini.ts")
    const request = {
      model: "gemini-1.5-pro",
      items: [{ type: "message", role: "user", content: [{ type: "input_text", text: "hi" }] }],
      tools: [{ name: "find", description: "Find a thing", inputSchema: { type: "object", properties: { q: { type: "string" }, n: { type: ["integer", "null"] } }, required: ["q"], additionalProperties: false } }],
      config: {}
    } as const
    const subset = JSON.parse(makeGeminiScheme({ toolSchemas: "openapi-subset" }).encodeRequest(request)) as {
      tools: Array<{ functionDeclarations: Array<Record<string, unknown>> }>
    }
    expect(subset.tools[0]?.functionDeclarations[0]).toEqual({
      description: "Find a thing",
      name: "find",
      parameters: { properties: { q: { type: "STRING" }, n: { nullable: true, type: "INTEGER" } }, propertyOrdering: ["q", "n"], required: ["q"], type: "OBJECT" }
    })
    expect(makeGeminiScheme().encodeRequest(request)).toContain('"parametersJsonSchema"')
  })
})

describe("Gemini streamed function-call arguments (opt-in)", () => {
  it("asks for them only when the scheme opts in and the request has tools, next to the tool choice", async () => {
    const { makeGeminiScheme } = await import("../../../src/llm/schemes/gemini.ts")
    const streaming = makeGeminiScheme({ streamFunctionCallArguments: true })
    const config = (scheme: typeof streaming, request: Request) =>
      (JSON.parse(scheme.encodeRequest(request)) as { toolConfig?: unknown }).toolConfig
    const withTools: Request = { model: MODEL, items: [Item.userText("Weather?")], tools, config: {} }
    expect(config(streaming, withTools)).toEqual({ functionCallingConfig: { streamFunctionCallArguments: true } })
    expect(config(streaming, { ...withTools, config: { toolChoice: { type: "tool", name: "files.read" } } })).toEqual({
      functionCallingConfig: { mode: "ANY", allowedFunctionNames: ["files.read"], streamFunctionCallArguments: true }
    })
    expect(config(streaming, { ...withTools, tools: [] })).toBeUndefined()
    expect(streaming.validate(withTools)).toEqual([])
    // Off by default, and off means the body is exactly what it was before the option existed.
    expect(config(makeGeminiScheme(), withTools)).toBeUndefined()
    expect(makeGeminiScheme({ streamFunctionCallArguments: false }).encodeRequest(withTools)).toBe(geminiScheme.encodeRequest(withTools))
    for (const request of Object.values(SCENARIOS)) {
      expect(makeGeminiScheme({ streamFunctionCallArguments: false }).encodeRequest(request)).toBe(geminiScheme.encodeRequest(request))
    }
  })
})
