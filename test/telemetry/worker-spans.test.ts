import { trace } from "@opentelemetry/api"
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base"
import type { ReadableSpan } from "@opentelemetry/sdk-trace-base"
import { z } from "zod"
import { afterEach, describe, expect, it } from "vitest"
import { defineTool, Worker } from "../../src/index.ts"
import { reply, replyError, scriptedClient, startReplayProvider } from "../../src/testing/index.ts"
import { clientFor } from "../testing/script-digest.ts"

const setup = () => {
  const exporter = new InMemorySpanExporter()
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] })
  return { exporter, provider, tracer: provider.getTracer("test") }
}

const weather = defineTool({
  name: "get_weather",
  description: "Weather",
  parameters: z.object({ city: z.string() }),
  execute: ({ city }) => (city === "Atlantis" ? Promise.reject(new Error("no such city")) : `sunny in ${city}`)
})

const toolTurn = reply()
  .toolCall("get_weather", { city: "Paris" }, { id: "call_1" })
  .toolCall("get_weather", { city: "Atlantis" }, { id: "call_2" })
  .usage({ inputTokens: 100, outputTokens: 20, cacheReadTokens: 60, cacheWriteTokens: 10 })
const answerTurn = reply().reasoning("Done.", { signature: "c2ln" }).text("Sunny in Paris.").usage({ inputTokens: 150, outputTokens: 30, reasoningTokens: 12 })

const byName = (spans: ReadonlyArray<ReadableSpan>) => spans.map((span) => span.name)
const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId

afterEach(() => {
  trace.disable()
})

