/**
 * The child side of the memory figures: runs one hostile scenario against the hostile provider (which lives in
 * the parent test process, so its own buffers never count here) and prints one JSON line `PROBE {...}`.
 *
 * Run as `node --expose-gc --import tsx memory-probe.ts '<plan JSON>'`, the plan being a list of
 * `{ scenario, scheme, baseUrl, size }`: one child runs them all in turn, since loading the package through tsx
 * costs seconds on a loaded machine. `gc()` is called twice before each reading so only live memory is counted;
 * readings are heap + external (Buffers, ArrayBuffers), since stream chunks live outside the JS heap. Each
 * scenario's objects are out of reach before the next one starts, so one cannot count against another.
 */
import { type LlmClient, type WorkerEvent, Worker, createLlmClient, isWorkerError } from "../../../src/index.ts"
import { ANY_OBJECT, handTool } from "./tools.ts"
import { type HostileScheme, PROVIDER_OF } from "./wire.ts"

declare const gc: () => void

const live = (): number => {
  gc()
  gc()
  const usage = process.memoryUsage()
  return usage.heapUsed + usage.external
}

export interface ProbePlanEntry {
  readonly scenario: string
  readonly scheme: HostileScheme
  readonly baseUrl: string
  readonly size: number
}

let scheme: HostileScheme = "openai-chat"
let baseUrl = ""
let size = 0

const client = (): LlmClient => {
  const { provider, baseUrlEnv, keyEnv } = PROVIDER_OF[scheme]
  return createLlmClient({
    provider,
    model: "hostile-model",
    env: { [baseUrlEnv]: baseUrl, [keyEnv]: "hostile-test-key" },
    retry: { maxRetries: 0 }
  })
}

const describe = (error: unknown): string => {
  try {
    const e = error as { _tag?: unknown; message?: unknown }
    return `${String(e?._tag)}: ${String(e?.message).slice(0, 300)}`
  } catch {
    return "(undescribable)"
  }
}

type Measurement = Record<string, unknown>

/** Resolves with the next event, or `undefined` when none is buffered within `ms` (the run is long over). */
const nextOrIdle = async (iterator: AsyncIterator<WorkerEvent>, ms: number): Promise<IteratorResult<WorkerEvent> | "idle"> => {
  let timer: ReturnType<typeof setTimeout> | undefined
  try {
    return await Promise.race([iterator.next(), new Promise<"idle">((resolve) => (timer = setTimeout(() => resolve("idle"), ms)))])
  } finally {
    clearTimeout(timer)
  }
}

/**
 * Starts `run` and returns only a short description of how it settled, once nothing of the run can still be on
 * the stack. A rejection's reason stays reachable from the stack for as long as the code after the `await` runs
 * synchronously: the microtask that resumes the async function holds it as an argument, and the resumed frame
 * keeps the `catch` binding in a register. A failed run's error carries what the response had produced
 * (`partial`, up to the reasoning cap), so a reading taken in that continuation would count the caller's own
 * error, not anything the library kept. The error is dropped inside this function, and a macrotask passes before
 * the caller goes on, so both are gone by the time it measures.
 */
const settle = async (run: () => Promise<{ readonly status: string }>): Promise<string> => {
  const outcome = await run().then(
    (result) => result.status,
    (error: unknown) => (isWorkerError(error) ? `rejected ${describe(error)}` : `rejected with a non-WorkerError ${describe(error)}`)
  )
  await new Promise<void>((resolve) => setImmediate(resolve))
  return outcome
}

/**
 * A long answer while an `events()` iterator is open but never read. Measured after the run with the history
 * emptied, so what remains is what the iterator holds. Then the iterator is drained: it must deliver every event
 * or surface an error where it lost some.
 */
const unreadEvents = async (): Promise<Measurement> => {
  const worker = Worker.create({ client: client() })
  let emitted = 0
  worker.subscribe({ onEvent: () => void emitted++ })
  const before = live()
  const iterator = worker.events()[Symbol.asyncIterator]()
  const runOutcome = await settle(() => worker.run("write a lot"))
  worker.setHistory([])
  const after = live()
  let delivered = 0
  let iteratorError: string | undefined
  for (;;) {
    let next
    try {
      next = await nextOrIdle(iterator, 1_000)
    } catch (error) {
      iteratorError = describe(error)
      break
    }
    if (next === "idle" || next.done === true) break
    delivered++
  }
  return { growth: after - before, emitted, delivered, iteratorError, runOutcome }
}

