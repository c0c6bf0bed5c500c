/**
 * Streams: provider SSE bytes → neutral events, per wire format, in MB/s on one core. The body is one large
 * response made of genuine transcript events (see support/sse-corpus.ts), delivered in fixed-size chunks.
 *
 * Compared, all in this process on the same bytes and chunks:
 * - ours, decode: `createUtf8Reads` (the transport's read-by-read UTF-8 decoding) → `createSseParser` → the
 *   scheme's `StreamDecoder` (synchronous; what the transport runs per chunk);
 * - ours, + timeline: the same events dispatched to a `Timeline` with a `ResponseCollector` (text, tool calls,
 *   reasoning, usage) and the assistant items assembled at the end;
 * - ours, client: `createLlmClient(...).stream()` iterated with `for await`, with a `fetch` that answers with the
 *   chunks as the body of a `Response` (transport, retries bookkeeping, async iteration; no socket);
 * - client floor: the least any client does on the same body (support/client-floor.ts): read it, decode UTF-8,
 *   split lines, `JSON.parse` each `data:` line, hand each value out through `for await`;
 * - AI SDK, parse only: `@ai-sdk/provider-utils` `parseJsonEventStream` over the same kind of body, with a
 *   schema that has no validator. That is TextDecoderStream → EventSourceParserStream → secure JSON parse. It does
 *   NOT include the provider packages' chunk validation (zod) or their mapping to stream parts, which need
 *   `@ai-sdk/<provider>` (not installed), so it is a lower bound on the SDK's real per-byte work.
 *
 * The body the asynchronous contenders read is what `fetch` gives (decision 0087): a byte stream
 * (`type: "bytes"`) that delivers one chunk per read, each in a buffer of its own (a byte stream takes over the
 * buffer it is given, as Node's fetch hands over each socket read). Node's fetch never has more than one chunk
 * waiting in its stream: what arrives while nobody reads waits in the socket's buffer and comes out as one read,
 * so "one chunk per read" is the case that counts reads per byte. A default stream with the whole body queued at
 * the start, which this benchmark used before, skips the byte stream's per-read transfer of the buffer and made
 * the client look 1.5× as fast with 256 B reads, 1.2× with 1 KiB ones, as a real body lets it be.
 */
import { appendFileSync } from "node:fs"
import { jsonSchema, parseJsonEventStream } from "@ai-sdk/provider-utils"
import { do_not_optimize } from "mitata"
import type { Event } from "#internal/llm/event"
import type { Scheme, SchemeName } from "#internal/llm/scheme"
import { anthropicScheme } from "#internal/llm/schemes/anthropic"
import { geminiScheme } from "#internal/llm/schemes/gemini"
import { openAiChatScheme } from "#internal/llm/schemes/openai-chat"
import { openAiResponsesScheme } from "#internal/llm/schemes/openai-responses"
import { createSseParser } from "#internal/llm/sse"
import { createUtf8Reads } from "#internal/llm/transport/utf8-reads"
import { ResponseCollector } from "#internal/timeline/assistant-response"
import { Timeline } from "#internal/timeline/timeline"
import { formatBytes, markdownTable, printHeader } from "./support/report.ts"
import { type CorpusShape, chunkBytes, syntheticSse } from "./support/sse-corpus.ts"
import { fetchedBody, viaClient, viaFloor } from "./support/fetched-answers.ts"
import { PARSERS } from "./support/sse-parsers.ts"
import { type SteadyCompared, type Steadiness, compareOps, compareOpsSteady, steadinessNote } from "./support/timing.ts"

/**
 * `BENCH_STREAM=anthropic:256` (format and/or read size, comma-separated alternatives) runs only the matching
 * cells of the first table and skips the others: for a CPU profile of one cell (`node --cpu-prof`).
 */
