import { Effect, Fiber } from "effect"
import { describe, expect, expectTypeOf, it } from "vitest"
import { z } from "zod"
import { readJsonAnswer } from "../../src/llm/completion/json-answer.ts"
import type { SchemeName } from "../../src/llm/scheme.ts"
import { answerSse, anthropicToolAnswerSse } from "../support/answer-sse.ts"
import { answering, rejection, replay, runtimeOn, SECRET } from "./support.ts"

const Triage = z.object({ urgency: z.number(), category: z.enum(["billing", "bug", "other"]) })
const call = { instructions: "Score urgency (0-1) and pick a category.", input: [{ type: "text" as const, text: "I was charged twice!" }] }

describe("completeStructured on every wire format", () => {
  const MODELS: Record<SchemeName, string> = { "openai-chat": "gpt-4.1-mini", "openai-responses": "gpt-4.1-mini", anthropic: "claude-sonnet-4-5", gemini: "gemini-2.5-flash" }
  it.each(Object.keys(MODELS) as ReadonlyArray<SchemeName>)("%s: native structured output, parsed and typed", async (scheme) => {
    const server = await answering(scheme, '{"urgency":0.9,"category":"billing"}', { input: 50, output: 8 })
    const { runtime } = runtimeOn(server, { scheme, model: MODELS[scheme] })
    const result = await runtime.llm.forPlugin("triage").completeStructured({ ...call, jsonSchema: Triage, schemaName: "support.triage", temperature: 0 })
    expect(result).toMatchObject({ contentType: "json", parsed: { urgency: 0.9, category: "billing" } })
    expectTypeOf(result.parsed).toEqualTypeOf<{ urgency: number; category: "billing" | "bug" | "other" } | null>()
    expect(result.audit.schemaName).toBe("support.triage")
    expect(result.usage).toMatchObject({ inputTokens: 50, outputTokens: 8, totalTokens: 58 })
    const body = server.requests[0]?.body ?? ""
    expect(body).toContain(scheme === "openai-chat" ? '"response_format":{"type":"json_schema","json_schema":{"name":"support_triage"' : scheme === "openai-responses" ? '"text":{"format":{"type":"json_schema","name":"support_triage"' : scheme === "anthropic" ? '"output_config":{"format":{"type":"json_schema"' : '"responseMimeType":"application/json","responseJsonSchema":')
  })

  it("anthropic without the native format: a forced tool", async () => {
    const server = await replay("anthropic", [{ kind: "stream", transcript: anthropicToolAnswerSse("structured_answer", '{"urgency":0.2,"category":"other"}') }])
    const { runtime } = runtimeOn(server, { scheme: "anthropic", model: "claude-3-5-haiku-20241022" })
    const result = await runtime.llm.forPlugin("triage").completeStructured({ ...call, jsonSchema: Triage })
    expect(result.parsed).toEqual({ urgency: 0.2, category: "other" })
    expect(result.text).toBe('{"urgency":0.2,"category":"other"}')
  })
})