/**
 * Keep-alives before any content. Measured when the first content block starts (a subscriber runs synchronously
 * there): whatever the client kept of the keep-alives is still alive at that moment.
 */
const keepAlives = async (): Promise<Measurement> => {
  const worker = Worker.create({ client: client() })
  let atFirstContent: number | undefined
  worker.subscribe({
    onBlockStart: () => {
      atFirstContent ??= live()
    }
  })
  const before = live()
  let runOutcome: string
  try {
    runOutcome = (await worker.run("hi")).status
  } catch (error) {
    runOutcome = `rejected ${describe(error)}`
  }
  return { growth: (atFirstContent ?? live()) - before, sawContent: atFirstContent !== undefined, runOutcome }
}

/**
 * A tool that returns `size` bytes. Measured after the run with the worker and its history alive: what is kept
 * is what the model is sent on every later request.
 */
const hugeToolResult = async (): Promise<Measurement> => {
  const worker = Worker.create({ client: client() })
  worker.registerTool(handTool("dump", ANY_OBJECT, async () => "x".repeat(size)))
  const before = live()
  let runOutcome: string
  let outputLength: number | undefined
  try {
    const result = await worker.run("dump it")
    runOutcome = result.status
    const output = worker.history().find((item) => item.type === "function_call_output")
    outputLength = output?.type === "function_call_output" ? output.output.length : undefined
  } catch (error) {
    runOutcome = `rejected ${describe(error)}`
  }
  const after = live()
  // Keeps the worker (and so its history) alive up to the reading above.
  void worker.history().length
  return { growth: after - before, outputLength, runOutcome }
}

/**
 * A response that fails on the reasoning cap, with no subscriber at all. While the caller holds the error its
 * `partial` carries the reasoning read (about the whole cap); once the caller has dropped it, nothing of the
 * failed run may stay in the worker (no last error, no collector, no timeline pinned by a captured stack).
 */
const failedRunPartial = async (): Promise<Measurement> => {
  const worker = Worker.create({ client: client() })
  const before = live()
  let partialReasoning = -1
  const runOutcome = await settle(() =>
    worker.run("think a lot").catch((error: unknown) => {
      const partial = (error as { partial?: { reasoning?: unknown } }).partial
      partialReasoning = typeof partial?.reasoning === "string" ? partial.reasoning.length : -1
      throw error
    })
  )
  const after = live()
  // Keeps the worker alive up to the reading above.
  void worker.history().length
  return { growth: after - before, partialReasoning, runOutcome }
}

/**
 * One response with many large tool calls (issue 20: 32 × 4 MiB on Chat), default bounds, a `store` tool. The
 * heap is sampled at every worker event (no gc: what is allocated then, garbage included, is what the process
 * must hold), and read again after the run with the history alive. Then a second run, whose request the parent
 * reads on its replay provider: it must not carry the first response's arguments.
 */
const manyLargeCalls = async (): Promise<Measurement> => {
  const worker = Worker.create({ client: client() })
  worker.registerTool(handTool("store", ANY_OBJECT, async () => "stored"))
  const before = live()
  let peak = before
  let events = 0
  worker.subscribe({
    onEvent: () => {
      if (++events % 16 === 0) peak = Math.max(peak, process.memoryUsage().heapUsed + process.memoryUsage().external)
    }
  })
  const runOutcome = await settle(() => worker.run("store it all"))
  const after = live()
  const secondOutcome = await settle(() => worker.run("never mind"))
  void worker.history().length
  return { growth: after - before, peakGrowth: Math.max(peak, after) - before, runOutcome, secondOutcome }
}

const SCENARIOS: Readonly<Record<string, () => Promise<Measurement>>> = {
  "many-large-calls": manyLargeCalls,
  "unread-events": unreadEvents,
  "failed-run-partial": failedRunPartial,
  "keep-alives": keepAlives,
  "huge-tool-result": hugeToolResult
}

const plan = JSON.parse(process.argv[2] ?? "[]") as ReadonlyArray<ProbePlanEntry>
for (const entry of plan) {
  const run = SCENARIOS[entry.scenario]
  if (run === undefined) {
    process.stderr.write(`unknown scenario ${entry.scenario}\n`)
    process.exit(2)
  }
  scheme = entry.scheme
  baseUrl = entry.baseUrl
  size = entry.size
  const measurement = await run()
  process.stdout.write(`PROBE ${JSON.stringify({ scenario: entry.scenario, ...measurement })}\n`)
}
// The client may keep a socket open; the measurements are all the parent needs.
process.exit(0)