const only = process.env["BENCH_STREAM"]?.split(",").map((spec) => spec.trim()).filter((spec) => spec !== "")
const wanted = (name: string, size?: number): boolean =>
  only === undefined ||
  only.some((spec) => {
    const [format, chunk] = spec.split(":")
    return (format === "" || format === undefined || format === name) && (chunk === undefined || size === undefined || Number(chunk) === size)
  })

const FORMATS: ReadonlyArray<{ readonly scheme: Scheme; readonly provider: string }> = [
  { scheme: openAiChatScheme, provider: "openai" },
  { scheme: openAiResponsesScheme, provider: "openai-responses" },
  { scheme: anthropicScheme, provider: "anthropic" },
  { scheme: geminiScheme, provider: "gemini" }
].filter(({ scheme }) => wanted(scheme.name))

/** ~256 B is about one event per read (token-by-token streaming); 16 KiB is a burst read off a busy socket. */
const CHUNK_SIZES = [256, 1024, 4096, 16 * 1024] as const
const TARGET_BYTES = 1_000_000
const TARGET_MBPS = 100
/** The whole client path (fetch, transport, async iteration) has its own, lower target. */
const TARGET_CLIENT_MBPS = 80
const BREAKDOWN_CHUNK = 16 * 1024
/**
 * Rounds and samples per op and round in the first table. mitata starts every measurement with a full GC when
 * `gc` is exposed (the benchmarks run with --expose-gc), and the heap then takes about ten 1 MB streams to grow
 * back, during which the async pipelines ran 2–4× slower (decision 0083); so the first table runs one GC and a
 * warm-up per cell and then measures with no GC before each round (`compareOpsSteady`). Many short rounds, each
 * with the core's speed probed around it and measured again when the core ran slow (decision 0091); each figure
 * is the median of its op's measurements at speed, so a slow stretch of the machine costs a round, not a cell. `BENCH_STREAM_ROUNDS` sets fewer for a quick check.
 */
const STREAM_ROUNDS = Number(process.env["BENCH_STREAM_ROUNDS"] ?? 15)
const STREAM_SAMPLES = 9

/** One text block with about 20 text deltas per tool call, scaled so the body is about `TARGET_BYTES`. */
const bodyFor = (scheme: SchemeName): Uint8Array => {
  const probe: CorpusShape = { textDeltas: 200, toolCalls: 10 }
  const scale = TARGET_BYTES / Buffer.byteLength(syntheticSse(scheme, probe))
  const text = syntheticSse(scheme, { textDeltas: Math.round(200 * scale), toolCalls: Math.round(10 * scale) })
  return new TextEncoder().encode(text)
}

const decodeOnly = (scheme: Scheme, chunks: ReadonlyArray<Uint8Array>): number => {
  const text = createUtf8Reads()
  const sse = createSseParser()
  const decoder = scheme.decoder()
  let events = 0
  for (const chunk of chunks) {
    for (const message of sse.feed(text.decode(chunk))) events += decoder.push(message).length
  }
  return events + decoder.end().length
}

const decodeWithTimeline = (scheme: Scheme, chunks: ReadonlyArray<Uint8Array>): number => {
  const text = createUtf8Reads()
  const sse = createSseParser()
  const decoder = scheme.decoder()
  const timeline = new Timeline()
  const collector = new ResponseCollector(timeline)
  const dispatch = (events: ReadonlyArray<Event>) => {
    for (const event of events) timeline.dispatch(event)
  }
  for (const chunk of chunks) {
    for (const message of sse.feed(text.decode(chunk))) dispatch(decoder.push(message))
  }
  dispatch(decoder.end())
  timeline.finish()
  return collector.result().items.length
}

const anySchema = jsonSchema<unknown>({})

const aiSdkParse = async (chunks: ReadonlyArray<Uint8Array>): Promise<number> => {
  const reader = parseJsonEventStream({ stream: fetchedBody(chunks), schema: anySchema }).getReader()
  let parsed = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) return parsed
    if (!value.success) throw value.error
    do_not_optimize(value.value)
    parsed++
  }
}

