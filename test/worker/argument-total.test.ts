/**
 * Issue 20, "One response can take a gigabyte": many tool calls, each under `maxArgumentBytes`, must not add up
 * to any size. `limits.maxTotalArgumentBytes` bounds the argument text of all calls of one response; past it the
 * response fails with `LlmLimitExceeded` as the per-call bound does, so nothing of it enters history and the next
 * request is not made larger by it (decision 0094). Every response here is a genuine recorded transcript
 * (test/fixtures/sse/<scheme>/parallel-tool-calls.sse) scaled to many calls, served by the replay provider of
 * `llm-worker/testing` and read by a real client over loopback HTTP. The figures at the scale (32 × 4 MiB
 * with the default bounds, heap and next request measured) are in test/hostile/memory.test.ts.
 */
import fc from "fast-check"
import { afterEach, describe, expect, it } from "vitest"
import {
  type Item,
  type LlmClient,
  type ResponseLimits,
  type SchemeName,
  ToolMeta,
  Worker,
  createLlmClient,
  defaultResponseLimits,
  isWorkerError,
  openAiChatScheme
} from "../../src/index.ts"
import { type ReplayProvider, type ReplayStep, sseText, startReplayProvider } from "../../src/testing/index.ts"
import { loadTranscript } from "../support/sse-fixtures.ts"
import { SCALED_TOOL, argumentText, recordedEvents, scaledToolCalls } from "../support/scaled-tool-calls.ts"

const KiB = 1024
const SCHEMES: ReadonlyArray<{ readonly scheme: SchemeName; readonly provider: string }> = [
  { scheme: "openai-chat", provider: "openai" },
  { scheme: "openai-responses", provider: "openai-responses" },
  { scheme: "anthropic", provider: "anthropic" },
  { scheme: "gemini", provider: "gemini" }
]

const servers: Array<ReplayProvider> = []
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()))
})

const start = async (scheme: SchemeName, provider: string, script: ReadonlyArray<ReplayStep>, limits: Partial<ResponseLimits>) => {
  const server = await startReplayProvider({ scheme, script })
  servers.push(server)
  const client: LlmClient = createLlmClient({
    provider,
    model: "test-model",
    apiKey: "test-key",
    baseUrl: server.baseUrl,
    retry: { maxRetries: 0 },
    timeouts: { firstEventMs: 10_000, idleMs: 10_000 },
    limits
  })
  return { server, client }
}

/** A worker with the `store` tool the scaled responses call; `ran` counts its executions. */
const storeWorker = (client: LlmClient) => {
  const ran = { count: 0 }
  const worker = Worker.create({ client })
  worker.registerTool(() => [
    ToolMeta.make(SCALED_TOOL).description("stores data").inputSchema({ type: "object", properties: { data: { type: "string" } }, required: ["data"] }),
    {
      execute: async () => {
        ran.count++
        return "stored"
      }
    }
  ])
  return { worker, ran }
}

/** How a run settled: its status, or the tag, limit and message of the error under `ClientFailed`. */
const settle = async (run: Promise<{ readonly status: string }>) => {
  try {
    return { status: (await run).status }
  } catch (error) {
    if (!isWorkerError(error)) throw error
    if (error._tag !== "ClientFailed") return { status: "rejected", tag: error._tag, message: error.message }
    const cause = error.error
    return { status: "rejected", tag: cause._tag, ...(cause._tag === "LlmLimitExceeded" ? { limit: cause.limit, max: cause.max, seen: cause.seen } : {}), message: cause.message }
  }
}

const text = (scheme: SchemeName): ReplayStep => ({ kind: "stream", transcript: loadTranscript(scheme, "text") })
const LONG_RUN_OF_A = "a".repeat(1000)
const argumentItems = (history: ReadonlyArray<Item>) => history.filter((item) => item.type === "function_call")

