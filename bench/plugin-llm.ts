/**
 * One-shot calls: the cost of our layers around one model answer, with a zero-latency model, in this process.
 * The answer is a small JSON object; every contender parses and validates it against the same zod schema.
 * - `complete(client)`: the bare one-shot text call (request → neutral events → text), the floor;
 * - `completeObject(client, { schema })`: + normalised schema, native format, local parse and validation;
 * - `ctx.llm.complete` / `ctx.llm.completeStructured`: + input checks, trust gate, route resolution, budget and
 *   concurrency slot, deadline timer, audit record (no sink) — the plugin lane, price table off;
 * - `ctx.llm.completeStructured` with the maintained price table (`@pydantic/genai-prices`) pricing each call;
 * - AI SDK `generateObject` over a `LanguageModelV3` whose `doGenerate` returns the same JSON text.
 */
import type { LanguageModelV3, LanguageModelV3GenerateResult } from "@ai-sdk/provider"
import { generateObject } from "ai"
import { z } from "zod"
import type { LlmClient } from "#internal/llm/client"
import type { Event } from "#internal/llm/event"
import { complete, completeObject } from "#internal/llm/completion/complete"
import { openAiChatScheme } from "#internal/llm/schemes/openai-chat"
import { createPluginLlm } from "#internal/plugin-llm/plugin-llm"
import { formatNs, formatRatio, markdownTable, printHeader } from "./support/report.ts"
import { compareOps } from "./support/timing.ts"

const ANSWER = '{"urgency":0.9,"category":"billing"}'
const Triage = z.object({ urgency: z.number(), category: z.enum(["billing", "bug", "other"]) })

const events: ReadonlyArray<Event> = [
  { type: "status", status: "started" },
  { type: "block_start", index: 0, block: { kind: "text" } },
  { type: "block_delta", index: 0, delta: { kind: "text", text: ANSWER.slice(0, 15) } },
  { type: "block_delta", index: 0, delta: { kind: "text", text: ANSWER.slice(15) } },
  { type: "block_stop", index: 0, stopReason: "end_turn" },
  { type: "usage", inputTokens: 40, outputTokens: 12 },
  { type: "status", status: "completed", stopReason: "end_turn" }
]
async function* replay(): AsyncGenerator<Event> {
  for (const event of events) yield event
}
const client: LlmClient = {
  scheme: "openai-chat",
  provider: "openai",
  model: "gpt-4.1-mini",
  encodeRequest: (request) => openAiChatScheme.encodeRequest(request),
  validate: () => [],
  // A real provider client encodes every request it sends; so does this one.
  stream: (request) => {
    openAiChatScheme.encodeRequest(request)
    return replay()
  }
}
const model: LanguageModelV3 = {
  specificationVersion: "v3",
  provider: "zero-latency",
  modelId: "zero-latency-model",
  supportedUrls: {},
  doGenerate: async (): Promise<LanguageModelV3GenerateResult> => ({
    content: [{ type: "text", text: ANSWER }],
    finishReason: { unified: "stop", raw: "end_turn" },
    usage: { inputTokens: { total: 40, noCache: 40, cacheRead: undefined, cacheWrite: undefined }, outputTokens: { total: 12, text: 12, reasoning: undefined } },
    warnings: []
  }),
  doStream: async () => {
    throw new Error("not used")
  }
}

const host = (priced: boolean) =>
  createPluginLlm({ active: { provider: "openai", model: "gpt-4.1-mini", apiKey: "k" }, audit: false, createClient: () => client, config: { llm: { price_table: priced ? "genai-prices" : "none" } } }).forPlugin("bench")
const plain = host(false)
const priced = host(true)
const input = [{ type: "text" as const, text: "I was charged twice!" }]
const instructions = "Score urgency and pick a category."

const contenders: ReadonlyArray<readonly [string, () => Promise<unknown>]> = [
  ["`complete(client)` (text)", () => complete(client, { input: "I was charged twice!" })],
  ["`completeObject(client, { schema })`", () => completeObject(client, { input: "I was charged twice!", schema: Triage })],
  ["`ctx.llm.complete`", () => plain.complete({ messages: [{ role: "user", content: "I was charged twice!" }] })],
  ["`ctx.llm.completeStructured`", () => plain.completeStructured({ instructions, input, jsonSchema: Triage })],
  ["`ctx.llm.completeStructured` + genai-prices cost", () => priced.completeStructured({ instructions, input, jsonSchema: Triage })],
  ["AI SDK `generateObject`", () => generateObject({ model, schema: Triage, prompt: "I was charged twice!" })]
]

const main = async (): Promise<void> => {
  printHeader("One-shot calls: structured output and the plugin lane, zero-latency model")
  // Every contender must really produce the typed answer.
  const object = await completeObject(client, { input: "x", schema: Triage })
  const lane = await priced.completeStructured({ instructions, input, jsonSchema: Triage })
  if (!object.output.ok || lane.contentType !== "json" || lane.usage.costUsd === undefined) throw new Error("a contender did not decode the answer")
  const timings = await compareOps(contenders.map(([, op]) => op), 15, 40e6)
  console.log("p50 per call (median of interleaved rounds); ratio = this ÷ `complete(client)` in the same round.\n")
  console.log(
    markdownTable(
      ["contender", "p50", "p99", "× bare complete"],
      contenders.map(([name], i) => {
        const t = timings[i]
        if (t === undefined) throw new Error("missing timing")
        return [name, formatNs(t.p50), formatNs(t.p99), `${t.ratio.toFixed(2)}× (${t.ratioMin.toFixed(2)}–${t.ratioMax.toFixed(2)})`]
      })
    )
  )
  const sdk = timings.at(-1)
  const ours = timings[3]
  if (sdk !== undefined && ours !== undefined) console.log(`\n\`ctx.llm.completeStructured\` ÷ AI SDK \`generateObject\`: ${formatRatio(ours.p50, sdk.p50)}`)
}

await main()
