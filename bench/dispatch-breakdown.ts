/**
 * Where a `callTool` spends its time: each step of the dispatch path timed on its own, for the same weather
 * tool as `bench/dispatch.ts`. Steps are measured in isolation, so they do not add up exactly to the whole
 * (isolated steps run hotter), but they show which step a change should target.
 */
import { Schema } from "effect"
import { z } from "zod"
import { type BoundedCodec, jsonSchema } from "#internal/schema/codec"
import { defineTool } from "#internal/tool/define-tool"
import type { ToolContext } from "#internal/tool/tool"
import { registerDefinitions } from "#internal/tool-server/registration"
import { ToolServer } from "#internal/tool-server/tool-server"
import { Item } from "#internal/llm/item"
import type { JsonSchema } from "#internal/schema/json-schema"
import { prepareArguments } from "#internal/worker/prepared-arguments"
import { type BatchEnd, executeBatch, settleBatch } from "#internal/worker/tool-execution"
import { ownedOutputItem, toOutputItem } from "#internal/worker/tool-outcome"
import { benchCore } from "./support/worker-core.ts"
import { formatNs, markdownTable, printHeader } from "./support/report.ts"
import { clockName, timeOp } from "./support/timing.ts"

const VALID = '{"city":"Lisbon","days":3}'

interface WeatherArgs {
  readonly city: string
  readonly days?: number | undefined
}

const forecast = async ({ city, days }: WeatherArgs) => ({ city, days: days ?? 1, forecast: "sunny", highC: 24 })

const sources = {
  "raw JSON Schema": jsonSchema<WeatherArgs>({
    type: "object",
    properties: { city: { type: "string" }, days: { type: "integer", minimum: 1, maximum: 14 } },
    required: ["city"],
    additionalProperties: false
  }),
  "zod 4": z.object({ city: z.string(), days: z.int().min(1).max(14).optional() }),
  "Effect Schema": Schema.Struct({
    city: Schema.String,
    days: Schema.optionalKey(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 14 })))
  })
} as const

