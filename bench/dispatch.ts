/**
 * Dispatch: raw JSON argument text from a model → decoded, validated typed call → output text, for one small
 * typed tool. Our tool server (once per schema source) against a hand-written baseline and three peers doing the
 * same work in the same process. Prints a Markdown table with ratios to the baseline.
 */
import { asSchema, executeTool, safeParseJSON } from "@ai-sdk/provider-utils"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js"
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import { tool as aiSdkTool } from "ai"
import { Effect, Schema, Stream } from "effect"
import { Tool as EffectTool, Toolkit } from "effect/ai"
import { z } from "zod"
import { jsonSchema } from "#internal/schema/codec"
import { defineTool } from "#internal/tool/define-tool"
import { registerDefinitions } from "#internal/tool-server/registration"
import { ToolServer, type ToolServerHandle } from "#internal/tool-server/tool-server"
import { formatNs, markdownTable, printHeader } from "./support/report.ts"
import { type Compared, compareOps } from "./support/timing.ts"

const VALID = '{"city":"Lisbon","days":3}'
const INVALID = '{"city":"Lisbon","days":20}'

interface WeatherArgs {
  readonly city: string
  readonly days?: number | undefined
}

interface Forecast {
  readonly city: string
  readonly days: number
  readonly forecast: string
  readonly highC: number
}

const forecast = async ({ city, days }: WeatherArgs): Promise<Forecast> => ({ city, days: days ?? 1, forecast: "sunny", highC: 24 })
const EXPECTED = JSON.stringify({ city: "Lisbon", days: 3, forecast: "sunny", highC: 24 })

const zodArgs = z.object({ city: z.string(), days: z.int().min(1).max(14).optional() })
const effectArgs = Schema.Struct({
  city: Schema.String,
  days: Schema.optionalKey(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 14 })))
})
const rawArgs = jsonSchema<WeatherArgs>({
  type: "object",
  properties: { city: { type: "string" }, days: { type: "integer", minimum: 1, maximum: 14 } },
  required: ["city"],
  additionalProperties: false
})

interface Contender {
  readonly label: string
  readonly schema: string
  readonly call: (raw: string) => Promise<string>
}

/** What a careful hand-written dispatcher does: look up, parse, check every field, await the handler, stringify. */
const baseline = (): Contender => {
  const handlers = new Map<string, (args: WeatherArgs) => Promise<Forecast>>([["weather", forecast]])
  return {
    label: "baseline: JSON.parse + field checks + await + JSON.stringify",
    schema: "hand-written",
    call: async (raw) => {
      const handler = handlers.get("weather")
      if (handler === undefined) throw new Error("unknown tool")
      const args: unknown = JSON.parse(raw)
      if (typeof args !== "object" || args === null || Array.isArray(args)) throw new Error("not an object")
      const record = args as Record<string, unknown>
      for (const key in record) if (key !== "city" && key !== "days") throw new Error(`${key}: not allowed`)
      const city = record["city"]
      if (typeof city !== "string") throw new Error("city: expected string")
      const days = record["days"]
      if (days !== undefined && !(Number.isInteger(days) && (days as number) >= 1 && (days as number) <= 14)) {
        throw new Error("days: expected integer 1..14")
      }
      return JSON.stringify(await handler({ city, days: days as number | undefined }))
    }
  }
}

const serverWith = (parameters: typeof zodArgs | typeof effectArgs | typeof rawArgs): ToolServerHandle => {
  const handle = new ToolServer().handle()
  registerDefinitions(handle, [
    defineTool({
      name: "weather",
      description: "Weather forecast for a city",
      parameters,
      execute: (args) => forecast(args as WeatherArgs)
    })
  ])
  return handle
}

const ours = (schema: string, parameters: typeof zodArgs | typeof effectArgs | typeof rawArgs): Contender => {
  const handle = serverWith(parameters)
  return { label: "llm-worker `handle.callTool`", schema, call: (raw) => handle.callTool("weather", raw) }
}

/** The same call as a Worker makes it, with a cancellation signal: the guarded path (AbortController + race). */
const oursWithSignal = (): Contender => {
  const handle = serverWith(rawArgs)
  const signal = new AbortController().signal
  return {
    label: "llm-worker `handle.callTool` with `signal`",
    schema: "raw JSON Schema",
    call: (raw) => handle.callTool("weather", raw, { signal })
  }
}

/** The AI SDK's own steps for a tool call: `asSchema` + `safeParseJSON` (parse-tool-call) then `executeTool`. */
const aiSdk = (): Contender => {
  const tools = {
    weather: aiSdkTool({ description: "Weather forecast for a city", inputSchema: zodArgs, execute: forecast })
  }
  return {
    label: "AI SDK 6: `safeParseJSON` + `executeTool`",
    schema: "zod 4",
    call: async (raw) => {
      const tool = tools.weather
      if (tool.execute === undefined) throw new Error("tool has no execute")
      const parsed = await safeParseJSON({ text: raw, schema: asSchema(tool.inputSchema) })
      if (!parsed.success) throw parsed.error
      let output: unknown
      for await (const part of executeTool({
        execute: tool.execute,
        input: parsed.value,
        options: { toolCallId: "call_1", messages: [] }
      })) {
        if (part.type === "final") output = part.output
      }
      return JSON.stringify(output)
    }
  }
}