describe("telemetry: GenAI spans for a run, its requests and its tool calls", () => {
  it("a run is an invoke_agent span with chat and execute_tool children carrying the conventions' attributes", async () => {
    const { exporter, tracer } = setup()
    const replay = await startReplayProvider({ scheme: "anthropic", script: [toolTurn, answerTurn] })
    try {
      const worker = Worker.create({ client: clientFor("anthropic", replay.baseUrl), config: { maxTokens: 512, temperature: 0.2 }, telemetry: { tracer, agentName: "weather-bot" } })
      worker.registerTool(weather)
      await worker.run("Weather in Paris and Atlantis?")
    } finally {
      await replay.close()
    }
    const spans = exporter.getFinishedSpans()
    expect(byName(spans).sort()).toEqual(["chat scripted-model", "chat scripted-model", "execute_tool get_weather", "execute_tool get_weather", "invoke_agent weather-bot"])
    const run = spans.find((span) => span.name.startsWith("invoke_agent"))!
    expect(parentOf(run)).toBeUndefined()
    for (const span of spans) if (span !== run) expect([span.name, parentOf(span)]).toEqual([span.name, run.spanContext().spanId])
    for (const span of spans) expect(span.spanContext().traceId).toBe(run.spanContext().traceId)
    expect(run.attributes).toEqual({
      "gen_ai.operation.name": "invoke_agent",
      "gen_ai.provider.name": "anthropic",
      "gen_ai.request.model": "scripted-model",
      "gen_ai.agent.name": "weather-bot",
      "gen_ai.usage.input_tokens": 250,
      "gen_ai.usage.output_tokens": 50,
      "gen_ai.usage.cache_read.input_tokens": 60,
      "gen_ai.usage.cache_creation.input_tokens": 10,
      "gen_ai.usage.reasoning.output_tokens": 12,
      "llm_worker.run.status": "finished"
    })
    const [first, second] = spans.filter((span) => span.name.startsWith("chat")).sort((a, b) => Number(a.attributes["llm_worker.turn"]) - Number(b.attributes["llm_worker.turn"]))
    expect(first?.kind).toBe(2) // SpanKind.CLIENT
    expect(first?.attributes).toEqual({
      "gen_ai.operation.name": "chat",
      "gen_ai.provider.name": "anthropic",
      "gen_ai.request.model": "scripted-model",
      "gen_ai.request.max_tokens": 512,
      "gen_ai.request.temperature": 0.2,
      "llm_worker.turn": 1,
      "gen_ai.usage.input_tokens": 100,
      "gen_ai.usage.output_tokens": 20,
      "gen_ai.usage.cache_read.input_tokens": 60,
      "gen_ai.usage.cache_creation.input_tokens": 10,
      "gen_ai.response.finish_reasons": ["tool_use"],
      "gen_ai.response.model": "scripted-model",
      "gen_ai.response.id": "msg_scripted0"
    })
    expect(second?.attributes["gen_ai.response.finish_reasons"]).toEqual(["end_turn"])
    expect(second?.attributes["gen_ai.response.id"]).toBe("msg_scripted1")
    expect(second?.attributes["gen_ai.usage.reasoning.output_tokens"]).toBe(12)
    const tools = spans.filter((span) => span.name.startsWith("execute_tool")).sort((a, b) => String(a.attributes["gen_ai.tool.call.id"]).localeCompare(String(b.attributes["gen_ai.tool.call.id"])))
    expect(tools.map((span) => [span.attributes["gen_ai.tool.name"], span.attributes["gen_ai.tool.call.id"], span.attributes["gen_ai.tool.type"], span.status.code, span.attributes["error.type"]])).toEqual([
      ["get_weather", "call_1", "function", 0, undefined],
      ["get_weather", "call_2", "function", 2, "error"]
    ])
    // No content unless asked for.
    for (const span of spans) expect(Object.keys(span.attributes).filter((key) => /messages|instructions|arguments|result/.test(key))).toEqual([])
  })

  it("records content only when asked: messages, system instructions, tool arguments and results", async () => {
    const { exporter, tracer } = setup()
    const worker = Worker.create({ client: scriptedClient({ script: [toolTurn, answerTurn] }), systemPrompt: "Be brief.", telemetry: { tracer, recordContent: true } })
    worker.registerTool(weather)
    await worker.run("Weather?")
    const spans = exporter.getFinishedSpans()
    const chat = spans.find((span) => span.attributes["llm_worker.turn"] === 2)!
    expect(JSON.parse(String(chat.attributes["gen_ai.system_instructions"]))).toEqual([{ type: "text", content: "Be brief." }])
    expect(JSON.parse(String(chat.attributes["gen_ai.input.messages"]))).toEqual([
      { role: "user", parts: [{ type: "text", content: "Weather?" }] },
      {
        role: "assistant",
        parts: [
          { type: "tool_call", id: "call_1", name: "get_weather", arguments: '{"city":"Paris"}' },
          { type: "tool_call", id: "call_2", name: "get_weather", arguments: '{"city":"Atlantis"}' }
        ]
      },
      {
        role: "tool",
        parts: [
          { type: "tool_call_response", id: "call_1", response: "sunny in Paris" },
          { type: "tool_call_response", id: "call_2", response: "no such city" }
        ]
      }
    ])
    expect(JSON.parse(String(chat.attributes["gen_ai.output.messages"]))).toEqual([
      { role: "assistant", parts: [{ type: "reasoning", content: "Done." }, { type: "text", content: "Sunny in Paris." }], finish_reason: "end_turn" }
    ])
    const tool = spans.find((span) => span.attributes["gen_ai.tool.call.id"] === "call_1")!
    expect([tool.attributes["gen_ai.tool.call.arguments"], tool.attributes["gen_ai.tool.call.result"]]).toEqual(['{"city":"Paris"}', "sunny in Paris"])
  })

  it("a failed request and a cancelled run end their spans with error status and error.type", async () => {
    const { exporter, tracer } = setup()
    const failing = Worker.create({ client: scriptedClient({ script: [replyError(400, { message: "bad request" })] }), telemetry: { tracer } })
    await expect(failing.run("hi")).rejects.toMatchObject({ _tag: "ClientFailed" })
    const [chat, run] = [...exporter.getFinishedSpans()]
    expect([chat?.name, chat?.status.code, chat?.attributes["error.type"]]).toEqual(["chat scripted-model", 2, "ClientFailed"])
    expect([run?.name, run?.status.code, run?.attributes["error.type"], run?.attributes["llm_worker.run.status"]]).toEqual(["invoke_agent", 2, "ClientFailed", "failed"])

    exporter.reset()
    const stalled = Worker.create({ client: scriptedClient({ script: [reply().text("Hi").stall(60_000).text("!")] }), telemetry: { tracer } })
    stalled.subscribe({ onText: () => stalled.cancel() })
    await expect(stalled.run("hi")).rejects.toMatchObject({ _tag: "Cancelled" })
    expect(exporter.getFinishedSpans().map((span) => [span.name, span.status.code, span.attributes["error.type"]])).toEqual([
      ["chat scripted-model", 2, "Cancelled"],
      ["invoke_agent", 2, "Cancelled"]
    ])
  })

  it("goes to the global tracer provider once one is registered, and is a no-op before", async () => {
    const { exporter, provider } = setup()
    const script = [reply().text("Hi")]
    await Worker.create({ client: scriptedClient({ script }) }).run("before")
    expect(exporter.getFinishedSpans()).toEqual([])
    trace.setGlobalTracerProvider(provider)
    await Worker.create({ client: scriptedClient({ script }) }).run("after")
    expect(byName(exporter.getFinishedSpans())).toEqual(["chat scripted-model", "invoke_agent"])
    exporter.reset()
    await Worker.create({ client: scriptedClient({ script }), telemetry: false }).run("off")
    expect(exporter.getFinishedSpans()).toEqual([])
  })
})
