/**
 * Telemetry: what the OpenTelemetry seam costs the turn loop. The same zero-latency script as `turn.ts` (the
 * model asks for a tool per step, then answers) runs with telemetry turned off (`telemetry: false`), with the
 * default (the global tracer, no provider registered: the no-op path every user gets), and recording into an
 * SDK tracer with an in-memory exporter. Ratios are against "off", measured interleaved in this process.
 */
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base"
import { z } from "zod"
import { anthropicScheme } from "../src/llm/schemes/anthropic.ts"
import type { TelemetryOptions } from "../src/telemetry/worker-tracing.ts"
import { defineTool } from "../src/tool/define-tool.ts"
import { Worker } from "../src/worker/worker.ts"
import { formatNs, markdownTable, printHeader } from "./support/report.ts"
import { compareOps } from "./support/timing.ts"
import { TOOL_NAME, zeroLatencyClient } from "./support/zero-latency.ts"

const ROUNDS = 8
const exporter = new InMemorySpanExporter()
const tracer = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }).getTracer("bench")

const loop = (telemetry: TelemetryOptions | false | undefined) => {
  const worker = Worker.create({ client: zeroLatencyClient(anthropicScheme, ROUNDS), systemPrompt: "Answer from the records.", ...(telemetry === undefined ? {} : { telemetry }) })
  worker.registerTool(defineTool({ name: TOOL_NAME, description: "Looks a record up by id.", parameters: z.object({ id: z.string() }), execute: async ({ id }) => `record ${id}: sunny` }))
  return async (): Promise<number> => {
    worker.setHistory([])
    exporter.reset()
    return (await worker.run("What does record r-42 say?")).items.length
  }
}

printHeader("Telemetry: cost of the span seam per model step, zero-latency model")
// A second "off" loop is the control: its ratio to the first shows how much of a difference is noise.
const [off, control, noop, recording] = await compareOps([loop(false), loop(false), loop(undefined), loop({ tracer })], 15, 50e6)
if (off === undefined || control === undefined || noop === undefined || recording === undefined) throw new Error("missing timing")
const steps = ROUNDS + 1
const ratio = (c: { ratio: number; ratioMin: number; ratioMax: number }) => `${c.ratio.toFixed(2)}× (${c.ratioMin.toFixed(2)}–${c.ratioMax.toFixed(2)})`
console.log(
  "µs/step = p50 of a run ÷ its 9 steps; ÷ off = median over interleaved rounds of the per-round ratio (min–max).\n"
)
console.log(
  markdownTable(
    ["telemetry", "µs/step (p50)", "÷ off"],
    [
      ["off (`telemetry: false`)", formatNs(off.p50 / steps), "1.00×"],
      ["off again (control)", formatNs(control.p50 / steps), ratio(control)],
      ["default, no tracer provider (no-op spans)", formatNs(noop.p50 / steps), ratio(noop)],
      ["recording (SDK tracer, in-memory exporter)", formatNs(recording.p50 / steps), ratio(recording)]
    ]
  )
)
