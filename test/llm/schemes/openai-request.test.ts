import { readFileSync, writeFileSync } from "node:fs"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { Item } from "../../../src/llm/item.ts"
import type { Request } from "../../../src/llm/request.ts"
import type { Scheme } from "../../../src/llm/scheme.ts"
import { makeOpenAiChatScheme, openAiChatScheme } from "../../../src/llm/schemes/openai-chat.ts"
import { openAiResponsesScheme } from "../../../src/llm/schemes/openai-responses.ts"
import { TOOL_ERROR_PREFIX } from "../../../src/llm/schemes/openai-wire.ts"
import { tools, weather } from "./support/tool-specs.ts"


const SCENARIOS: Record<string, Request> = {
  "simple-text": {
    model: "gpt-4.1-mini",
    systemPrompt: "You are terse.",
    items: [Item.userText("Say hello.")],
    tools: [],
    config: {}
  },
  "with-tools": {
    model: "gpt-4.1-mini",
    systemPrompt: "Use tools when they help.",
    items: [Item.userText("Weather in Paris and the contents of notes.txt?")],
    tools,
    config: { toolChoice: { type: "auto" } }
  },
  "tool-history": {
    model: "gpt-4.1-mini",
    systemPrompt: "Use tools when they help.",
    items: [
      Item.userText("Weather in Paris and the contents of notes.txt?"),
      Item.assistantText("Checking both."),
      Item.functionCall("call_w1", "get_weather", '{"city":"Paris","unit":"c"}'),
      Item.functionCall("call_r1", "files.read", '{"path":"notes.txt"}'),
      Item.functionCallOutput("call_w1", '{"temperature":18}'),
      Item.functionCallOutput("call_r1", "ENOENT: notes.txt does not exist", true),
      Item.assistantText("Paris is 18 °C; notes.txt does not exist."),
      Item.userText("Thanks.")
    ],
    tools,
    config: {}
  },
  "reasoning-roundtrip": {
    model: "o4-mini",
    items: [
      Item.userText("What is 17 * 23? Check with the calculator."),
      {
        type: "reasoning",
        text: "**Multiplying**\n\nI should verify with the tool.",
        data: { provider: "openai", id: "rs_0a1b2c", encryptedContent: "gAAAAABoZ3Rlc3RlbmNyeXB0ZWQ=" }
      },
      Item.functionCall("call_m1", "multiply", '{"a":17,"b":23}'),
      Item.functionCallOutput("call_m1", "391"),
      // Reasoning from another provider has no meaning to OpenAI and must not be sent.
      { type: "reasoning", text: "foreign", data: { provider: "anthropic", signature: "sig" } }
    ],
    tools: [
      {
        name: "multiply",
        description: "Multiply two integers.",
        inputSchema: {
          type: "object",
          properties: { a: { type: "integer" }, b: { type: "integer" } },
          required: ["a", "b"],
          additionalProperties: false
        }
      }
    ],
    config: { reasoning: { effort: "medium" } }
  },
  "all-config": {
    model: "gpt-4.1",
    systemPrompt: "Answer in JSON.",
    items: [Item.userText("List two colours.")],
    tools: [weather],
    config: {
      maxTokens: 256,
      temperature: 0.2,
      topP: 0.9,
      topK: 40,
      stopSequences: ["END"],
      toolChoice: { type: "tool", name: "get_weather" },
      parallelToolCalls: false,
      reasoning: { effort: "low", budgetTokens: 1024 }
    }
  }
}

const goldenPath = (dialect: string, scenario: string) => new URL(`../../fixtures/requests/${dialect}/${scenario}.json`, import.meta.url)
const golden = (dialect: string, scenario: string) => readFileSync(goldenPath(dialect, scenario), "utf8").trimEnd()

const SCHEMES: ReadonlyArray<Scheme> = [openAiChatScheme, openAiResponsesScheme]

describe.each(SCHEMES)("$name request bodies", (scheme) => {
  it.each(Object.keys(SCENARIOS))("%s equals its golden bytes", (scenario) => {
    const body = scheme.encodeRequest(SCENARIOS[scenario] as Request)
    // UPDATE_GOLDEN=1 rewrites the files; check them with the provider request validator before committing.
    if (process.env["UPDATE_GOLDEN"] === "1") writeFileSync(goldenPath(scheme.name, scenario), `${body}\n`)
    expect(body).toBe(golden(scheme.name, scenario))
  })

  it("is byte-identical for equal requests, whatever order the tools were registered in", () => {
    fc.assert(
      fc.property(
        fc.shuffledSubarray([...tools], { minLength: 2, maxLength: 2 }),
        fc.constantFrom(...Object.keys(SCENARIOS)),
        (shuffled, scenario) => {
          const base = SCENARIOS[scenario] as Request
          // Rebuilt from scratch: a fresh tools array defeats the per-array fragment cache.
          const rebuilt: Request = structuredClone({ ...base, tools: base.tools.length === 2 ? shuffled : base.tools })
          expect(scheme.encodeRequest(rebuilt)).toBe(scheme.encodeRequest(base))
        }
      )
    )
  })

  it("always streams and only warns about what it leaves out", () => {
    const body = JSON.parse(scheme.encodeRequest(SCENARIOS["all-config"] as Request)) as Record<string, unknown>
    expect(body["stream"]).toBe(true)
    expect(body).not.toHaveProperty("top_k")
    const warned = scheme.validate(SCENARIOS["all-config"] as Request).map((w) => w.setting)
    expect(warned).toContain("topK")
    expect(warned).toContain("reasoning.budgetTokens")
    expect(scheme.validate(SCENARIOS["simple-text"] as Request)).toEqual([])
  })

  it("marks an error tool result with the documented prefix and leaves ok results alone", () => {
    const body = scheme.encodeRequest(SCENARIOS["tool-history"] as Request)
    expect(body).toContain(JSON.stringify(TOOL_ERROR_PREFIX + "ENOENT: notes.txt does not exist"))
    expect(body).not.toContain(JSON.stringify(TOOL_ERROR_PREFIX + '{"temperature":18}'))
  })

  it("omits tool settings when there are no tools, and warns", () => {
    const request: Request = { ...(SCENARIOS["simple-text"] as Request), config: { toolChoice: { type: "required" }, parallelToolCalls: true } }
    const body = JSON.parse(scheme.encodeRequest(request)) as Record<string, unknown>
    expect(Object.keys(body)).not.toContain("tools")
    expect(Object.keys(body)).not.toContain("tool_choice")
    expect(Object.keys(body)).not.toContain("parallel_tool_calls")
    expect(scheme.validate(request).map((w) => w.setting)).toEqual(["toolChoice", "parallelToolCalls"])
  })
})

