/**
 * Bounded memory under hostile input, measured in a child `node --expose-gc` (support/memory-probe.ts) against
 * the hostile provider running here. Each bound is far below the hostile input, so only a bounded implementation
 * passes, and far above an honest implementation's working set, so the figure never flakes.
 *
 * | test                                                      | ISSUE7 bullet                                                  |
 * |-----------------------------------------------------------|----------------------------------------------------------------|
 * | 64 MiB answer, unread events() iterator → < 16 MiB kept   | Unbounded: "`events()` iterator never read … Bound it"          |
 * | … and the iterator never loses events silently            | Unbounded: "overflow is a typed error the iterator surfaces"   |
 * | 1 M anthropic pings before content → < 16 MiB held        | Unbounded: "Keep-alive events … are not buffered"              |
 * | 100 MiB tool result → < 8 MiB kept, output capped         | Unbounded: "Tool output sent to the model … Cap output"        |
 */
import { afterEach, describe, expect, it } from "vitest"
import { type HostileProvider, answer, rawSse, startHostileProvider } from "./support/hostile-provider.ts"
import { runProbe } from "./support/run-probe.ts"
import { PING, answerFrames } from "./support/wire.ts"

const MiB = 1024 * 1024

const servers: Array<HostileProvider> = []
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()))
})

/** `count` deltas of `size` characters each, produced lazily. */
function* deltas(count: number, size: number): Generator<string> {
  const piece = "a".repeat(size - 1) + " "
  for (let i = 0; i < count; i++) yield piece
}

describe("memory: hostile volumes stay bounded", () => {
  it("a 64 MiB answer with an events() iterator that is never read keeps < 16 MiB, and loses nothing silently", { timeout: 60_000 }, async () => {
    // 2 KiB deltas: small enough that a bound on the number of buffered events also bounds their bytes.
    const server = await startHostileProvider("openai-chat", [answer("openai-chat", { text: deltas(32 * 1024, 2048) })])
    servers.push(server)
    const probe = await runProbe("unread-events", "openai-chat", server.baseUrl, 0)
    expect(probe.measurement, `the probe printed no measurement (exit ${probe.code}):\n${probe.stderr}`).toBeDefined()
    const m = probe.measurement as { growth: number; emitted: number; delivered: number; iteratorError?: string; runOutcome: string }
    expect(m.runOutcome, "the run settles (finished, or a WorkerError from a text cap)").not.toMatch(/non-WorkerError/)
    expect(m.growth / MiB, `MiB kept by an unread iterator (${JSON.stringify(m)})`).toBeLessThan(16)
    // Never silent: either every event reaches the reader, or the iterator fails where it dropped some.
    if (m.delivered < m.emitted) expect(m.iteratorError, `delivered ${m.delivered} of ${m.emitted} events without an error`).toBeDefined()
  })

  it("1 M anthropic keep-alive pings before the first content are not held (< 16 MiB at first content)", { timeout: 60_000 }, async () => {
    const frames = [...answerFrames("anthropic", { text: ["finally"] })]
    const count = 1_000_000
    function* flood(): Generator<string> {
      yield frames[0] as string
      for (let i = 0; i < count; i++) yield PING
      yield* frames.slice(1)
    }
    const server = await startHostileProvider("anthropic", [rawSse(flood())])
    servers.push(server)
    const probe = await runProbe("keep-alives", "anthropic", server.baseUrl, 0)
    expect(probe.measurement, `the probe printed no measurement (exit ${probe.code}):\n${probe.stderr}`).toBeDefined()
    const m = probe.measurement as { growth: number; sawContent: boolean; runOutcome: string }
    expect(m.sawContent, JSON.stringify(m)).toBe(true)
    expect(m.runOutcome).toBe("finished")
    expect(m.growth / MiB, `MiB held for ${count} pings (${(count * PING.length) / MiB} MiB on the wire)`).toBeLessThan(16)
  })

  it("a tool returning 100 MiB leaves < 8 MiB in the worker, and the model is sent a capped output", { timeout: 60_000 }, async () => {
    const server = await startHostileProvider("openai-chat", [
      answer("openai-chat", { calls: [{ id: "call_dump_1", name: "dump", args: "{}" }] }),
      answer("openai-chat", { text: ["ok"] })
    ])
    servers.push(server)
    const probe = await runProbe("huge-tool-result", "openai-chat", server.baseUrl, 100 * MiB)
    expect(probe.measurement, `the probe printed no measurement (exit ${probe.code}):\n${probe.stderr}`).toBeDefined()
    const m = probe.measurement as { growth: number; outputLength?: number; runOutcome: string }
    expect(m.runOutcome).toBe("finished")
    expect(m.growth / MiB, `MiB kept after a 100 MiB tool result (${JSON.stringify(m)})`).toBeLessThan(8)
    expect(m.outputLength ?? Infinity).toBeLessThan(1 * MiB)
    // What the model is sent next is capped too.
    expect(server.requests[1]?.body.length ?? Infinity).toBeLessThan(2 * MiB)
  })
})

