import { readFileSync } from "node:fs"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import type { Event, Usage } from "../../src/llm/event.ts"
import type { Request } from "../../src/llm/request.ts"
import type { Scheme } from "../../src/llm/scheme.ts"
import { parseSseText } from "../../src/llm/sse.ts"
import { anthropicScheme } from "../../src/llm/schemes/anthropic.ts"
import { geminiScheme } from "../../src/llm/schemes/gemini.ts"
import { openAiChatScheme } from "../../src/llm/schemes/openai-chat.ts"
import { openAiResponsesScheme } from "../../src/llm/schemes/openai-responses.ts"
import { ResponseCollector } from "../../src/timeline/assistant-response.ts"
import { Timeline } from "../../src/timeline/timeline.ts"

const request: Request = { model: "m", items: [], tools: [], config: {} }

const SCHEMES: Readonly<Record<string, Scheme>> = {
  "openai-chat": openAiChatScheme,
  "openai-responses": openAiResponsesScheme,
  anthropic: anthropicScheme,
  gemini: geminiScheme
}

const decodeText = (format: string, text: string): Array<Event> => {
  const decoder = (SCHEMES[format] as Scheme).decoder(request)
  return [...parseSseText(text).flatMap((message) => decoder.push(message)), ...decoder.end()]
}

const fixture = (format: string, name: string): string =>
  readFileSync(new URL(`../fixtures/sse/${format}/${name}.sse`, import.meta.url), "utf8")

/** The response's merged usage and raw usage, as a caller of `LlmClient.stream` assembles them. */
const collect = (events: ReadonlyArray<Event>) => {
  const timeline = new Timeline()
  const collector = new ResponseCollector(timeline)
  for (const event of events) timeline.dispatch(event)
  timeline.finish()
  const result = collector.result()
  return { usage: result.usage, raw: result.rawUsage }
}

const holdsSumRule = (usage: Usage): void => {
  const { inputTokens, outputTokens, totalTokens, reasoningTokens } = usage
  const summable = inputTokens !== undefined && outputTokens !== undefined && Number.isSafeInteger(inputTokens + outputTokens)
  expect(totalTokens !== undefined).toBe(summable)
  if (totalTokens !== undefined) expect((inputTokens as number) + (outputTokens as number)).toBe(totalTokens)
  if (reasoningTokens !== undefined && outputTokens !== undefined) expect(reasoningTokens).toBeLessThanOrEqual(outputTokens)
  for (const value of Object.values(usage)) expect(Number.isSafeInteger(value) && value >= 0).toBe(true)
}

describe("one usage model on every format's own fixtures", () => {
  it("Chat, xAI style: completion_tokens leaves reasoning out; the total gives it away", () => {
    const { usage, raw } = collect(decodeText("openai-chat", fixture("openai-chat", "usage-reasoning-excluded")))
    expect(usage).toEqual({ inputTokens: 40, outputTokens: 118, totalTokens: 158, reasoningTokens: 115, cacheReadTokens: 32 })
    expect(raw?.["completion_tokens"]).toBe(3)
    expect(raw?.["num_sources_used"]).toBe(0)
  })

  it("Responses: output_tokens includes reasoning", () => {
    const { usage, raw } = collect(decodeText("openai-responses", fixture("openai-responses", "usage-reasoning")))
    expect(usage).toEqual({ inputTokens: 75, outputTokens: 140, totalTokens: 215, reasoningTokens: 128, cacheReadTokens: 64 })
    expect(raw?.["output_tokens_details"]).toEqual({ reasoning_tokens: 128 })
  })

  it("Anthropic: cache counters join the input, thinking_tokens is the reasoning, start and delta objects merge", () => {
    const { usage, raw } = collect(decodeText("anthropic", fixture("anthropic", "usage-cache-thinking")))
    expect(usage).toEqual({
      inputTokens: 9 + 3400 + 1200,
      outputTokens: 52,
      totalTokens: 4661,
      reasoningTokens: 40,
      cacheReadTokens: 3400,
      cacheWriteTokens: 1200
    })
    // From message_start (service_tier, cache_creation) and message_delta (the later counters win).
    expect(raw).toMatchObject({ service_tier: "standard", cache_read_input_tokens: 3400, output_tokens: 52, server_tool_use: { web_search_requests: 0 } })
  })

  it("Gemini: candidatesTokenCount leaves thoughts out; trafficType-only chunks erase nothing", () => {
    const { usage, raw } = collect(decodeText("gemini", fixture("gemini", "usage-thoughts")))
    expect(usage).toEqual({ inputTokens: 30, outputTokens: 70, totalTokens: 100, reasoningTokens: 66, cacheReadTokens: 16 })
    expect(raw).toMatchObject({ trafficType: "ON_DEMAND", candidatesTokenCount: 4, thoughtsTokenCount: 66 })
  })
})