/** `BENCH_STEADY_LOG=file` appends every measurement of the first table (kernel slowdown included) as JSON lines. */
const log = process.env["BENCH_STEADY_LOG"]

const mbps = (bytes: number, ns: number): number => (bytes / ns) * 1e3

/** The decode path cut after each stage, to show which stage costs what. */
const stages = (scheme: Scheme, chunks: ReadonlyArray<Uint8Array>): ReadonlyArray<readonly [string, () => unknown]> => [
  ["TextDecoder, stream: true", () => {
    const text = new TextDecoder()
    let chars = 0
    for (const chunk of chunks) chars += text.decode(chunk, { stream: true }).length
    return chars
  }],
  ["UTF-8 reads (`createUtf8Reads`)", () => {
    const text = createUtf8Reads()
    let chars = 0
    for (const chunk of chunks) chars += text.decode(chunk).length
    return chars
  }],
  ["+ SSE parser", () => {
    const text = createUtf8Reads()
    const sse = createSseParser()
    let messages = 0
    for (const chunk of chunks) messages += sse.feed(text.decode(chunk)).length
    return messages
  }],
  ["+ JSON.parse of each data", () => {
    const text = createUtf8Reads()
    const sse = createSseParser()
    let parsed = 0
    for (const chunk of chunks) {
      for (const message of sse.feed(text.decode(chunk))) if (message.data !== "[DONE]") parsed += JSON.parse(message.data) === null ? 0 : 1
    }
    return parsed
  }],
  ["+ scheme decoder (= ours decode)", () => decodeOnly(scheme, chunks)]
]

