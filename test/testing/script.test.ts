import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { Item } from "../../src/index.ts"
import type { SchemeName } from "../../src/index.ts"
import { encodeScriptStep, reply, replyError, ScriptEncodingError, scriptTranscript, startReplayProvider } from "../../src/testing/index.ts"
import type { ReplyBuilder } from "../../src/testing/index.ts"
import { clientFor, expectedDigest, playThroughClient, SCHEMES } from "./script-digest.ts"
import { effectiveStopReason } from "../../src/testing/script.ts"

describe("reply(): one neutral script, four wire formats", () => {
  const scripts: ReadonlyArray<readonly [string, ReplyBuilder]> = [
    ["text in chunks with usage", reply().text(["Hello", ", world."]).usage({ inputTokens: 12, outputTokens: 4, cacheReadTokens: 8 })],
    [
      "reasoning with a signature, then parallel calls",
      reply()
        .reasoning(["The user wants ", "two cities."], { signature: "c2lnbmF0dXJl" })
        .toolCall("get_weather", { city: "Paris" }, { id: "call_a", chunks: 3 })
        .toolCall("get_weather", { city: "Oslo" }, { id: "call_b" })
        .usage({ inputTokens: 300, outputTokens: 90, reasoningTokens: 60, cacheReadTokens: 100, cacheWriteTokens: 50 })
    ],
    ["a cut-off answer", reply().text("It is").stop("max_tokens")],
    ["an in-stream provider error", reply().text("Let me think").error("invalid_request_error", "Something broke")],
    ["a body that ends without its terminal event", reply().text("Half an ans").cut("end")],
    ["a dropped connection", reply().text("Half").cut("reset")]
  ]
  it.each(scripts)("%s: every format yields the script's blocks, usage, stop reason and outcome", async (_name, script) => {
    for (const scheme of SCHEMES) {
      const { digest } = await playThroughClient(scheme, script)
      const outcome = script.ending.type === "cut" && script.ending.how === "reset" ? "LlmNetworkError" : undefined
      expect(digest, scheme).toEqual({ ...expectedDigest(scheme, script, effectiveStopReason(script)), ...(outcome === undefined ? {} : { outcome }) })
    }
  })

  it("encodes deterministically: the same script gives the same bytes", () => {
    const script = reply().reasoning("x", { signature: "s" }).text("y").toolCall("t", { a: 1 }, { id: "c" }).usage({ inputTokens: 1, outputTokens: 2 })
    for (const scheme of SCHEMES) expect(scriptTranscript(scheme, script, 3)).toBe(scriptTranscript(scheme, script, 3))
    expect(scriptTranscript("anthropic", script)).toContain(`"type":"signature_delta","signature":"s"`)
    expect(scriptTranscript("openai-responses", script)).toContain(`"encrypted_content":"s"`)
    expect(scriptTranscript("gemini", script)).toContain(`"thoughtSignature":"s"`)
    expect(scriptTranscript("gemini", script)).toContain("\r\n\r\n")
  })

  it("refuses what a format cannot say, naming it", () => {
    expect(() => encodeScriptStep("gemini", reply().toolCall("t", "{broken"))).toThrow(ScriptEncodingError)
    expect(() => encodeScriptStep("gemini", reply().toolCall("t", "{broken"))).toThrow(/Gemini sends arguments as a JSON object/)
    expect(() => reply().usage({ inputTokens: 1, outputTokens: 1, cacheReadTokens: 2 })).toThrow(/cannot exceed/)
    expect(() => reply().stall(-1)).toThrow(RangeError)
    expect(() => replyError(200)).toThrow(/400–599/)
  })

  it("HTTP errors carry each provider's body and Retry-After; the client reports the status and retries after it", async () => {
    for (const scheme of SCHEMES) {
      const replay = await startReplayProvider({ scheme, script: [replyError(429, { retryAfterSeconds: 0 }), reply().text("ok")] })
      try {
        const sleeps: Array<number> = []
        const client = clientFor(scheme, replay.baseUrl, { retry: { maxRetries: 1, sleep: async (ms) => void sleeps.push(ms) } })
        const texts: Array<string> = []
        for await (const event of client.stream({ model: "scripted-model", items: [Item.userText("hi")], tools: [], config: {} })) {
          if (event.type === "block_delta" && event.delta.kind === "text") texts.push(event.delta.text)
        }
        expect([texts.join(""), sleeps, replay.requests.length], scheme).toEqual(["ok", [0], 2])
      } finally {
        await replay.close()
      }
    }
    const body = (scheme: SchemeName) => JSON.parse((encodeScriptStep(scheme, replyError(429)) as { body: string }).body)
    expect(body("anthropic")).toEqual({ type: "error", error: { type: "rate_limit_error", message: "Rate limit exceeded" } })
    expect(body("gemini")).toEqual({ error: { code: 429, message: "Rate limit exceeded", status: "RESOURCE_EXHAUSTED" } })
    expect(body("openai-chat").error.type).toBe("rate_limit_exceeded")
  })

  it("a stall is a real pause: it trips the client's idle deadline, on every format", async () => {
    for (const scheme of SCHEMES) {
      const replay = await startReplayProvider({ scheme, script: [reply().text("Hello").stall(5_000).text(" there")] })
      try {
        const client = clientFor(scheme, replay.baseUrl, { timeouts: { idleMs: 100 } })
        const failure = await (async () => {
          for await (const _ of client.stream({ model: "scripted-model", items: [Item.userText("hi")], tools: [], config: {} })) void _
        })().catch((error: { _tag: string; phase?: string }) => `${error._tag} ${error.phase}`)
        expect(failure, scheme).toBe("LlmTimeout idle")
      } finally {
        await replay.close()
      }
    }
  })

  it("a hang keeps the connection open and silent until the client gives up", async () => {
    const replay = await startReplayProvider({ scheme: "anthropic", script: [reply().hang()] })
    try {
      const client = clientFor("anthropic", replay.baseUrl, { timeouts: { firstEventMs: 100 } })
      const failure = await (async () => {
        for await (const _ of client.stream({ model: "scripted-model", items: [Item.userText("hi")], tools: [], config: {} })) void _
      })().catch((error: { _tag: string; phase?: string }) => `${error._tag} ${error.phase}`)
      expect(failure).toBe("LlmTimeout first_event")
    } finally {
      await replay.close()
    }
  })
})