/** Realistic counts: a prompt (part of it cached), visible output and reasoning. */
const counts = fc.record({
  prompt: fc.integer({ min: 0, max: 200_000 }),
  cached: fc.integer({ min: 0, max: 200_000 }),
  visible: fc.integer({ min: 0, max: 50_000 }),
  reasoning: fc.integer({ min: 0, max: 50_000 }),
  sendTotal: fc.boolean(),
  sendReasoning: fc.boolean(),
  /** Whether this server counts reasoning inside its output count (OpenAI) or apart (xAI, Gemini). */
  inclusive: fc.boolean()
})
type Counts = typeof counts extends fc.Arbitrary<infer T> ? T : never

const sse = (events: ReadonlyArray<{ readonly event?: string; readonly data: unknown }>): string =>
  events.map(({ event, data }) => `${event === undefined ? "" : `event: ${event}\n`}data: ${JSON.stringify(data)}\n\n`).join("")

/** One short text response per format whose usage carries the generated counts, spelled the format's way. */
const STREAMS: Readonly<Record<string, (c: Counts) => string>> = {
  "openai-chat": (c) => {
    const completion = c.inclusive ? c.visible + c.reasoning : c.visible
    const usage = {
      prompt_tokens: c.prompt,
      completion_tokens: completion,
      ...(c.sendTotal ? { total_tokens: c.prompt + c.visible + c.reasoning } : {}),
      prompt_tokens_details: { cached_tokens: Math.min(c.cached, c.prompt) },
      ...(c.sendReasoning ? { completion_tokens_details: { reasoning_tokens: c.reasoning } } : {})
    }
    const chunk = (choice: object, extra: object = {}) => ({ id: "chatcmpl-p", object: "chat.completion.chunk", choices: [choice], ...extra })
    return `${sse([
      { data: chunk({ index: 0, delta: { content: "ok" }, finish_reason: null }) },
      { data: chunk({ index: 0, delta: {}, finish_reason: "stop" }) },
      { data: { id: "chatcmpl-p", object: "chat.completion.chunk", choices: [], usage } }
    ])}data: [DONE]\n\n`
  },
  "openai-responses": (c) => {
    const output = c.inclusive ? c.visible + c.reasoning : c.visible
    const usage = {
      input_tokens: c.prompt,
      input_tokens_details: { cached_tokens: Math.min(c.cached, c.prompt) },
      output_tokens: output,
      ...(c.sendReasoning ? { output_tokens_details: { reasoning_tokens: c.reasoning } } : {}),
      ...(c.sendTotal ? { total_tokens: c.prompt + c.visible + c.reasoning } : {})
    }
    const item = { id: "msg_p", type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text: "ok", annotations: [] }] }
    return sse([
      { event: "response.created", data: { type: "response.created", response: { id: "resp_p", status: "in_progress", output: [] } } },
      { event: "response.output_item.added", data: { type: "response.output_item.added", output_index: 0, item: { ...item, status: "in_progress", content: [] } } },
      { event: "response.output_text.delta", data: { type: "response.output_text.delta", item_id: "msg_p", output_index: 0, content_index: 0, delta: "ok" } },
      { event: "response.output_item.done", data: { type: "response.output_item.done", output_index: 0, item } },
      { event: "response.completed", data: { type: "response.completed", response: { id: "resp_p", status: "completed", output: [item], usage } } }
    ])
  },
  anthropic: (c) => {
    // No total on this format; thinking is inside output_tokens. The cached part is split into reads and writes.
    const read = Math.floor(c.cached / 2)
    const written = c.cached - read
    return sse([
      { event: "message_start", data: { type: "message_start", message: { id: "msg_p", usage: { input_tokens: c.prompt, cache_read_input_tokens: read, cache_creation_input_tokens: 0, output_tokens: 1 } } } },
      { event: "content_block_start", data: { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } } },
      { event: "content_block_delta", data: { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "ok" } } },
      { event: "content_block_stop", data: { type: "content_block_stop", index: 0 } },
      {
        event: "message_delta",
        data: {
          type: "message_delta",
          delta: { stop_reason: "end_turn" },
          usage: {
            cache_creation_input_tokens: written,
            output_tokens: c.visible + c.reasoning,
            ...(c.sendReasoning ? { output_tokens_details: { thinking_tokens: c.reasoning } } : {})
          }
        }
      },
      { event: "message_stop", data: { type: "message_stop" } }
    ])
  },
  gemini: (c) => {
    const usageMetadata = {
      promptTokenCount: c.prompt,
      candidatesTokenCount: c.inclusive ? c.visible + c.reasoning : c.visible,
      ...(c.sendReasoning ? { thoughtsTokenCount: c.reasoning } : {}),
      ...(c.sendTotal ? { totalTokenCount: c.prompt + c.visible + c.reasoning } : {}),
      cachedContentTokenCount: Math.min(c.cached, c.prompt)
    }
    return sse([
      { data: { candidates: [{ content: { role: "model", parts: [{ text: "ok" }] } }], usageMetadata: { trafficType: "ON_DEMAND" } } },
      { data: { candidates: [{ content: { role: "model", parts: [{ text: "" }] }, finishReason: "STOP" }], usageMetadata } }
    ])
  }
}

