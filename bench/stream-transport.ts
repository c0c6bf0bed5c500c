/**
 * The client floor on real loopback transports (decision 0091): is ≥ 80 MB/s reachable at small reads on any
 * Node transport? The floor (support/client-floor.ts: read, UTF-8, lines, `JSON.parse` of each data line, one
 * `for await` step per value) runs over the same SSE body served by a server in a child process
 * (support/paced-server.ts) and delivered by:
 * - `fetch` — Node's global fetch (its bundled undici), the body read with the default reader, as the client does;
 * - undici 7 `fetch` — the same web-stream body from the undici release the package already depends on;
 * - undici 7 `request` — undici's own API: a Node `Readable` body, read by async iteration;
 * - `node:http`, async iteration — `http.get`'s `IncomingMessage` read with `for await`;
 * - `node:http`, `'data'` events — the same response read by its `'data'` events (no async iterator);
 * - bare TCP, `'data'` events — a `net` socket with no HTTP at all: the least a Node transport reads;
 * - no transport — the same chunks from memory, one settled promise per read: what the floor costs by itself.
 *
 * MB/s is bytes per second of the client process's CPU time (`process.cpuUsage`): the server's pace decides the
 * wall time, not the client's cost. Every contender's reads are counted, so the table shows the read size each
 * one actually saw; the two server pacings (see support/paced-server.ts) decide how writes become reads.
 */
import { fork } from "node:child_process"
import http from "node:http"
import net from "node:net"
import { do_not_optimize } from "mitata"
import { Agent, fetch as undiciFetch, request as undiciRequest } from "undici"
import { type BodyReads, type ReadCount, floorEvents, floorEventsOf } from "./support/client-floor.ts"
import { formatBytes, markdownTable, printHeader } from "./support/report.ts"
import { syntheticSse } from "./support/sse-corpus.ts"
import { type Steadiness, compareOpsSteady, cpuNow, steadinessNote } from "./support/timing.ts"

const CHUNK_SIZES = [256, 1024, 16 * 1024] as const
const TARGET_CLIENT_MBPS = 80
/** Timer pacing sends one chunk per ~1 ms: this many chunks per stream keeps a sample near 0.1 s. */
const TIMER_CHUNKS = 100
const ROUNDS = Number(process.env["BENCH_STREAM_ROUNDS"] ?? 7)

/** About 1 MB, shaped as bench/stream.ts's bodies: a text block with about 20 text deltas per tool call. */
const body = ((): Uint8Array => {
  const scale = 1_000_000 / Buffer.byteLength(syntheticSse("openai-chat", { textDeltas: 200, toolCalls: 10 }))
  return new TextEncoder().encode(syntheticSse("openai-chat", { textDeltas: Math.round(200 * scale), toolCalls: Math.round(10 * scale) }))
})()

interface Ports {
  readonly httpPort: number
  readonly tcpPort: number
}

const startServer = async (): Promise<{ readonly ports: Ports; readonly stop: () => void }> => {
  const script = new URL(`./support/paced-server${import.meta.url.endsWith(".ts") ? ".ts" : ".js"}`, import.meta.url)
  const child = fork(script, [], { serialization: "advanced", execArgv: process.execArgv.filter((a) => a !== "--expose-gc") })
  const ports = await new Promise<Ports>((resolve) => child.once("message", (m) => resolve(m as Ports)))
  await new Promise<void>((resolve) => {
    child.once("message", () => resolve())
    child.send({ body })
  })
  return { ports, stop: () => child.disconnect() }
}

/** A Node stream's `'data'` events as reads: chunks queue until the floor asks, a waiting read takes the next. */
class DataEventReads implements BodyReads {
  private readonly queue: Array<Uint8Array> = []
  private waiting: ((read: { done?: boolean; value?: Uint8Array }) => void) | undefined
  private ended = false

  constructor(source: NodeJS.EventEmitter) {
    source.on("data", (chunk: Uint8Array) => {
      const waiting = this.waiting
      if (waiting === undefined) this.queue.push(chunk)
      else {
        this.waiting = undefined
        waiting({ value: chunk })
      }
    })
    source.once("end", () => {
      this.ended = true
      const waiting = this.waiting
      this.waiting = undefined
      waiting?.({ done: true })
    })
  }

  read(): Promise<{ done?: boolean; value?: Uint8Array }> {
    const chunk = this.queue.shift()
    if (chunk !== undefined) return Promise.resolve({ value: chunk })
    if (this.ended) return Promise.resolve({ done: true })
    return new Promise((resolve) => (this.waiting = resolve))
  }
}

const iteratorReads = (source: AsyncIterable<Uint8Array>): BodyReads => {
  const it = source[Symbol.asyncIterator]()
  return { read: () => it.next() }
}

const drain = async (values: AsyncIterableIterator<unknown>): Promise<number> => {
  let n = 0
  for await (const value of values) {
    do_not_optimize(value)
    n++
  }
  if (n === 0) throw new Error("no values")
  return n
}

/** One stream to fetch: the server's query, and the bytes of the body it covers. */
interface Stream {
  readonly query: string
  readonly size: number
  readonly bytes: number
}

type Transport = (stream: Stream, count: ReadCount) => Promise<number>