/** Scripts every format can say the same way (see the guide: Chat keeps one text block, Gemini sends whole calls). */
const chunk = fc.string({ minLength: 1, maxLength: 12 })
const chunks = fc.array(chunk, { minLength: 1, maxLength: 3 })
const jsonValue = fc.oneof(fc.string({ maxLength: 8 }), fc.integer(), fc.boolean(), fc.constant(null))
const args = fc.dictionary(fc.string({ minLength: 1, maxLength: 6 }), jsonValue, { maxKeys: 3 })
const stall = fc.option(fc.integer({ min: 0, max: 3 }), { nil: undefined })
const script = fc
  .record({
    reasoning: fc.option(fc.record({ chunks, signature: fc.option(fc.base64String({ minLength: 4, maxLength: 24 }), { nil: undefined }) }), { nil: undefined }),
    text: fc.option(chunks, { nil: undefined }),
    calls: fc.array(fc.record({ name: fc.stringMatching(/^[a-z][a-z_]{0,11}$/), args, pieces: fc.integer({ min: 1, max: 3 }) }), { maxLength: 3 }),
    usage: fc.option(
      fc
        .record({ input: fc.nat(10_000), output: fc.nat(10_000), cacheRead: fc.option(fc.nat(), { nil: undefined }), cacheWrite: fc.option(fc.nat(), { nil: undefined }), reasoning: fc.option(fc.nat(), { nil: undefined }) })
        .map(({ input, output, cacheRead, cacheWrite, reasoning }) => ({
          inputTokens: input,
          outputTokens: output,
          ...(cacheRead === undefined ? {} : { cacheReadTokens: cacheRead % (input + 1) }),
          ...(cacheWrite === undefined || cacheRead !== undefined ? {} : { cacheWriteTokens: cacheWrite % (input + 1) }),
          ...(reasoning === undefined ? {} : { reasoningTokens: reasoning % (output + 1) })
        })),
      { nil: undefined }
    ),
    stop: fc.constantFrom("end_turn", "max_tokens", "content_filter") as fc.Arbitrary<"end_turn" | "max_tokens" | "content_filter">,
    ending: fc.constantFrom("complete", "complete", "error", "cut"),
    stalls: fc.tuple(stall, stall)
  })
  .map(({ reasoning, text, calls, usage, stop, ending, stalls }) => {
    let built = reply()
    if (stalls[0] !== undefined) built = built.stall(stalls[0])
    if (reasoning !== undefined) built = built.reasoning(reasoning.chunks, reasoning.signature === undefined ? {} : { signature: reasoning.signature })
    if (text !== undefined) built = built.text(text)
    if (stalls[1] !== undefined) built = built.stall(stalls[1])
    calls.forEach((call, i) => (built = built.toolCall(call.name, call.args, { id: `call_${i}`, chunks: call.pieces })))
    if (usage !== undefined) built = built.usage(usage)
    built = built.stop(stop)
    return ending === "error" ? built.error("invalid_request_error", "scripted failure") : ending === "cut" ? built.cut("end") : built
  })

describe("property: any neutral script round-trips encode → real client decode on every format", () => {
  it("yields the script's own blocks, signatures, usage, stop reason and outcome", async () => {
    await fc.assert(
      fc.asyncProperty(script, async (step) => {
        for (const scheme of SCHEMES) {
          const { digest } = await playThroughClient(scheme, step)
          expect(digest, scheme).toEqual(expectedDigest(scheme, step, effectiveStopReason(step)))
        }
      }),
      { numRuns: 40 }
    )
  })
})