describe("scheme-specific encoding", () => {
  it("Chat never sends reasoning items, so hidden reasoning cannot leak into visible text", () => {
    const body = openAiChatScheme.encodeRequest(SCENARIOS["reasoning-roundtrip"] as Request)
    expect(body).not.toContain("I should verify")
    expect(body).not.toContain("gAAAAAB")
  })

  it("Responses sends OpenAI reasoning back with its id and encrypted content, and no foreign reasoning", () => {
    const body = JSON.parse(openAiResponsesScheme.encodeRequest(SCENARIOS["reasoning-roundtrip"] as Request)) as {
      input: Array<{ type: string; id?: string; encrypted_content?: string }>
      include: Array<string>
    }
    const reasoning = body.input.filter((item) => item.type === "reasoning")
    expect(reasoning).toEqual([expect.objectContaining({ id: "rs_0a1b2c", encrypted_content: "gAAAAABoZ3Rlc3RlbmNyeXB0ZWQ=" })])
    expect(body.include).toEqual(["reasoning.encrypted_content"])
  })

  it("Responses warns about stop sequences and does not send them; Chat sends them", () => {
    const request = SCENARIOS["all-config"] as Request
    expect(openAiResponsesScheme.validate(request).map((w) => w.setting)).toContain("stopSequences")
    expect(openAiResponsesScheme.encodeRequest(request)).not.toContain('"stop"')
    expect(openAiChatScheme.validate(request).map((w) => w.setting)).not.toContain("stopSequences")
    expect(openAiChatScheme.encodeRequest(request)).toContain('"stop":["END"]')
  })

  it("Chat sends at most four stop sequences and warns about the rest", () => {
    const request: Request = { ...(SCENARIOS["simple-text"] as Request), config: { stopSequences: ["a", "b", "c", "d", "e"] } }
    expect(openAiChatScheme.encodeRequest(request)).toContain('"stop":["a","b","c","d"],')
    expect(openAiChatScheme.validate(request).map((w) => w.setting)).toEqual(["stopSequences"])
  })

  it("Chat quirks: max_tokens field and no stream_options for servers that need it", () => {
    const scheme = makeOpenAiChatScheme({ maxTokensField: "max_tokens", streamUsage: false })
    const body = scheme.encodeRequest(SCENARIOS["all-config"] as Request)
    expect(body).toContain('"max_tokens":256')
    expect(body).not.toContain("max_completion_tokens")
    expect(body).not.toContain("stream_options")
  })

  it("Chat groups an assistant's text and following calls into one message", () => {
    const body = JSON.parse(openAiChatScheme.encodeRequest(SCENARIOS["tool-history"] as Request)) as {
      messages: Array<{ role: string; tool_calls?: Array<{ id: string; function: { name: string } }> }>
    }
    expect(body.messages.map((m) => m.role)).toEqual(["system", "user", "assistant", "tool", "tool", "assistant", "user"])
    expect(body.messages[2]?.tool_calls?.map((c) => [c.id, c.function.name])).toEqual([
      ["call_w1", "get_weather"],
      ["call_r1", "files_read"]
    ])
  })
})


describe("reasoning_content for compatible servers", () => {
  const history: Request = {
    model: "deepseek-reasoner",
    items: [
      { type: "message", role: "user", content: [{ type: "input_text", text: "Weather in Oslo?" }] },
      { type: "reasoning", text: "I should call the weather tool." },
      { type: "function_call", callId: "call_1", name: "get_weather", arguments: '{"city":"Oslo"}' },
      { type: "function_call_output", callId: "call_1", output: "rain", isError: false },
      { type: "reasoning", text: "It rains." },
      { type: "message", role: "assistant", content: [{ type: "output_text", text: "Rain in Oslo." }] },
      { type: "message", role: "user", content: [{ type: "input_text", text: "Thanks" }] }
    ],
    tools: [],
    config: {}
  }

  it("goes back on the assistant message it led to, only when asked", async () => {
    const { makeOpenAiChatScheme } = await import("../../../src/llm/schemes/openai-chat.ts")
    const echoed = JSON.parse(makeOpenAiChatScheme({ echoReasoning: true }).encodeRequest(history)) as { messages: Array<Record<string, unknown>> }
    expect(echoed.messages.filter((m) => m["role"] === "assistant")).toEqual([
      {
        role: "assistant",
        reasoning_content: "I should call the weather tool.",
        content: null,
        tool_calls: [{ id: "call_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Oslo"}' } }]
      },
      { role: "assistant", reasoning_content: "It rains.", content: "Rain in Oslo." }
    ])
    expect(openAiChatScheme.encodeRequest(history)).not.toContain("reasoning_content")
    expect(openAiChatScheme.encodeRequest(history)).not.toContain("I should call")
  })
})