for (const { scheme, provider } of SCHEMES) {
  describe(`maxTotalArgumentBytes over ${scheme}`, () => {
    it("8 calls × 64 KiB past a 256 KiB total: the run fails with LlmLimitExceeded, no tool runs, and the next request carries none of it", async () => {
      const limits = { maxArgumentBytes: 128 * KiB, maxTotalArgumentBytes: 256 * KiB }
      const oversized: ReplayStep = { kind: "stream", transcript: scaledToolCalls(scheme, Array(8).fill(64 * KiB), 8 * KiB) }
      const { server, client } = await start(scheme, provider, [oversized, text(scheme)], limits)
      const { worker, ran } = storeWorker(client)

      const first = await settle(worker.run("store it all"))
      expect(first).toMatchObject({ status: "rejected", tag: "LlmLimitExceeded", limit: "maxTotalArgumentBytes", max: 256 * KiB })
      expect(first.message).toMatch(/maxTotalArgumentBytes = 262144: \d+ bytes of tool call arguments \(all calls together\) over \d+ calls/)
      expect(ran.count).toBe(0)
      // Nothing of the failed response entered history: no call is left without its result.
      expect(argumentItems(worker.history())).toEqual([])

      const second = await settle(worker.run("never mind"))
      expect(second.status).toBe("finished")
      expect(server.requests).toHaveLength(2)
      const next = server.requests[1]?.body ?? ""
      expect(next.length, "the next request body, in characters").toBeLessThan(16 * KiB)
      expect(next).not.toContain(LONG_RUN_OF_A)
    })

    it("property: however the arguments are split among calls, the run fails exactly when their total passes the bound", async () => {
      const total = 96 * KiB
      await fc.assert(
        fc.asyncProperty(fc.array(fc.integer({ min: 11, max: 24 * KiB }), { minLength: 1, maxLength: 10 }), async (sizes) => {
          const transcript = scaledToolCalls(scheme, sizes, 4 * KiB)
          const { server, client } = await start(scheme, provider, [{ kind: "stream", transcript }, text(scheme)], { maxTotalArgumentBytes: total })
          const { worker, ran } = storeWorker(client)
          const outcome = await settle(worker.run("store"))
          const sum = sizes.reduce((a, b) => a + b, 0)
          if (sum <= total) {
            expect(outcome).toEqual({ status: "finished" })
            expect(ran.count).toBe(sizes.length)
          } else {
            expect(outcome).toMatchObject({ status: "rejected", limit: "maxTotalArgumentBytes", max: total })
            expect((outcome as { seen: number }).seen).toBeGreaterThan(total)
            expect(ran.count).toBe(0)
            expect(server.requests).toHaveLength(1)
          }
          await server.close()
        }),
        {
          numRuns: 12,
          // The edges: exactly at the bound, one byte past it, one call past it alone.
          examples: [[[48 * KiB, 48 * KiB]], [[48 * KiB, 48 * KiB + 1]], [[11, total + 1 - 11]]]
        }
      )
    })
  })
}

describe("maxTotalArgumentBytes holds for argument text a decoder holds back", () => {
  it("Chat: calls whose names never come are bounded together while held, not only once their blocks open", async () => {
    // The recorded argument chunk carries no id and no name (the opening chunk does): a server that sends only
    // these holds every call's text back until finish_reason. 12 calls × 24 KiB, each under the per-call bound.
    const argumentChunk = JSON.parse(recordedEvents("openai-chat", "parallel-tool-calls")[1]!.data) as {
      choices: Array<{ delta: { tool_calls: Array<{ index: number; function: { arguments: string } }> } }>
    }
    const events: Array<{ data: string }> = []
    for (let index = 0; index < 12; index++) {
      const chunk = structuredClone(argumentChunk)
      const call = chunk.choices[0]!.delta.tool_calls[0]!
      call.index = index
      call.function.arguments = argumentText(24 * KiB)
      events.push({ data: JSON.stringify(chunk) })
    }
    const { client } = await start("openai-chat", "openai", [{ kind: "stream", transcript: sseText(events), stallAfterEvents: events.length }], {
      maxArgumentBytes: 32 * KiB,
      maxTotalArgumentBytes: 128 * KiB
    })
    const { worker } = storeWorker(client)
    const outcome = await settle(worker.run("store"))
    expect(outcome).toMatchObject({ status: "rejected", limit: "maxTotalArgumentBytes", max: 128 * KiB })
    expect(outcome.message).toContain("held before the calls' names")

    // The same through the scheme's decoder used on its own (no transport counting): what it holds counts alone.
    const decoder = openAiChatScheme.decoder(undefined, { limits: { ...defaultResponseLimits, maxArgumentBytes: 32 * KiB, maxTotalArgumentBytes: 128 * KiB } })
    expect(() => {
      for (const event of events) decoder.push({ event: "message", data: event.data })
    }).toThrow(expect.objectContaining({ _tag: "LlmLimitExceeded", limit: "maxTotalArgumentBytes" }))
  })

  it("Gemini: a call streamed in partialArgs pieces counts with the calls before it while its pieces are held", async () => {
    // Shapes from gemini/parallel-tool-calls.sse (whole calls) and gemini/streamed-arguments.sse (a call opened
    // with willContinue, then partialArgs pieces); the stream then stalls, so only a bound on held text can end it.
    const whole = scaledToolCalls("gemini", [40 * KiB, 40 * KiB])
      .split("\n\n")
      .filter((frame) => frame.includes("functionCall"))
      .map((frame) => ({ data: frame.slice("data: ".length) }))
    const envelope = JSON.parse(recordedEvents("gemini", "streamed-arguments")[1]!.data) as {
      candidates: Array<{ content: { parts: Array<Record<string, unknown>> } }>
    }
    const part = (functionCall: Record<string, unknown>) => {
      const chunk = structuredClone(envelope)
      chunk.candidates[0]!.content.parts = [{ functionCall }]
      return { data: JSON.stringify(chunk) }
    }
    const pieces = Array.from({ length: 8 }, () =>
      part({ partialArgs: [{ jsonPath: "$.data", stringValue: "a".repeat(8 * KiB), willContinue: true }], willContinue: true })
    )
    const events = [...whole, part({ name: SCALED_TOOL, willContinue: true }), ...pieces]
    const { client } = await start("gemini", "gemini", [{ kind: "stream", transcript: sseText(events), stallAfterEvents: events.length }], {
      maxTotalArgumentBytes: 128 * KiB
    })
    const { worker } = storeWorker(client)
    const outcome = await settle(worker.run("store"))
    expect(outcome).toMatchObject({ status: "rejected", limit: "maxTotalArgumentBytes", max: 128 * KiB })
    expect(outcome.message).toContain("streamed arguments")
  })
})