/** Reads from memory: the body's chunks, one already-settled promise each — the floor with no transport at all. */
const memoryReads = (stream: Stream): BodyReads => {
  let at = 0
  return {
    read: () => {
      if (at >= stream.bytes) return Promise.resolve({ done: true })
      const chunk = body.slice(at, Math.min(stream.bytes, at + stream.size))
      at += stream.size
      return Promise.resolve({ value: chunk })
    }
  }
}

const transports = (ports: Ports): ReadonlyArray<readonly [string, Transport]> => {
  const base = `http://127.0.0.1:${ports.httpPort}/?`
  const agent = new http.Agent({ keepAlive: true })
  const dispatcher = new Agent()
  const httpGet = (query: string): Promise<http.IncomingMessage> =>
    new Promise((resolve, reject) => http.get(base + query, { agent }, resolve).once("error", reject))
  return [
    ["no transport: chunks from memory (a copy and a settled promise per read)", async (stream, count) => drain(floorEventsOf(memoryReads(stream), count))],
    ["`fetch` (Node 20, default reader)", async ({ query }, count) => drain(floorEvents((await fetch(base + query)).body as ReadableStream<Uint8Array>, count))],
    ["undici 7 `fetch` (default reader)", async ({ query }, count) =>
      drain(floorEvents((await undiciFetch(base + query, { dispatcher })).body as ReadableStream<Uint8Array>, count))],
    ["undici 7 `request` (async iteration)", async ({ query }, count) => {
      const { body: readable } = await undiciRequest(base + query, { dispatcher })
      return drain(floorEventsOf(iteratorReads(readable as AsyncIterable<Uint8Array>), count))
    }],
    ["`node:http` (async iteration)", async ({ query }, count) => drain(floorEventsOf(iteratorReads(await httpGet(query)), count))],
    ["`node:http` (`'data'` events)", async ({ query }, count) => drain(floorEventsOf(new DataEventReads(await httpGet(query)), count))],
    ["bare TCP, no HTTP (`'data'` events)", async ({ query }, count) => {
      const socket = net.connect({ port: ports.tcpPort, host: "127.0.0.1", noDelay: true })
      const reads = new DataEventReads(socket)
      socket.write(`${query}\n`)
      return drain(floorEventsOf(reads, count))
    }]
  ]
}

const main = async (): Promise<void> => {
  printHeader("Stream client floor on loopback transports")
  const { ports, stop } = await startServer()
  const contenders = transports(ports)
  console.log(
    `Body: one openai-chat SSE response of ${formatBytes(body.length)} (bench/support/sse-corpus.ts), served by a \`node:http\` / \`net\` server in a child process, ` +
      "written in the chunk size of the column. The client floor (read, UTF-8, lines, JSON.parse of each data line, one `for await` step per value) runs over each transport. " +
      "MB/s = 10^6 bytes per second of the client process's CPU time (median of interleaved rounds); read = the bytes per read the floor actually got (coalesced writes make larger reads). " +
      `Pacing \`loop\`: the server writes one chunk per turn of its event loop (as fast as it can); \`timer\`: one chunk per ~1 ms timer tick (${TIMER_CHUNKS} chunks a stream), so every read is one chunk and one wake-up.\n`
  )
  const steadiness: Array<Steadiness> = []
  for (const pace of ["loop", "timer"] as const) {
    const rows: Array<Array<string>> = contenders.map(([label]) => [label])
    for (const size of CHUNK_SIZES) {
      const streamBytes = pace === "timer" ? Math.min(body.length, size * TIMER_CHUNKS) : body.length
      const stream: Stream = { query: `size=${size}&pace=${pace}${pace === "timer" ? `&chunks=${TIMER_CHUNKS}` : ""}`, size, bytes: streamBytes }
      const counts: Array<ReadCount> = contenders.map(() => ({ reads: 0, bytes: 0 }))
      for (const [i, [, run]] of contenders.entries()) await run(stream, counts[i] as ReadCount)
      for (const count of counts) (count.reads = 0), (count.bytes = 0)
      const timer = pace === "timer"
      const compared = await compareOpsSteady(
        contenders.map(([, run], i) => () => run(stream, counts[i] as ReadCount)),
        { rounds: timer ? Math.min(4, ROUNDS) : ROUNDS, samples: timer ? 2 : 5, warmupRuns: timer ? 1 : 8, minAtSpeed: timer ? 2 : 4, now: cpuNow }
      )
      steadiness.push(compared.steadiness)
      for (const [i, t] of compared.results.entries()) {
        const count = counts[i] as ReadCount
        if (count.bytes % streamBytes !== 0) throw new Error(`${contenders[i]?.[0]}: read ${count.bytes} bytes, not a whole number of ${streamBytes}-byte streams`)
        const mbps = (streamBytes / t.p50) * 1e3
        ;(rows[i] as Array<string>).push(`${t.steady ? "" : "~"}${mbps.toFixed(0)}${mbps >= TARGET_CLIENT_MBPS ? "" : " (below)"}`, formatBytes(count.bytes / count.reads))
      }
    }
    console.log(`\n### Pacing \`${pace}\`\n`)
    console.log(markdownTable(["transport", ...CHUNK_SIZES.flatMap((size) => [`${formatBytes(size)} writes: MB/s`, "read"])], rows))
  }
  console.log(`\nTarget: the client ≥ ${TARGET_CLIENT_MBPS} MB/s; "(below)" marks a floor under it (timer pacing: 4 rounds of 2 samples, a figure from at least 2 at speed).`)
  console.log(`\n${steadinessNote(steadiness, ROUNDS, 5)}`)
  stop()
}

await main()
