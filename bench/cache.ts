/**
 * Cache: how much of each request repeats the one before, over a 20-turn cache-locked conversation per wire
 * format. Everything is real except the model: `createLlmClient` over loopback HTTP against the replay provider
 * (`src/testing/replay-provider.ts`), which answers with the recorded-style transcripts in test/fixtures/sse.
 * Every third turn the model calls two tools (get_weather, files_read) before answering, so the history grows by
 * messages, tool calls and tool outputs. The request bodies are taken from what the server received.
 *
 * Reported per format: the locked prefix (bytes fixed by `lock()`), whether every request repeated it byte for
 * byte, and for each request after the first the share of the previous request's bytes it repeats as its own
 * prefix (what a provider's prefix cache can reuse) and the share of its own bytes that prefix makes up.
 */
import { readFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { createLlmClient } from "#internal/llm/llm-client"
import type { SchemeName } from "#internal/llm/scheme"
import { type ReplayStep, startReplayProvider } from "#internal/testing/replay-provider"
import { ToolMeta } from "#internal/tool/tool-meta"
import type { ToolDefinition } from "#internal/tool/tool"
import { commonPrefixLength } from "#internal/worker/cache-lock"
import { Worker } from "#internal/worker/worker"
import { formatBytes, markdownTable, printHeader } from "./support/report.ts"

const FORMATS: ReadonlyArray<{ readonly scheme: SchemeName; readonly provider: string }> = [
  { scheme: "openai-chat", provider: "openai" },
  { scheme: "openai-responses", provider: "openai-responses" },
  { scheme: "anthropic", provider: "anthropic" },
  { scheme: "gemini", provider: "gemini" }
]
const TURNS = 20
const TOOL_TURN_EVERY = 3

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), "..", "test", "fixtures", "sse")
const transcript = (scheme: SchemeName, name: string): string => readFileSync(join(FIXTURES, scheme, `${name}.sse`), "utf8")

const tool = (name: string): ToolDefinition => () => [
  ToolMeta.make(name).description(`The ${name} tool.`).inputSchema({
    type: "object",
    properties: { location: { type: "string" }, path: { type: "string" } },
    additionalProperties: false
  }),
  { execute: async (args: string) => `${name} says: ${args}` }
]

interface Outcome {
  readonly scheme: SchemeName
  readonly prefixBytes: number
  readonly bodies: ReadonlyArray<Buffer>
  /** The worker's own verdict on each request. */
  readonly workerIntact: ReadonlyArray<boolean>
}

const converse = async (scheme: SchemeName, provider: string): Promise<Outcome> => {
  const script: Array<ReplayStep> = []
  for (let turn = 0; turn < TURNS; turn++) {
    if (turn % TOOL_TURN_EVERY === 0) script.push({ kind: "stream", transcript: transcript(scheme, "parallel-tool-calls") })
    script.push({ kind: "stream", transcript: transcript(scheme, "text") })
  }
  const server = await startReplayProvider({ scheme, script })
  try {
    const client = createLlmClient({ provider, model: "bench-model", apiKey: "bench-key", baseUrl: server.baseUrl, retry: { maxRetries: 0 } })
    const mutable = Worker.create({ client, systemPrompt: "You are a careful assistant. Keep answers short.", config: { maxTokens: 256, temperature: 0 } })
    mutable.registerTools([tool("get_weather"), tool("files_read")])
    mutable.pushItem(
      { type: "message", role: "user", content: [{ type: "input_text", text: "Remember: answers are one sentence." }] },
      { type: "message", role: "assistant", content: [{ type: "output_text", text: "Understood." }] }
    )
    const worker = mutable.lock()
    const workerIntact: Array<boolean> = []
    for (let turn = 0; turn < TURNS; turn++) {
      const result = await worker.run(`Question ${turn}: what is the weather in Paris?`)
      for (const report of result.cache) workerIntact.push(report.locked?.intact === true)
    }
    return { scheme, prefixBytes: worker.lockedPrefix.prefixBytes, bodies: server.requests.map((r) => Buffer.from(r.body, "utf8")), workerIntact }
  } finally {
    await server.close()
  }
}

const percent = (x: number): string => `${(x * 100).toFixed(1)}%`

const main = async (): Promise<void> => {
  printHeader("Cache: prefix reuse over a 20-turn cache-locked conversation")
  console.log(
    `Real client over loopback HTTP against the replay provider; tool calls (two per call turn) every ${TOOL_TURN_EVERY} turns. ` +
      "\"Of previous\" = bytes this request repeats from the start of the previous request ÷ the previous request's size; " +
      "\"of this\" = the same bytes ÷ this request's size. Worst and median over requests 2…n.\n"
  )
  const outcomes: Array<Outcome> = []
  for (const { scheme, provider } of FORMATS) outcomes.push(await converse(scheme, provider))

  const rows = outcomes.map(({ scheme, prefixBytes, bodies, workerIntact }) => {
    const locked = (bodies[0] as Buffer).subarray(0, prefixBytes)
    const keptLocked = bodies.filter((body) => body.subarray(0, prefixBytes).equals(locked)).length
    const ofPrevious: Array<number> = []
    const ofThis: Array<number> = []
    for (let n = 1; n < bodies.length; n++) {
      const previous = bodies[n - 1] as Buffer
      const body = bodies[n] as Buffer
      const shared = commonPrefixLength(previous, body)
      ofPrevious.push(shared / previous.length)
      ofThis.push(shared / body.length)
    }
    const median = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[xs.length >> 1] ?? 0
    return [
      scheme,
      String(bodies.length),
      formatBytes(prefixBytes),
      `${keptLocked}/${bodies.length}`,
      `${workerIntact.filter(Boolean).length}/${workerIntact.length}`,
      percent(Math.min(...ofPrevious)),
      percent(median(ofPrevious)),
      percent(Math.min(...ofThis)),
      percent(median(ofThis)),
      formatBytes((bodies.at(-1) as Buffer).length)
    ]
  })
  console.log(
    markdownTable(
      [
        "format",
        "requests",
        "locked prefix",
        "locked prefix kept (server bytes)",
        "worker check intact",
        "of previous, worst",
        "of previous, median",
        "of this, worst",
        "of this, median",
        "last request"
      ],
      rows
    )
  )
  const allKept = rows.every((row) => row[3]?.split("/")[0] === row[3]?.split("/")[1] && row[4]?.split("/")[0] === row[4]?.split("/")[1])
  console.log(`\nTarget: 100% of the locked prefix on every request of every format — ${allKept ? "met" : "MISSED"}.`)
}

await main()