const main = async (): Promise<void> => {
  printHeader("Streams: SSE bytes → neutral events")
  console.log(
    "Body: one response per format, genuine transcript events repeated (a text block, then tool calls with their argument deltas), about 1 MB. " +
      "MB/s = 10^6 bytes of SSE per second (median of interleaved rounds taken at the machine's speed; see the footnote). The client and its floor read the body as fetch gives it (a byte stream, one chunk per read), and so does the AI SDK. " +
      "The client floor is the least any client does on that body (read, UTF-8, lines, JSON.parse of each data line, one `for await` step per value); client / floor is the client's speed relative to it. " +
      "The last two columns are speed relative to the AI SDK parse-only pipeline (higher is faster).\n"
  )
  const rows: Array<Array<string>> = []
  const misses: Array<string> = []
  const steadiness: Array<Steadiness> = []
  for (const { scheme, provider } of FORMATS) {
    const body = bodyFor(scheme.name)
    for (const size of CHUNK_SIZES) {
      if (!wanted(scheme.name, size)) continue
      const chunks = chunkBytes(body, size)
      const sanity = [
        decodeOnly(scheme, chunks),
        decodeWithTimeline(scheme, chunks),
        await viaClient(provider, chunks)(),
        await viaFloor(chunks)(),
        await aiSdkParse(chunks)
      ]
      if (sanity.some((n) => n === 0)) throw new Error(`${scheme.name}: a contender produced nothing`)
      const client = viaClient(provider, chunks)
      const floor = viaFloor(chunks)
      const compared = await compareOpsSteady(
        [() => aiSdkParse(chunks), () => decodeOnly(scheme, chunks), () => decodeWithTimeline(scheme, chunks), client, floor],
        { rounds: STREAM_ROUNDS, samples: STREAM_SAMPLES, warmupRuns: 10 }
      )
      steadiness.push(compared.steadiness)
      if (log !== undefined) appendFileSync(log, `${JSON.stringify({ cell: `${scheme.name}:${size}`, attempts: compared.attempts })}\n`)
      const [sdk, decode, timeline, full, least] = compared.results
      const rate = (t: { readonly p50: number }) => mbps(body.length, t.p50)
      /** A figure taken from rounds the core ran slow through is marked (decision 0091). */
      const shown = (t: SteadyCompared) => `${t.steady ? "" : "~"}${rate(t).toFixed(0)}`
      const ratio = (t: { readonly ratio: number }) => `${(1 / t.ratio).toFixed(2)}×`
      for (const [label, t, target] of [["decode", decode, TARGET_MBPS], ["client", full, TARGET_CLIENT_MBPS]] as const) {
        if (t !== undefined && rate(t) < target) misses.push(`${scheme.name} ${label} @ ${formatBytes(size)} ${rate(t).toFixed(0)}`)
      }
      if (sdk === undefined || decode === undefined || timeline === undefined || full === undefined || least === undefined) throw new Error("missing timing")
      rows.push([
        scheme.name,
        formatBytes(body.length),
        formatBytes(size),
        shown(decode),
        shown(timeline),
        shown(full),
        shown(least),
        `${(least.p50 / full.p50).toFixed(2)}×`,
        shown(sdk),
        ratio(decode),
        ratio(full)
      ])
    }
  }
  console.log(
    markdownTable(
      ["format", "body", "chunk", "ours decode MB/s", "ours + timeline MB/s", "ours client MB/s", "client floor MB/s", "client / floor", "AI SDK parse-only MB/s", "decode / SDK", "client / SDK"],
      rows
    )
  )
  const cells = rows.length * 2
  const target = `Target on one core: decode ≥ ${TARGET_MBPS} MB/s, client ≥ ${TARGET_CLIENT_MBPS} MB/s, at every read size`
  console.log(
    misses.length === 0
      ? `\n${target}: met in all ${cells} cells.`
      : `\n${target}: met in ${cells - misses.length} of ${cells} cells; below it: ${misses.join("; ")}.`
  )
  console.log(`\n${steadinessNote(steadiness, STREAM_ROUNDS, STREAM_SAMPLES)}`)

  if (only !== undefined) return
  console.log("\n### SSE parsers side by side (TextDecoder + parser, no JSON)\n")
  const parserRows: Array<Array<string>> = []
  for (const { scheme } of FORMATS) {
    const body = bodyFor(scheme.name)
    for (const size of CHUNK_SIZES) {
      const chunks = chunkBytes(body, size)
      const counts = PARSERS.map(([, run]) => run(chunks))
      if (counts.some((n) => n !== counts[0])) throw new Error(`${scheme.name}: the parsers disagree on the data (${counts.join(", ")})`)
      const timings = await compareOps(PARSERS.map(([, run]) => () => run(chunks)), 7, 30e6)
      parserRows.push([scheme.name, formatBytes(size), ...timings.map((t) => mbps(body.length, t.p50).toFixed(0)), ...timings.slice(1).map((t) => `${t.ratio.toFixed(2)}×`)])
    }
  }
  console.log(
    markdownTable(
      ["format", "chunk", ...PARSERS.map(([label]) => `${label} MB/s`), ...PARSERS.slice(1).map(([label]) => `${label.split(":")[0]} time / floor`)],
      parserRows
    )
  )
  console.log(
    "\nEvery parser must deliver the same data characters as the floor on every body and read size before it is timed. " +
      "Ratios are per-round p50 time ratios to the floor (median of rounds); lower is faster."
  )

  console.log(`\n### Where the time goes (decode path, ${formatBytes(BREAKDOWN_CHUNK)} chunks)\n`)
  const breakdown: Array<Array<string>> = []
  for (const { scheme } of FORMATS) {
    const body = bodyFor(scheme.name)
    const chunks = chunkBytes(body, BREAKDOWN_CHUNK)
    const cut = stages(scheme, chunks)
    const timings = await compareOps(cut.map(([, op]) => op), 5, 40e6)
    breakdown.push([scheme.name, ...timings.map((t) => mbps(body.length, t.p50).toFixed(0))])
  }
  console.log(markdownTable(["format (MB/s after each stage)", ...stages(openAiChatScheme, []).map(([label]) => label)], breakdown))
}

await main()