const main = async (): Promise<void> => {
  printHeader("Dispatch breakdown: the steps of one `callTool`")
  console.log(`Clock: ${clockName()}\n`)
  const parsed: unknown = JSON.parse(VALID)
  const output = await forecast({ city: "Lisbon", days: 3 })
  const rows: Array<ReadonlyArray<string>> = []
  const row = async (step: string, op: () => unknown): Promise<void> => {
    const t = await timeOp(op)
    rows.push([step, formatNs(t.avg), formatNs(t.p50)])
  }

  await row("`JSON.parse` of the argument text", () => JSON.parse(VALID))
  for (const [name, schema] of Object.entries(sources)) {
    const definition = defineTool({ name: "weather", description: "d", parameters: schema, execute: forecast })
    await row(`\`codec.decode\` (${name}: JSON Schema check${name === "raw JSON Schema" ? "" : " + library decode"})`, () =>
      definition.codec.decode(parsed)
    )
  }
  const bounded = defineTool({ name: "weather", description: "d", parameters: sources["raw JSON Schema"], execute: forecast }).codec as BoundedCodec<unknown>
  await row("`codec.checkWithin` (raw JSON Schema, bounds from the text: no second measure of the value, no result record)", () =>
    bounded.checkWithin(parsed, VALID.length, VALID.length)
  )
  await row("await the async handler", () => forecast({ city: "Lisbon", days: 3 }))
  await row("`JSON.stringify` of the result", () => JSON.stringify(output))

  const definition = defineTool({ name: "weather", description: "d", parameters: sources["raw JSON Schema"], execute: forecast })
  const [meta, tool] = definition()
  const context: ToolContext = { callId: "call_1", signal: new AbortController().signal, meta }
  await row("`tool.execute` (raw JSON Schema), no server", () => tool.execute(VALID, context))
  const handle = new ToolServer().handle()
  registerDefinitions(handle, [definition])
  await row("`handle.callTool` (raw JSON Schema), no signal", () => handle.callTool("weather", VALID))
  const signal = new AbortController().signal
  await row("`handle.callTool` (raw JSON Schema), with `signal`", () => handle.callTool("weather", VALID, { signal }))

  // The Worker's own steps around the call (bench/dispatch.ts times the whole path, "Worker tool path").
  const core = benchCore(handle, "anthropic")
  const schema = (handle.getTool("weather") as { readonly meta: { readonly schema: JsonSchema } }).meta.schema
  await row("`prepareArguments` (Worker: depth bound, `JSON.parse`, object check)", () => prepareArguments(core, schema, VALID))
  const offered: ReadonlySet<string> = new Set(["weather"])
  const batch = [Item.functionCall("call_1", "weather", VALID)]
  await row("`executeBatch`, one call, no hooks (the Worker's per-call path)", () => executeBatch(core, batch, new Map(), signal, offered))

  // The guarded path's fixed costs, each alone.
  await row("`new AbortController()`", () => new AbortController())
  await row("abort listener added and removed on a signal", () => {
    const listener = (): void => undefined
    signal.addEventListener("abort", listener, { once: true })
    signal.removeEventListener("abort", listener)
  })
  await row("`Promise.race` of a settled promise and a pending one", () =>
    Promise.race([Promise.resolve(1), new Promise<never>(() => undefined)])
  )

  console.log(markdownTable(["step", "avg/op", "p50"], rows))

  // Bytes allocated per call: a figure a loaded machine does not move, and at this scale what a call allocates
  // is what its garbage collection costs. Few enough calls per sample that no scavenge runs in between.
  const gc = (globalThis as { gc?: () => void }).gc
  if (gc === undefined) return
  const bytesPerCall = async (op: () => unknown): Promise<number> => {
    for (let i = 0; i < 20_000; i++) await op()
    const samples: Array<number> = []
    for (let sample = 0; sample < 15; sample++) {
      gc()
      const before = process.memoryUsage().heapUsed
      for (let i = 0; i < 1_000; i++) await op()
      samples.push((process.memoryUsage().heapUsed - before) / 1_000)
    }
    return samples.sort((x, y) => x - y)[7] as number
  }
  const handlers = new Map([["weather", forecast]])
  const baseline = async (raw: string): Promise<string> => {
    const handler = handlers.get("weather")
    if (handler === undefined) throw new Error("unknown tool")
    const args = JSON.parse(raw) as { city?: unknown; days?: unknown }
    if (typeof args.city !== "string") throw new Error("city: expected string")
    return JSON.stringify(await handler({ city: args.city, days: args.days as number | undefined }))
  }
  const noDecisions = new Map()
  // The turn loop's way (decision 0089): the result recorded from within the batch (`settleBatch`), one promise awaited.
  const settleWith = (item: typeof toOutputItem) => (end: BatchEnd): string => {
    const outcome = end.kind === "sole" ? end.outcome : end.kind === "done" ? end.outcomes[0] : undefined
    if (outcome === undefined) throw new Error("no outcome")
    return item(outcome).output
  }
  const toItem = settleWith(toOutputItem)
  const toOwned = settleWith(ownedOutputItem)
  const workerPath = (settle: (end: BatchEnd) => string): Promise<string> => settleBatch(core, batch, noDecisions, signal, offered, settle)
  const allocations: Array<ReadonlyArray<string>> = []
  for (const [step, op] of [
    ["hand-written baseline (parse, check, await, stringify)", () => baseline(VALID)],
    ["`handle.callTool` (raw JSON Schema), no signal", () => handle.callTool("weather", VALID)],
    ["`handle.callTool` (raw JSON Schema), with `signal`", () => handle.callTool("weather", VALID, { signal })],
    ["`executeBatch`, one call, no hooks", () => executeBatch(core, batch, new Map(), signal, offered)],
    // The whole Worker row of bench/dispatch.ts: the batch recorded as the turn loop records it, and the result item.
    ["Worker path: `settleBatch` → result item (`toOutputItem`)", () => workerPath(toItem)],
    ["Worker path: `settleBatch` → the history's own item (`ownedOutputItem`)", () => workerPath(toOwned)]
  ] as const) {
    allocations.push([step, `${Math.round(await bytesPerCall(op))} B`])
  }
  console.log("\nBytes allocated per call (median of 15 samples of 1,000 calls, heap growth with no scavenge between):\n")
  console.log(markdownTable(["step", "allocated/call"], allocations))
}

await main()