describe("parsing and validating the answer", () => {
  const parsedFrom = async (text: string, schema: boolean) => {
    const server = await answering("openai-chat", text)
    const { runtime } = runtimeOn(server)
    return runtime.llm.forPlugin("p").completeStructured({ ...call, ...(schema ? { jsonSchema: Triage } : { jsonMode: true }) })
  }

  it.each([
    ["a code fence", 'Here you go:\n```json\n{"urgency":1,"category":"bug"}\n```'],
    ["a reasoning block first", '<think>they say "charged", so {billing}</think>{"urgency":1,"category":"bug"}'],
    ["a later fence after a broken one", '```\n{"urgency":\n```\nfixed: ```json\n{"urgency":1,"category":"bug"}\n```'],
    ["prose around it", 'The result is {"urgency":1,"category":"bug"} as requested.']
  ])("finds the first balanced JSON value behind %s", async (_, text) => {
    expect((await parsedFrom(text, true)).parsed).toEqual({ urgency: 1, category: "bug" })
  })

  it("a bare null is a failure, with the raw text kept", async () => {
    const result = await parsedFrom("null", true)
    expect(result).toMatchObject({ contentType: "text", parsed: null, text: "null", issues: [{ path: [], message: "the answer is a bare null" }] })
    expect(result.audit.outcome).toBe("invalid_output")
  })

  it("a validation failure returns the text, the issues and the usage — not an exception", async () => {
    const result = await parsedFrom('{"urgency":"high","category":"billing"}', true)
    expect(result).toMatchObject({ contentType: "text", parsed: null, text: '{"urgency":"high","category":"billing"}', usage: { totalTokens: 30 } })
    expect(result.issues?.[0]).toMatchObject({ path: ["urgency"] })
  })

  it("JSON mode without a schema accepts any object, and only an object", async () => {
    expect((await parsedFrom('{"anything":[1,2]}', false)).parsed).toEqual({ anything: [1, 2] })
    expect((await parsedFrom("[1,2]", false)).issues).toEqual([{ path: [], message: "expected a JSON object" }])
  })

  it("always validates, even when the provider promised the schema", async () => {
    expect((await parsedFrom('{"urgency":0.5,"category":"sales"}', true)).contentType).toBe("text")
  })

  it("repair: one retry with the issues fed back; usage of both requests summed", async () => {
    const server = await replay("openai-chat", [
      { kind: "stream", transcript: answerSse("openai-chat", '{"urgency":"high"}', { input: 20, output: 5 }) },
      { kind: "stream", transcript: answerSse("openai-chat", '{"urgency":0.8,"category":"billing"}', { input: 40, output: 9 }) }
    ])
    const { runtime } = runtimeOn(server)
    const result = await runtime.llm.forPlugin("p").completeStructured({ ...call, jsonSchema: Triage, repair: true })
    expect(result).toMatchObject({ contentType: "json", parsed: { urgency: 0.8, category: "billing" }, usage: { inputTokens: 60, outputTokens: 14 } })
    expect(result.audit.repaired).toBe(true)
    const retry = JSON.parse(server.requests[1]?.body ?? "{}") as { messages: Array<{ role: string; content: unknown }> }
    expect(retry.messages.at(-2)).toEqual({ role: "assistant", content: '{"urgency":"high"}' })
    expect(String(retry.messages.at(-1)?.content)).toMatch(/^Your answer was not accepted: category: required; urgency: expected number, got "high"\. Reply again/)
  })

  it("an unusable schema is a schema error before any call", async () => {
    const server = await answering("openai-chat", "{}")
    const { runtime } = runtimeOn(server)
    const recursive = { type: "object", properties: { child: { $ref: "#" } } }
    expect(await rejection(runtime.llm.forPlugin("p").completeStructured({ ...call, jsonSchema: recursive }))).toMatchObject({ _tag: "PluginLlmSchemaError" })
    expect(await rejection(runtime.llm.forPlugin("p").completeStructured({ ...call, jsonSchema: { type: "string" } }))).toMatchObject({ _tag: "PluginLlmSchemaError" })
    expect(server.requests).toHaveLength(0)
  })

  it("readJsonAnswer is bounded on hostile text", () => {
    expect(readJsonAnswer("[".repeat(10_000) + "]".repeat(10_000))).toEqual({ ok: false, problem: "the answer's JSON is nested deeper than 64 levels" })
    expect(readJsonAnswer("{".repeat(200_000))).toEqual({ ok: false, problem: "the answer's JSON is nested deeper than 64 levels" })
    // 64 openings are tried at most, each one linear scan: an answer full of unbalanced braces stays cheap.
    expect(readJsonAnswer('{"a" } '.repeat(20_000))).toEqual({ ok: false, problem: "no JSON value found in the answer" })
    expect(readJsonAnswer("<think>unclosed {\"a\":1}")).toEqual({ ok: false, problem: "the answer is empty" })
  })
})

describe("usage, cost and audit", () => {
  it("usage carries cache and reasoning tokens, and the cost from the maintained table", async () => {
    const server = await answering("openai-chat", "short", { input: 1_000_000, output: 1_000_000, cacheRead: 500_000, reasoning: 100 })
    const { runtime } = runtimeOn(server)
    const result = await runtime.llm.forPlugin("p").complete({ messages: [{ role: "user", content: "x" }] })
    expect(result.usage).toMatchObject({ inputTokens: 1_000_000, outputTokens: 1_000_000, cacheReadTokens: 500_000, reasoningTokens: 100, costSource: "genai-prices" })
    // gpt-4.1-mini: $0.40 input, $0.10 cached input, $1.60 output per million tokens.
    expect(result.usage.costUsd).toBeCloseTo(0.2 + 0.05 + 1.6, 6)
  })

  it("the operator's price wins; an unknown model has no cost rather than a guess", async () => {
    const server = await answering("openai-chat", "x", { input: 2_000_000, output: 1_000_000 })
    const { runtime } = runtimeOn(server, { model: "house-model", config: { llm: { prices: [{ model: "house-model", input_per_mtok: 1, output_per_mtok: 2 }] } } })
    expect((await runtime.llm.forPlugin("p").complete({ messages: [{ role: "user", content: "x" }] })).usage).toMatchObject({ costUsd: 4, costSource: "config" })
    const other = runtimeOn(await answering("openai-chat", "x"), { model: "unheard-of-model" })
    expect((await other.runtime.llm.forPlugin("p").complete({ messages: [{ role: "user", content: "x" }] })).usage.costUsd).toBeUndefined()
  })

  it("one audit line per call, equal to result.audit, and no credential anywhere", async () => {
    const server = await answering("openai-chat", "done")
    const { runtime, audit } = runtimeOn(server)
    const llm = runtime.llm.forPlugin("hooks")
    const result = await llm.complete({ messages: [{ role: "user", content: "x" }], purpose: "hooks.error-rewrite\u001b[2J" })
    await rejection(llm.complete({ messages: [], purpose: "p" }))
    expect(audit).toHaveLength(2)
    expect(audit.map((a) => a.kind)).toEqual(["complete", "complete"])
    expect(audit[0]).toEqual(result.audit)
    expect(audit[0]).toMatchObject({ pluginId: "hooks", kind: "complete", provider: "openai", requestedModel: "gpt-4.1-mini", agentId: "default", purpose: "hooks.error-rewrite [2J", outcome: "ok", hops: [], visionRouted: false })
    expect(audit[0]?.latencyMs).toBeGreaterThanOrEqual(0)
    expect(audit[1]?.outcome).toBe("PluginLlmInputError")
    await rejection(llm.completeStructured({ instructions: "", input: [] }))
    expect(audit[2]).toMatchObject({ kind: "complete_structured", outcome: "PluginLlmInputError" })
    expect(JSON.stringify([result, audit])).not.toContain(SECRET)
  })
})