describe("the sum rule holds on every format's decoder", () => {
  for (const format of Object.keys(STREAMS)) {
    it(`${format}: generated usage payloads add up, and a total the provider sent comes out unchanged`, () => {
      fc.assert(
        fc.property(counts, (c) => {
          const { usage } = collect(decodeText(format, (STREAMS[format] as (c: Counts) => string)(c)))
          holdsSumRule(usage)
          const anthropic = format === "anthropic"
          const expectedInput = anthropic ? c.prompt + c.cached : c.prompt
          expect(usage.inputTokens).toBe(expectedInput)
          // The whole output, reasoning included, whenever the wire says enough to tell how it counted: it sent a
          // total, its convention is the format's own, or there is no reasoning to place.
          const formatConvention = format === "gemini" ? !c.inclusive : c.inclusive
          const decidable = c.sendTotal || anthropic || formatConvention || c.reasoning === 0 || !c.sendReasoning
          if (decidable && (c.sendReasoning || c.inclusive || c.reasoning === 0)) expect(usage.outputTokens).toBe(c.visible + c.reasoning)
          if (c.sendTotal && !anthropic) expect(usage.totalTokens).toBe(c.prompt + c.visible + c.reasoning)
          if (c.sendReasoning && decidable) expect(usage.reasoningTokens).toBe(c.reasoning)
        }),
        { numRuns: 200 }
      )
    })

    it(`${format}: hostile usage values never break the rule nor the decoder`, () => {
      const hostile = fc.oneof(fc.integer({ min: -5, max: 1_000 }), fc.double(), fc.string({ maxLength: 3 }), fc.constant(null), fc.constant(Number.MAX_SAFE_INTEGER))
      fc.assert(
        fc.property(fc.record({ prompt: hostile, cached: hostile, visible: hostile, reasoning: hostile }), fc.boolean(), (values, inclusive) => {
          const c = { ...values, sendTotal: true, sendReasoning: true, inclusive } as unknown as Counts
          holdsSumRule(collect(decodeText(format, (STREAMS[format] as (c: Counts) => string)(c))).usage)
        }),
        { numRuns: 200 }
      )
    })
  }
})
