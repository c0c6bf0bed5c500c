/**
 * Bounded memory under hostile input, measured in a child `node --expose-gc` (support/memory-probe.ts) against
 * the hostile provider running here. Each bound is far below the hostile input, so only a bounded implementation
 * passes, and far above an honest implementation's working set, so the figure never flakes. Sizes are scaled
 * from the figures (64 MiB answer, 1 M pings, 100 MiB result) to keep the suite fast on 2 cores; the
 * unbounded code keeps 3-6 times the input, so the bounds stay meaningful.
 *
 * | test                                                      | ISSUE7 bullet                                                  |
 * |-----------------------------------------------------------|----------------------------------------------------------------|
 * | 32 MiB of reasoning, unread events() iterator → < 8 MiB   | Unbounded: "`events()` iterator never read … Bound it"          |
 * | … and the iterator never loses events silently            | Unbounded: "overflow is a typed error the iterator surfaces"   |
 * | failed run's 8 MiB partial, error dropped → < 3 MiB       | (regression) nothing keeps a failed run's error or partial     |
 * | 500 k anthropic pings before content → < 8 MiB held       | Unbounded: "Keep-alive events … are not buffered"              |
 * | 48 MiB tool result → < 8 MiB kept, output capped          | Unbounded: "Tool output sent to the model … Cap output"        |
 * | 32 tool calls × 4 MiB in one Chat response → peak < 96 MiB | ISSUE20: "One response can take a gigabyte" (+512-634 MiB)     |
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type HostileProvider, answer, rawSse, startHostileProvider } from "./support/hostile-provider.ts"
import { type ProbeResult, runProbes } from "./support/run-probe.ts"
import { PING, answerFrames } from "./support/wire.ts"
import { type ReplayProvider, startReplayProvider } from "../../src/testing/index.ts"
import { loadTranscript } from "../support/sse-fixtures.ts"
import { scaledToolCalls } from "../support/scaled-tool-calls.ts"

const MiB = 1024 * 1024
const PINGS = 500_000

/** `count` deltas of `size` characters each, produced lazily. */
function* deltas(count: number, size: number): Generator<string> {
  const piece = "a".repeat(size - 1) + " "
  for (let i = 0; i < count; i++) yield piece
}

function* pingFlood(): Generator<string> {
  const frames = [...answerFrames("anthropic", { text: ["finally"] })]
  yield frames[0] as string
  for (let i = 0; i < PINGS; i++) yield PING
  yield* frames.slice(1)
}

const servers: Array<HostileProvider> = []
let probe: ProbeResult
let toolServer: HostileProvider
let manyCalls: ReplayProvider

// One child runs every scenario: loading the package through tsx is the slow part on a loaded machine.
beforeAll(async () => {
  // 2 KiB deltas: small enough that a bound on the number of buffered events also bounds their bytes. Reasoning
  // rather than text, because a text block ends in one `text_completed` event holding the whole text, which even
  // a tightly bounded buffer may keep; reasoning has no such event, so what stays is the buffer alone.
  const events = await startHostileProvider("anthropic", [answer("anthropic", { thinking: deltas(16 * 1024, 2048), text: ["Done."] })])
  // The same answer for a run that fails on the reasoning cap with no subscriber: only the error's `partial` is big.
  const failed = await startHostileProvider("anthropic", [answer("anthropic", { thinking: deltas(16 * 1024, 2048), text: ["Done."] })])
  const pings = await startHostileProvider("anthropic", [rawSse(pingFlood())])
  toolServer = await startHostileProvider("openai-chat", [
    answer("openai-chat", { calls: [{ id: "call_dump_1", name: "dump", args: "{}" }] }),
    answer("openai-chat", { text: ["ok"] })
  ])
  servers.push(events, failed, pings, toolServer)
  // The figure on the genuine Chat shape: 32 calls × 4 MiB, each under the 8 MiB per-call bound.
  manyCalls = await startReplayProvider({
    scheme: "openai-chat",
    script: [
      { kind: "stream", transcript: scaledToolCalls("openai-chat", Array(32).fill(4 * MiB)) },
      { kind: "stream", transcript: loadTranscript("openai-chat", "text") }
    ]
  })
  probe = await runProbes([
    // First: the other scenarios' buffers must not be what this one's peak is read against.
    { scenario: "many-large-calls", scheme: "openai-chat", baseUrl: manyCalls.baseUrl, size: 0 },
    { scenario: "unread-events", scheme: "anthropic", baseUrl: events.baseUrl, size: 0 },
    { scenario: "failed-run-partial", scheme: "anthropic", baseUrl: failed.baseUrl, size: 0 },
    { scenario: "keep-alives", scheme: "anthropic", baseUrl: pings.baseUrl, size: 0 },
    { scenario: "huge-tool-result", scheme: "openai-chat", baseUrl: toolServer.baseUrl, size: 48 * MiB }
  ])
}, 120_000)