/** effect/ai: a Toolkit with handlers; `handle` decodes the parameters, runs the handler, encodes the result. */
const effectAi = async (): Promise<Contender> => {
  const Weather = EffectTool.make("weather", {
    description: "Weather forecast for a city",
    parameters: effectArgs,
    success: Schema.Struct({ city: Schema.String, days: Schema.Number, forecast: Schema.String, highC: Schema.Number })
  })
  const toolkit = Toolkit.make(Weather)
  const layer = toolkit.toLayer({ weather: (args) => Effect.promise(() => forecast(args)) })
  const handlers = await Effect.runPromise(toolkit.pipe(Effect.provide(layer)))
  return {
    label: "effect/ai 4.1: `Toolkit` handler `handle`",
    schema: "Effect Schema",
    call: async (raw) => {
      const last = await Effect.runPromise(
        handlers.handle("weather", JSON.parse(raw) as WeatherArgs).pipe(Effect.flatMap(Stream.runLast))
      )
      if (last._tag === "None" || last.value.isFailure) throw new Error("tool failed")
      return JSON.stringify(last.value.encodedResult)
    }
  }
}

/** MCP SDK: server and client linked by the in-memory transport (JSON-RPC framing, no sockets). */
const mcp = async (): Promise<Contender & { readonly close: () => Promise<void> }> => {
  const server = new McpServer({ name: "bench", version: "1.0.0" })
  server.registerTool(
    "weather",
    { description: "Weather forecast for a city", inputSchema: zodArgs.shape },
    async (args) => ({ content: [{ type: "text", text: JSON.stringify(await forecast(args)) }] })
  )
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
  await server.connect(serverSide)
  const client = new Client({ name: "bench-client", version: "1.0.0" })
  await client.connect(clientSide)
  return {
    label: "MCP SDK 1.32: `client.callTool`, in-memory transport",
    schema: "zod 4",
    call: async (raw) => {
      const result = await client.callTool({ name: "weather", arguments: JSON.parse(raw) as Record<string, unknown> })
      const first = (result.content as ReadonlyArray<{ type: string; text?: string }>)[0]
      if (result.isError === true || first?.type !== "text" || first.text === undefined) throw new Error("tool failed")
      return first.text
    },
    close: () => client.close()
  }
}

/** Every contender must give the same answer and refuse the same bad input, or the timings compare nothing. */
const verify = async (contender: Contender): Promise<void> => {
  const output = await contender.call(VALID)
  if (output !== EXPECTED) throw new Error(`${contender.label} returned ${output}, expected ${EXPECTED}`)
  const refused = await contender.call(INVALID).then(
    () => false,
    () => true
  )
  if (!refused) throw new Error(`${contender.label} accepted days: 20`)
}

const isOurs = (c: Contender): boolean => c.label.startsWith("llm-worker")

const main = async (): Promise<void> => {
  printHeader("Dispatch: raw JSON arguments → typed call → output text")
  const mcpContender = await mcp()
  const contenders: ReadonlyArray<Contender> = [
    baseline(),
    ours("Effect Schema", effectArgs),
    ours("zod 4", zodArgs),
    ours("raw JSON Schema", rawArgs),
    oursWithSignal(),
    aiSdk(),
    await effectAi(),
    mcpContender
  ]
  for (const contender of contenders) await verify(contender)
  const results = await compareOps(contenders.map((c) => () => c.call(VALID)))
  await mcpContender.close()

  const measured = contenders.map((c, i) => ({ c, t: results[i] as Compared }))
  console.log(
    markdownTable(
      ["implementation", "schema", "avg/op", "p50/op", "× baseline (p50)", "range over rounds"],
      measured.map(({ c, t }) => [
        c.label,
        c.schema,
        formatNs(t.avg),
        formatNs(t.p50),
        `${t.ratio.toFixed(2)}×`,
        `${t.ratioMin.toFixed(2)}–${t.ratioMax.toFixed(2)}`
      ])
    )
  )
  console.log(
    "\nEvery contender is checked first: same output text for valid arguments, refusal of `days: 20`. " +
      "Times are medians over interleaved rounds; ratios are per-round p50 ratios to the baseline, median and range."
  )

  const peers = measured.filter(({ c }) => !isOurs(c) && c !== contenders[0])
  const fastestPeer = peers.reduce((a, b) => (b.t.ratio < a.t.ratio ? b : a))
  console.log("\nTarget: within 1.3× of the baseline and ahead of every peer.\n")
  for (const { c, t } of measured.filter(({ c }) => isOurs(c))) {
    const sameSchema = peers.filter((p) => p.c.schema === c.schema)
    const vsSame = sameSchema.map((p) => `${(t.ratio / p.t.ratio).toFixed(2)}× ${p.c.label.split(":")[0]}`).join(", ")
    console.log(
      `- ${c.label} (${c.schema}): ${t.ratio.toFixed(2)}× baseline — ${t.ratio <= 1.3 ? "within 1.3×" : "MISSES 1.3×"}; ` +
        `${t.ratio < fastestPeer.t.ratio ? "ahead of" : "BEHIND"} the fastest peer (${fastestPeer.c.label.split(":")[0]}, ` +
        `${(t.ratio / fastestPeer.t.ratio).toFixed(2)}× its time)` +
        (vsSame === "" ? "" : `; against peers on the same schema library: ${vsSame}`)
    )
  }
}

await main()
