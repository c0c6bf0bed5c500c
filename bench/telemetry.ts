/**
 * Telemetry: what the OpenTelemetry seam costs the turn loop. The same zero-latency script as `turn.ts` (the
 * model asks for a tool per step, then answers) runs with telemetry turned off (`telemetry: false`), with the
 * default (the global tracer, no provider registered: the no-op path every user gets), and recording into an
 * SDK tracer with an in-memory exporter. Ratios are against "off", measured interleaved in this process.
 */
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base"
import { z } from "zod"
import { anthropicScheme } from "#internal/llm/schemes/anthropic"
import { noTracing, workerTracing } from "#internal/telemetry/worker-tracing"
import type { TelemetryOptions, WorkerTracing } from "#internal/telemetry/worker-tracing"
import { Item } from "#internal/llm/item"
import { defineTool } from "#internal/tool/define-tool"
import { Worker } from "#internal/worker/worker"
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

/**
 * The seam alone, without the loop around it: one run with one request and one tool call through each tracing,
 * so the no-op path's cost is seen apart from the loop's noise. Per run, in ns.
 */
const request = { model: "m", items: [Item.userText("hi")], tools: [], config: {} }
const response = { usage: { inputTokens: 1, outputTokens: 1 }, stopReason: "end_turn" as const, items: [] }
const call = { callId: "c", name: "t", arguments: "{}" }
const outcome = { status: "ok", output: "x", isError: false }
const seam = (tracing: WorkerTracing) => async (): Promise<void> => {
  const run = tracing.run({ provider: "anthropic", model: "m" })
  run.request(request, 1).succeeded(response)
  const tool = run.tool(call)
  await tool.within(async () => undefined)
  tool.ended(outcome)
  run.finished({ status: "finished", usage: response.usage })
}
const [none, noOp, recorded] = await compareOps([seam(noTracing), seam(workerTracing()), seam(workerTracing({ tracer }))], 9, 10e6)
if (none === undefined || noOp === undefined || recorded === undefined) throw new Error("missing timing")
console.log("\nThe seam alone: one run with one request and one tool call (p50 per run).\n")
console.log(
  markdownTable(
    ["tracing", "per run (p50)", "÷ off"],
    [
      ["off (`noTracing`)", formatNs(none.p50), "1.00×"],
      ["default, no tracer provider", formatNs(noOp.p50), ratio(noOp)],
      ["recording", formatNs(recorded.p50), ratio(recorded)]
    ]
  )
)