afterAll(async () => {
  await Promise.all([...servers.splice(0).map((server) => server.close()), manyCalls?.close()])
})

const measurement = <T>(scenario: string): T => {
  const found = probe.measurements.get(scenario)
  expect(found, `the probe printed no measurement for ${scenario} (exit ${probe.code}):\n${probe.stderr}`).toBeDefined()
  return found as T
}

describe("memory: hostile volumes stay bounded", () => {
  it("a 32 MiB reasoning answer with an events() iterator that is never read keeps < 8 MiB, and loses nothing silently", () => {
    const m = measurement<{ growth: number; emitted: number; delivered: number; iteratorError?: string; runOutcome: string }>("unread-events")
    expect(m.runOutcome, "the run settles (finished, or a WorkerError from a text cap)").not.toMatch(/non-WorkerError/)
    expect(m.growth / MiB, `MiB kept by an unread iterator (${JSON.stringify(m)})`).toBeLessThan(8)
    // Never silent: either every event reaches the reader, or the iterator fails where it dropped some.
    if (m.delivered < m.emitted) expect(m.iteratorError, `delivered ${m.delivered} of ${m.emitted} events without an error`).toBeDefined()
  })

  it("a run that fails on the reasoning cap carries its ~8 MiB partial on the error, and keeps none of it once the error is dropped (< 3 MiB)", () => {
    const m = measurement<{ growth: number; partialReasoning: number; runOutcome: string }>("failed-run-partial")
    expect(m.runOutcome, JSON.stringify(m)).toMatch(/^rejected ClientFailed: .*maxReasoningBytes/)
    expect(m.partialReasoning, "reasoning characters on the error's partial").toBeGreaterThan(7 * MiB)
    expect(m.growth / MiB, `MiB kept after the failed run's error was dropped (${JSON.stringify(m)})`).toBeLessThan(3)
  })

  it(`${PINGS / 1000} k anthropic keep-alive pings before the first content are not held (< 8 MiB at first content)`, () => {
    const m = measurement<{ growth: number; sawContent: boolean; runOutcome: string }>("keep-alives")
    expect(m.sawContent, JSON.stringify(m)).toBe(true)
    expect(m.runOutcome).toBe("finished")
    expect(m.growth / MiB, `MiB held for ${PINGS} pings (${(PINGS * PING.length) / MiB} MiB on the wire)`).toBeLessThan(8)
  })

  it("a tool returning 48 MiB leaves < 8 MiB in the worker, and the model is sent a capped output", () => {
    const m = measurement<{ growth: number; outputLength?: number; runOutcome: string }>("huge-tool-result")
    expect(m.runOutcome).toBe("finished")
    expect(m.growth / MiB, `MiB kept after a 48 MiB tool result (${JSON.stringify(m)})`).toBeLessThan(8)
    expect(m.outputLength ?? Infinity).toBeLessThan(1 * MiB)
    // What the model is sent next is capped too.
    expect(toolServer.requests[1]?.body.length ?? Infinity).toBeLessThan(2 * MiB)
  })

  it("32 tool calls × 4 MiB in one Chat response (128 MiB, each call under the per-call bound) fail on maxTotalArgumentBytes: the heap peaks < 96 MiB above the start and the next request carries none of it", () => {
    const m = measurement<{ growth: number; peakGrowth: number; runOutcome: string; secondOutcome: string }>("many-large-calls")
    expect(m.runOutcome, JSON.stringify(m)).toMatch(/^rejected ClientFailed: .*maxTotalArgumentBytes = 16777216/)
    expect(m.peakGrowth / MiB, `MiB of heap at the peak of the run (${JSON.stringify(m)})`).toBeLessThan(96)
    expect(m.growth / MiB, `MiB kept after the run (${JSON.stringify(m)})`).toBeLessThan(8)
    expect(m.secondOutcome).toBe("finished")
    // The request after the failed one: the history it carries holds nothing of the 128 MiB.
    expect(manyCalls.requests).toHaveLength(2)
    expect((manyCalls.requests[1]?.body.length ?? Infinity) / MiB).toBeLessThan(1)
  })
})