describe("budgets, concurrency and cancellation", () => {
  it("a plugin's call budget runs out with PluginLlmBudgetExceeded, before any call", async () => {
    const server = await answering("openai-chat", "ok")
    const { runtime } = runtimeOn(server, { config: { plugins: { entries: { p: { llm: { max_calls: 2 } } } } } })
    const llm = runtime.llm.forPlugin("p")
    await llm.complete({ messages: [{ role: "user", content: "1" }] })
    await llm.complete({ messages: [{ role: "user", content: "2" }] })
    expect(await rejection(llm.complete({ messages: [{ role: "user", content: "3" }] }))).toMatchObject({ _tag: "PluginLlmBudgetExceeded", limit: 2, pluginId: "p" })
    expect(server.requests).toHaveLength(2)
    // Budgets are per plugin.
    await runtime.llm.forPlugin("q").complete({ messages: [{ role: "user", content: "4" }] })
  })

  it("the concurrency cap holds calls back until a slot frees", async () => {
    const server = await replay("openai-chat", [{ kind: "stream", transcript: answerSse("openai-chat", "ok"), gapMs: 30 }])
    const { runtime } = runtimeOn(server, { config: { llm: { budgets: { max_concurrent: 1 } } } })
    const llm = runtime.llm.forPlugin("p")
    const first = llm.complete({ messages: [{ role: "user", content: "1" }] })
    const second = llm.complete({ messages: [{ role: "user", content: "2" }] })
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(runtime.llm.usage("p")).toEqual({ calls: 2, inFlight: 1 })
    await Promise.all([first, second])
    expect(runtime.llm.usage("p")).toEqual({ calls: 2, inFlight: 0 })
  })

  it("an AbortSignal cancels a call in flight with PluginLlmCancelled", async () => {
    const server = await replay("openai-chat", [{ kind: "stream", transcript: answerSse("openai-chat", "late"), stallAfterEvents: 1 }])
    const { runtime } = runtimeOn(server)
    const controller = new AbortController()
    const pending = runtime.llm.forPlugin("p").complete({ messages: [{ role: "user", content: "x" }], signal: controller.signal })
    setTimeout(() => controller.abort(), 50)
    expect(await rejection(pending)).toMatchObject({ _tag: "PluginLlmCancelled" })
    await server.requests[0]?.disconnected
    expect(runtime.llm.usage("p").inFlight).toBe(0)
  })

  it("interrupting the Effect form cancels the request", async () => {
    const server = await replay("openai-chat", [{ kind: "stream", transcript: answerSse("openai-chat", "late"), stallAfterEvents: 1 }])
    const { runtime } = runtimeOn(server)
    const program = Effect.gen(function* () {
      const fiber = yield* Effect.forkChild(runtime.llm.forPlugin("p").completeStructuredEffect({ ...call, jsonSchema: Triage }))
      yield* Effect.sleep("50 millis")
      yield* Fiber.interrupt(fiber)
    })
    await Effect.runPromise(program)
    await server.requests[0]?.disconnected
  })

  it("the Effect form fails with the typed error", async () => {
    const server = await answering("openai-chat", "x")
    const { runtime } = runtimeOn(server)
    const exit = await Effect.runPromiseExit(runtime.llm.forPlugin("p").completeEffect({ messages: [{ role: "user", content: "x" }], provider: "other" }))
    expect(exit._tag).toBe("Failure")
    expect(JSON.stringify(exit)).toContain("PluginLlmTrustError")
  })
})
