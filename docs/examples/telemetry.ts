import { trace } from "@opentelemetry/api"
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from "@opentelemetry/sdk-trace-base"
import { z } from "zod"
import { defineTool, Worker } from "llm-worker"
import { reply, scriptedClient } from "llm-worker/testing"

// The application registers a tracer provider (here the SDK's, exporting to memory); until it does, the
// Worker's spans are no-ops. In production this is your OTLP exporter setup.
const exporter = new InMemorySpanExporter()
trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }))

const client = scriptedClient({
  script: [
    reply().toolCall("get_weather", { city: "Paris" }, { id: "call_1" }).usage({ inputTokens: 80, outputTokens: 12, cacheReadTokens: 64 }),
    reply().reasoning("Easy.").text("Sunny in Paris.").usage({ inputTokens: 120, outputTokens: 20, reasoningTokens: 6 })
  ]
})
const worker = Worker.create({ client, telemetry: { agentName: "weather-bot" } }) // add recordContent: true for messages
worker.registerTool(defineTool({ name: "get_weather", description: "Weather", parameters: z.object({ city: z.string() }), execute: ({ city }) => `sunny in ${city}` }))
await worker.run("Weather in Paris?")

// Print the span tree with each span's GenAI attributes (timings and ids left out: they vary).
const spans = exporter.getFinishedSpans()
const print = (span: ReadableSpan, depth: number): void => {
  const attributes = Object.entries(span.attributes).map(([key, value]) => `${key}=${JSON.stringify(value)}`)
  console.log(`${"  ".repeat(depth)}${span.name} [${["INTERNAL", "SERVER", "CLIENT"][span.kind]}]`)
  for (const attribute of attributes) console.log(`${"  ".repeat(depth + 2)}${attribute}`)
  const children = spans.filter((child) => child.parentSpanContext?.spanId === span.spanContext().spanId)
  children.sort((a, b) => Number(a.attributes["llm_worker.turn"] ?? 1.5) - Number(b.attributes["llm_worker.turn"] ?? 1.5))
  for (const child of children) print(child, depth + 1)
}
for (const root of spans.filter((span) => span.parentSpanContext === undefined)) print(root, 0)
