import { readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import type { Event } from "../../../src/llm/event.ts"
import { LlmProtocolError } from "../../../src/llm/llm-error.ts"
import { createGeminiDecoder, GENERATED_CALL_ID_PREFIX, isGeneratedCallId } from "../../../src/llm/schemes/gemini-decoder.ts"
import type { StreamDecoder } from "../../../src/llm/scheme.ts"
import { parseSseText } from "../../../src/llm/sse.ts"
import { withoutRawUsage } from "./without-raw-usage.ts"

const fixture = (name: string): string =>
  readFileSync(new URL(`../../fixtures/sse/gemini/${name}.sse`, import.meta.url), "utf8")

const sequentialIds = () => {
  let n = 0
  return () => `${GENERATED_CALL_ID_PREFIX}${++n}`
}

const run = (decoder: StreamDecoder, text: string): Array<Event> =>
  withoutRawUsage([...parseSseText(text).flatMap((message) => decoder.push(message)), ...decoder.end()])

const decode = (text: string): Array<Event> => run(createGeminiDecoder({ newCallId: sequentialIds() }), text)

const SIG1 =
  "CiQB0e2Kb7Tp3Yx2Sh0M8y6mdNhUJ0vH6bVNq1WlU9+Xb7cKaQHR7YpvQ6lTz7CkqNRjLGH2pGm5fE0sVgqXz1jTq0e4nMfW1h3c9Zl0wXy2AoMHbP0bZVh5n3J0y9tI4yP6mTnGdL3kVqY8fF2s="
const SIG2 =
  "Cs0CAdHtim9aW7qD0T3oBw1kRr8lq3cPgp2mK6V0v5D9r2VxhN7CqgZ8oGRyAKv2rKQbWkP4Tn9gEw0j5z1sY7yU3uFq0mHcXlB1ZrT6aJ8nS4oLdW2eVxC9iG5pQyR3hM7kJ0fA1tU6bN8sZ2wE4xO5vD3qI9cL="

describe("Gemini stream decoder", () => {
  it("runs text chunks together into one block and closes it at finishReason", () => {
    expect(decode(fixture("text"))).toEqual([
      { type: "status", status: "started", model: "gemini-2.5-flash", responseId: "z1AaaZ3XF8uW1dkP5N-2sQk" },
      { type: "block_start", index: 0, block: { kind: "text" } },
      { type: "block_delta", index: 0, delta: { kind: "text", text: "Hello" } },
      { type: "block_delta", index: 0, delta: { kind: "text", text: "! How can I help you today?" } },
      { type: "block_stop", index: 0, stopReason: "end_turn" },
      { type: "usage", inputTokens: 8, outputTokens: 30, reasoningTokens: 21, totalTokens: 38 },
      { type: "status", status: "completed", stopReason: "end_turn" }
    ])
  })

  it("gives two calls to the same function distinct ids and keeps the thought signature on the first", () => {
    expect(decode(fixture("parallel-tool-calls"))).toEqual([
      { type: "status", status: "started", model: "gemini-2.5-flash", responseId: "L2AaaZ-4N9yV1dkPqKnC8Ak" },
      {
        type: "block_start",
        index: 0,
        block: { kind: "tool_use", id: `${GENERATED_CALL_ID_PREFIX}1`, name: "get_weather", thoughtSignature: SIG1 }
      },
      { type: "block_delta", index: 0, delta: { kind: "input_json", json: '{"location":"Paris"}' } },
      { type: "block_stop", index: 0 },
      { type: "block_start", index: 1, block: { kind: "tool_use", id: `${GENERATED_CALL_ID_PREFIX}2`, name: "get_weather" } },
      { type: "block_delta", index: 1, delta: { kind: "input_json", json: '{"location":"Tokyo"}' } },
      { type: "block_stop", index: 1 },
      { type: "usage", inputTokens: 74, outputTokens: 142, reasoningTokens: 112, totalTokens: 216 },
      { type: "status", status: "completed", stopReason: "tool_use" }
    ])
  })

  it("never repeats a generated id, across calls and across responses", () => {
    const ids = [run(createGeminiDecoder(), fixture("parallel-tool-calls")), run(createGeminiDecoder(), fixture("parallel-tool-calls"))]
      .flat()
      .flatMap((event) => (event.type === "block_start" && event.block.kind === "tool_use" ? [event.block.id] : []))
    expect(ids).toHaveLength(4)
    expect(new Set(ids).size).toBe(4)
    expect(ids.every(isGeneratedCallId)).toBe(true)
  })

  it("keeps an id Gemini sent", () => {
    const decoder = createGeminiDecoder()
    const events = decoder.push({
      event: "message",
      data: JSON.stringify({ candidates: [{ content: { parts: [{ functionCall: { id: "a1b2c3", name: "now", args: {} } }] } }] })
    })
    expect(events).toContainEqual({ type: "block_start", index: 0, block: { kind: "tool_use", id: "a1b2c3", name: "now" } })
    expect(events).toContainEqual({ type: "block_delta", index: 0, delta: { kind: "input_json", json: "{}" } })
  })

  it("streams thoughts as thinking, never as visible text, then the signed call", () => {
    expect(decode(fixture("thinking-tool-call"))).toEqual([
      { type: "status", status: "started", model: "gemini-2.5-flash", responseId: "p3AaaY7UG5eW1dkP0ZrJ6Qc" },
      { type: "block_start", index: 0, block: { kind: "thinking" } },
      {
        type: "block_delta",
        index: 0,
        delta: { kind: "thinking", text: "**Finding the time**\n\nThe user asks for the time in Berlin, so I will call get_time." }
      },
      { type: "block_stop", index: 0 },
      {
        type: "block_start",
        index: 1,
        block: { kind: "tool_use", id: `${GENERATED_CALL_ID_PREFIX}1`, name: "get_time", thoughtSignature: SIG2 }
      },
      { type: "block_delta", index: 1, delta: { kind: "input_json", json: '{"timezone":"Europe/Berlin"}' } },
      { type: "block_stop", index: 1 },
      { type: "usage", inputTokens: 61, outputTokens: 114, reasoningTokens: 96, totalTokens: 175 },
      { type: "status", status: "completed", stopReason: "tool_use" }
    ])
  })

  it("reports cached prompt tokens and counts thoughts as output", () => {
    expect(decode(fixture("cached-usage")).filter((event) => event.type === "usage")).toEqual([
      { type: "usage", inputTokens: 2113, outputTokens: 32, reasoningTokens: 30, totalTokens: 2145, cacheReadTokens: 2048 }
    ])
  })

  it("aborts the open thinking block when the stream breaks off into an error body", () => {
    // Gemini appends the error as bare JSON, not as an SSE event: the parser sees no message, the stream just ends.
    expect(decode(fixture("error-mid-stream"))).toEqual([
      { type: "status", status: "started", model: "gemini-2.5-flash", responseId: "e5AaaWq1M7aW1dkPk-3GiQs" },
      { type: "block_start", index: 0, block: { kind: "thinking" } },
      { type: "block_delta", index: 0, delta: { kind: "thinking", text: "The user wants a summary of the report" } },
      { type: "block_delta", index: 0, delta: { kind: "thinking", text: ", so I will start with the key figures" } },
      { type: "error", code: "incomplete_stream", message: "the Gemini stream ended without a finishReason" },
      { type: "block_abort", index: 0, reason: "stream ended before the block was complete" },
      { type: "usage", inputTokens: 950, outputTokens: 38, reasoningTokens: 38, totalTokens: 988 },
      { type: "status", status: "failed" }
    ])
  })

  it("closes the thinking block when text starts, and aborts the text a truncated stream left open", () => {
    expect(decode(fixture("truncated"))).toEqual([
      { type: "status", status: "started", model: "gemini-2.5-flash", responseId: "t6AaaXn2L3cW1dkPs9eE0Ao" },
      { type: "block_start", index: 0, block: { kind: "thinking" } },
      { type: "block_delta", index: 0, delta: { kind: "thinking", text: "Let me look" } },
      { type: "block_stop", index: 0 },
      { type: "block_start", index: 1, block: { kind: "text" } },
      { type: "block_delta", index: 1, delta: { kind: "text", text: "The forecast for Paris" } },
      { type: "error", code: "incomplete_stream", message: "the Gemini stream ended without a finishReason" },
      { type: "block_abort", index: 1, reason: "stream ended before the block was complete" },
      { type: "usage", inputTokens: 40, outputTokens: 13, reasoningTokens: 9, totalTokens: 53 },
      { type: "status", status: "failed" }
    ])
  })

  it("fails with the block reason when the prompt is blocked", () => {
    expect(decode(fixture("prompt-blocked"))).toEqual([
      { type: "status", status: "started", model: "gemini-2.5-flash", responseId: "b7AaaVk4R2dW1dkPxw3TqA8" },
      { type: "error", code: "prompt_blocked", message: "Gemini blocked the prompt (PROHIBITED_CONTENT)" },
      { type: "usage", inputTokens: 9, outputTokens: 0, totalTokens: 9 },
      { type: "status", status: "failed" }
    ])
  })

  it("keeps a signature on a plain text part as a signed, empty thinking block", () => {
    const decoder = createGeminiDecoder()
    const push = (parts: ReadonlyArray<object>, finishReason?: string) =>
      decoder.push({ event: "message", data: JSON.stringify({ candidates: [{ content: { parts, role: "model" }, finishReason }] }) })
    push([{ text: "Three." }])
    expect(push([{ text: "", thoughtSignature: "c2lnbmF0dXJl" }], "STOP")).toEqual([
      { type: "block_stop", index: 0 },
      { type: "block_start", index: 1, block: { kind: "thinking" } },
      { type: "block_stop", index: 1, reasoning: { provider: "gemini", thoughtSignature: "c2lnbmF0dXJl" } }
    ])
    expect(decoder.end()).toEqual([{ type: "status", status: "completed", stopReason: "end_turn" }])
  })

  it("signs the open thinking block with the signature of the part that follows it", () => {
    const decoder = createGeminiDecoder()
    const push = (parts: ReadonlyArray<object>) =>
      decoder.push({ event: "message", data: JSON.stringify({ candidates: [{ content: { parts, role: "model" } }] }) })
    push([{ text: "Weighing options", thought: true }])
    expect(push([{ text: "Answer", thoughtSignature: "c2ln" }])).toEqual([
      { type: "block_stop", index: 0, reasoning: { provider: "gemini", thoughtSignature: "c2ln" } },
      { type: "block_start", index: 1, block: { kind: "text" } },
      { type: "block_delta", index: 1, delta: { kind: "text", text: "Answer" } }
    ])
  })

  it("takes usage from a usage-only chunk after finishReason and maps MAX_TOKENS", () => {
    const decoder = createGeminiDecoder()
    const push = (body: object) => decoder.push({ event: "message", data: JSON.stringify(body) })
    push({ candidates: [{ content: { parts: [{ text: "Once upon" }] } }] })
    expect(push({ candidates: [{ content: { parts: [{ text: " a" }] }, finishReason: "MAX_TOKENS" }] })).toEqual([
      { type: "block_delta", index: 0, delta: { kind: "text", text: " a" } },
      { type: "block_stop", index: 0, stopReason: "max_tokens" }
    ])
    push({ usageMetadata: { promptTokenCount: 5, candidatesTokenCount: 3, totalTokenCount: 8 } })
    expect(withoutRawUsage(decoder.end())).toEqual([
      { type: "usage", inputTokens: 5, outputTokens: 3, totalTokens: 8 },
      { type: "status", status: "completed", stopReason: "max_tokens" }
    ])
  })

  it("rejects data that is not a JSON object", () => {
    expect(() => createGeminiDecoder().push({ event: "message", data: "[1,2]" })).toThrow(LlmProtocolError)
    expect(() => createGeminiDecoder().push({ event: "message", data: "{oops" })).toThrow(LlmProtocolError)
  })
})

describe("Gemini errors inside the stream", () => {
  it("reports an in-stream google.rpc.Status as an error event with its status name, closing open blocks", async () => {
    const { createGeminiDecoder } = await import("../../../src/llm/schemes/gemini-decoder.ts")
    const decoder = createGeminiDecoder({ newCallId: () => "llmw_gemini_1" })
    const text = { candidates: [{ content: { role: "model", parts: [{ text: "Hel" }] }, index: 0 }] }
    const first = decoder.push({ event: "message", data: JSON.stringify(text) })
    expect(first.map((e) => e.type)).toEqual(["status", "block_start", "block_delta"])
    const error = { error: { code: 503, message: "The model is overloaded. Please try again later.", status: "UNAVAILABLE" } }
    expect(decoder.push({ event: "message", data: JSON.stringify(error) })).toEqual([
      { type: "error", code: "UNAVAILABLE", message: "The model is overloaded. Please try again later.", raw: error.error },
      { type: "block_abort", index: 0, reason: "the provider reported an error" },
      { type: "status", status: "failed" }
    ])
    expect(decoder.end()).toEqual([])
  })
})
