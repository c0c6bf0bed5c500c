/**
 * What users feel as sessions grow (issue 21's three system-level figures), on the built package with the
 * `openai-chat` scheme and a zero-latency model that answers text (no tools are called):
 * - memory per session: many idle Workers, each holding its own 50-item history, heap per Worker after
 *   `setHistory` and after one turn each, against the size of the history's JSON;
 * - a steady turn's cost as the history grows (10 … 10,000 items): it should grow with the new items only;
 * - a steady turn's cost as the registered tools grow (500 … 10,000): no cliff.
 * Needs `--expose-gc` (`npm run bench -- session-scale` passes it). `LLMW_BENCH_SESSIONS` sets the Worker count.
 */
import { jsonSchema } from "#internal/schema/codec"
import { defineTool } from "#internal/tool/define-tool"
import type { Item } from "#internal/llm/item"
import { openAiChatScheme } from "#internal/llm/schemes/openai-chat"
import { type MutableWorker, Worker } from "#internal/worker/worker"
import { benchTools, round } from "./support/conversation.ts"
import { formatBytes, formatNs, markdownTable, printHeader } from "./support/report.ts"
import { zeroLatencyClient } from "./support/zero-latency.ts"

const gc = globalThis.gc
if (gc === undefined) {
  console.error("bench/session-scale needs --expose-gc")
  process.exit(1)
}
const settledHeap = (): number => {
  gc()
  gc()
  return process.memoryUsage().heapUsed
}

const client = zeroLatencyClient(openAiChatScheme, 0)
const TOOLS = benchTools(1)

/** `items` history items of tool-using rounds, numbered from `from` so that two sessions share no strings. */
const history = (items: number, from: number): ReadonlyArray<Item> => {
  const out: Array<Item> = []
  for (let n = from; out.length < items; n++) out.push(...round("openai-chat", n, TOOLS))
  return out.slice(0, items)
}

const newWorker = (): MutableWorker => Worker.create({ client, systemPrompt: "You answer questions about weather records." })

const memoryPerSession = async (): Promise<Array<Array<string>>> => {
  const sessions = Number(process.env["LLMW_BENCH_SESSIONS"] ?? 10_000)
  const histories = Array.from({ length: sessions }, (_, w) => history(50, w * 10))
  const jsonBytes = histories.reduce((sum, h) => sum + Buffer.byteLength(JSON.stringify(h)), 0) / sessions
  const before = settledHeap()
  const workers = histories.map((h) => {
    const worker = newWorker()
    worker.setHistory(h)
    return worker
  })
  histories.length = 0
  const afterSet = settledHeap()
  for (const worker of workers) await worker.run("And tomorrow?")
  const afterTurn = settledHeap()
  const perSet = (afterSet - before) / sessions
  const perTurn = (afterTurn - before) / sessions
  return [
    [`${sessions.toLocaleString("en")} idle Workers, 50 items each (history JSON ${formatBytes(jsonBytes)} per Worker)`, formatBytes(perSet), `${(perSet / jsonBytes).toFixed(1)}×`, formatBytes(perTurn), `${(perTurn / jsonBytes).toFixed(1)}×`]
  ]
}

/** Median of `turns` turns on one worker, after `warm` turns; the history grows by two items a turn. */
const steadyTurn = async (worker: MutableWorker, warm: number, turns: number): Promise<number> => {
  for (let i = 0; i < warm; i++) await worker.run("Next?")
  const times: Array<number> = []
  for (let i = 0; i < turns; i++) {
    const started = process.hrtime.bigint()
    await worker.run("Next?")
    times.push(Number(process.hrtime.bigint() - started))
  }
  times.sort((a, b) => a - b)
  return times[Math.floor(times.length / 2)] as number
}

const quartiles = (values: ReadonlyArray<number>): string => {
  const sorted = [...values].sort((a, b) => a - b)
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] as number
  return `${formatNs(at(0.5))} (IQR ${formatNs(at(0.25))}–${formatNs(at(0.75))})`
}

const turnByHistory = async (): Promise<Array<Array<string>>> => {
  const rows: Array<Array<string>> = []
  let base: number | undefined
  for (const items of [10, 100, 1_000, 10_000]) {
    const samples: Array<number> = []
    for (let rep = 0; rep < 5; rep++) {
      const worker = newWorker()
      worker.setHistory(history(items, 0))
      samples.push(await steadyTurn(worker, 20, 60))
    }
    samples.sort((a, b) => a - b)
    const median = samples[2] as number
    base ??= median
    rows.push([items.toLocaleString("en"), quartiles(samples), `${(median / base).toFixed(2)}×`])
  }
  return rows
}

const turnByTools = async (): Promise<Array<Array<string>>> => {
  const rows: Array<Array<string>> = []
  let base: number | undefined
  for (const count of [500, 1_500, 2_000, 5_000, 10_000]) {
    const samples: Array<number> = []
    for (let rep = 0; rep < 3; rep++) {
      const worker = newWorker()
      worker.registerTools(
        benchTools(count).map((spec) => defineTool({ name: spec.name.replace("tool_", `t${count}_`), description: spec.description, parameters: jsonSchema(spec.inputSchema), execute: () => "ok" }))
      )
      worker.setHistory(history(50, 0))
      samples.push(await steadyTurn(worker, 10, 30))
    }
    samples.sort((a, b) => a - b)
    const median = samples[1] as number
    base ??= median
    rows.push([count.toLocaleString("en"), quartiles(samples), `${(median / base).toFixed(2)}×`])
  }
  return rows
}

const main = async (): Promise<void> => {
  printHeader("Sessions at scale: memory per idle Worker, a turn's cost by history and by tool count")
  console.log(markdownTable(["sessions", "heap per Worker after setHistory", "÷ JSON", "after one turn each", "÷ JSON"], await memoryPerSession()))
  console.log("\nA steady turn (zero-latency model, text answer) by history length; median of 5 Workers' medians of 60 turns:\n")
  console.log(markdownTable(["history items", "turn", "÷ 10 items"], await turnByHistory()))
  console.log("\nA steady turn by registered tools (50-item history); median of 3 Workers' medians of 30 turns:\n")
  console.log(markdownTable(["tools", "turn", "÷ 500 tools"], await turnByTools()))
}

await main()
