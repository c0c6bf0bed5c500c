/**
 * Short answers, per call: what the client costs where a call's fixed costs (building the attempt, its deadlines
 * and its abort) weigh most, and what those abort pieces cost on their own (decision 0092).
 *
 * First table: one call of the client (`createLlmClient(...).stream()` drained with `for await`) against the
 * client floor (support/client-floor.ts) on the same short body, fed as fetch gives it (support/fetched-answers.ts),
 * per wire format. Bodies: one text delta, and ten; 1 KiB reads.
 *
 * Second table: one attempt's fetch, body reader and abort, three ways. The floor carries the abort nowhere (what
 * the transport did before 0092); then 0092's first version, which listened on the attempt's signal
 * (`fetchBoundByAbort`, `cancelReaderOnAbort`), and the kept `AttemptAbort`, which needs no listener.
 */
import type { SchemeName } from "#internal/llm/scheme"
import { cancelReaderOnAbort, fetchBoundByAbort } from "#internal/llm/transport/abort-bound"
import { AttemptAbort } from "#internal/llm/transport/attempt-abort"
import { formatBytes, formatNs, markdownTable, printHeader } from "./support/report.ts"
import { viaClient, viaFloor } from "./support/fetched-answers.ts"
import { chunkBytes, syntheticSse } from "./support/sse-corpus.ts"
import { type Compared, compareOps } from "./support/timing.ts"

const FORMATS: ReadonlyArray<{ readonly scheme: SchemeName; readonly provider: string }> = [
  { scheme: "openai-chat", provider: "openai" },
  { scheme: "openai-responses", provider: "openai-responses" },
  { scheme: "anthropic", provider: "anthropic" },
  { scheme: "gemini", provider: "gemini" }
]
const TEXT_DELTAS = [1, 10] as const
const READ_BYTES = 1024
const ROUNDS = Number(process.env["BENCH_SHORT_ROUNDS"] ?? 15)

printHeader("Short answers: the client per call, and what an attempt's abort costs")

const rows: Array<Array<string>> = []
for (const { scheme, provider } of FORMATS) {
  for (const textDeltas of TEXT_DELTAS) {
    const body = new TextEncoder().encode(syntheticSse(scheme, { textDeltas, toolCalls: 0 }))
    const chunks = chunkBytes(body, READ_BYTES)
    const [floor, client] = (await compareOps([viaFloor(chunks), viaClient(provider, chunks)], ROUNDS, 20e6)) as [Compared, Compared]
    rows.push([scheme, String(textDeltas), formatBytes(body.length), formatNs(floor.p50), formatNs(client.p50), `${client.ratio.toFixed(2)}×`])
  }
}
console.log(
  markdownTable(["format", "text deltas", "body", "client floor p50", "client p50", "client ÷ floor"], rows) +
    `\n\n${READ_BYTES} B reads; p50 per call, and the median over ${ROUNDS} interleaved rounds of each round's ratio.`
)

const OVER = new DOMException("The attempt is over", "AbortError")
const noop = (): void => undefined
const answered = (): Promise<Response> => Promise.resolve(new Response(new ReadableStream<Uint8Array>()))
const URL_ = "http://127.0.0.1:9/"
const readerOf = (response: Response): ReadableStreamDefaultReader<Uint8Array> => (response.body as ReadableStream<Uint8Array>).getReader()

/** Each op is one attempt's worth: its own controller (or `AttemptAbort`), fetch, reader and abort. */
const abortOps: ReadonlyArray<{ readonly name: string; readonly op: () => Promise<unknown> }> = [
  {
    name: "nothing carrying the abort (the floor: before 0092)",
    op: async () => {
      const controller = new AbortController()
      const reader = readerOf(await answered())
      controller.abort(OVER)
      reader.cancel(OVER).catch(noop)
    }
  },
  {
    name: "`fetchBoundByAbort` and `cancelReaderOnAbort` (0092's first version: listeners)",
    op: async () => {
      const controller = new AbortController()
      const reader = readerOf(await fetchBoundByAbort(answered, URL_, { signal: controller.signal }))
      const unwatch = cancelReaderOnAbort(reader, controller.signal)
      unwatch()
      controller.abort(OVER)
      reader.cancel(OVER).catch(noop)
    }
  },
  {
    name: "`AttemptAbort` (0092: no listener)",
    op: async () => {
      const attempt = new AttemptAbort()
      attempt.watch(readerOf(await attempt.fetch(answered, URL_, {})))
      attempt.abort(OVER)
    }
  }
]

/**
 * µs per op: `LOOP` ops awaited one after another, in interleaved rounds, the median round. A plain loop, not
 * mitata: its bookkeeping per async sample is as large as the few µs these rows differ by.
 */
const LOOP = 20_000
const perRound: Array<Array<number>> = abortOps.map(() => [])
for (let round = 0; round < ROUNDS; round++) {
  for (const [i, { op }] of abortOps.entries()) {
    const started = process.hrtime.bigint()
    for (let n = 0; n < LOOP; n++) await op()
    ;(perRound[i] as Array<number>).push(Number(process.hrtime.bigint() - started) / LOOP)
  }
}
const medianOf = (xs: ReadonlyArray<number>): number => [...xs].sort((a, b) => a - b)[xs.length >> 1] as number
const ns = perRound.map(medianOf)
const floorNs = ns[0] as number
console.log(
  `\n${markdownTable(
    ["one attempt's fetch, reader and abort", "per attempt", "added to the floor"],
    abortOps.map(({ name }, i) => [name, formatNs(ns[i] as number), i === 0 ? "" : formatNs((ns[i] as number) - floorNs)])
  )}\n\nA \`fetch\` that answers at once with an empty body. ${LOOP.toLocaleString("en")} attempts awaited in a loop per round, the median of ${ROUNDS} interleaved rounds (wall clock).`
)
