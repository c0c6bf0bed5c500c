import { readFileSync } from "node:fs"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import type { Event } from "../../../src/llm/event.ts"
import type { Request } from "../../../src/llm/request.ts"
import { createSseParser, parseSseText } from "../../../src/llm/sse.ts"
import type { Item } from "../../../src/llm/item.ts"
import { openAiResponsesScheme } from "../../../src/llm/schemes/openai-responses.ts"
import { withoutRawUsage } from "./without-raw-usage.ts"

const fixture = (name: string) =>
  readFileSync(new URL(`../../fixtures/sse/openai-responses/${name}.sse`, import.meta.url), "utf8")

const request: Request = {
  model: "gpt-4.1-mini",
  items: [],
  tools: [
    { name: "files.read", description: "Read a file.", inputSchema: { type: "object", properties: {} } },
    { name: "get_weather", description: "Weather.", inputSchema: { type: "object", properties: {} } },
    { name: "multiply", description: "Multiply.", inputSchema: { type: "object", properties: {} } }
  ],
  config: {}
}

const decode = (name: string): Array<Event> => {
  const decoder = openAiResponsesScheme.decoder(request)
  return withoutRawUsage([...parseSseText(fixture(name)).flatMap((message) => decoder.push(message)), ...decoder.end()])
}

const text = (index: number, value: string): Event => ({ type: "block_delta", index, delta: { kind: "text", text: value } })
const thinking = (index: number, value: string): Event => ({ type: "block_delta", index, delta: { kind: "thinking", text: value } })
const json = (index: number, value: string): Event => ({ type: "block_delta", index, delta: { kind: "input_json", json: value } })
const started: Event = { type: "status", status: "started" }

describe("OpenAI Responses decoder on recorded-style streams", () => {
  it("text: a message item is one text block; usage and completion come from response.completed", () => {
    expect(decode("text")).toEqual([
      { ...started, model: "gpt-4.1-mini-2025-04-14", responseId: "resp_68c1f0a2b3d4e5f60718293a4b5c6d7e" },
      { type: "block_start", index: 0, block: { kind: "text" } },
      ...["Hello", "!", " How", " can", " I", " help", "?"].map((piece) => text(0, piece)),
      { type: "block_stop", index: 0, stopReason: "end_turn", final: "Hello! How can I help?" },
      { type: "usage", inputTokens: 19, outputTokens: 8, reasoningTokens: 0, totalTokens: 27, cacheReadTokens: 0 },
      { type: "status", status: "completed", stopReason: "end_turn" }
    ])
  })

  it("usage-cached: input_tokens_details.cached_tokens becomes cacheReadTokens", () => {
    expect(decode("usage-cached").filter((event) => event.type === "usage")).toEqual([
      { type: "usage", inputTokens: 2113, outputTokens: 6, reasoningTokens: 0, totalTokens: 2119, cacheReadTokens: 1920 }
    ])
  })

  it("parallel-tool-calls: one block per function_call item, with its call_id and the neutral name", () => {
    expect(decode("parallel-tool-calls")).toEqual([
      { ...started, model: "gpt-4.1-mini-2025-04-14", responseId: "resp_68c1f2c3d4e5f6a7b8c9d0e1f2a3b4c5" },
      { type: "block_start", index: 0, block: { kind: "tool_use", id: "call_Wq3nE8rT1yU6iO0pA2sD4fG7", name: "get_weather" } },
      ...['{"ci', 'ty":"', "Paris", '","un', 'it":"c', '"}'].map((piece) => json(0, piece)),
      { type: "block_stop", index: 0, stopReason: "tool_use", final: '{"city":"Paris","unit":"c"}' },
      { type: "block_start", index: 1, block: { kind: "tool_use", id: "call_Rf5tG9hY2uJ7kI3oL8pZ1xC4", name: "files.read" } },
      ...['{"pa', 'th":"', "notes", '.txt"}'].map((piece) => json(1, piece)),
      { type: "block_stop", index: 1, stopReason: "tool_use", final: '{"path":"notes.txt"}' },
      { type: "usage", inputTokens: 142, outputTokens: 58, reasoningTokens: 0, totalTokens: 200, cacheReadTokens: 0 },
      { type: "status", status: "completed", stopReason: "tool_use" }
    ])
  })

  it("reasoning-tool-call: summary text streams as thinking; the stop carries id and the final encrypted content", () => {
    const events = decode("reasoning-tool-call")
    const encrypted = /"encrypted_content":"([^"]+)","summary":\[\{/.exec(fixture("reasoning-tool-call"))?.[1]
    expect(encrypted).toMatch(/==$/) // the complete value from output_item.done, not the partial one from added
    expect(events).toEqual([
      { ...started, model: "o4-mini-2025-04-16", responseId: "resp_68c1f3d4e5f6a7b8c9d0e1f2a3b4c5d6" },
      { type: "block_start", index: 0, block: { kind: "thinking" } },
      ...["**Multiplying", " numbers**\n\n", "The user", " asks for 17 × 23", "."].map((piece) => thinking(0, piece)),
      thinking(0, "\n\n"),
      ...["**Checking", " with the tool**\n\n", "I'll call multiply", "."].map((piece) => thinking(0, piece)),
      {
        type: "block_stop",
        index: 0,
        reasoning: { provider: "openai", id: "rs_68c1f3d5f6a7b8c9d0e1f2a3b4c5d6e7", encryptedContent: encrypted },
        final: "**Multiplying numbers**\n\nThe user asks for 17 × 23.\n\n**Checking with the tool**\n\nI'll call multiply."
      },
      { type: "block_start", index: 1, block: { kind: "tool_use", id: "call_Mx1cV2bN3mQ4wE5rT6yU7iO8", name: "multiply" } },
      ...['{"a":', '17,"b"', ":23}"].map((piece) => json(1, piece)),
      { type: "block_stop", index: 1, stopReason: "tool_use", final: '{"a":17,"b":23}' },
      { type: "usage", inputTokens: 87, outputTokens: 212, reasoningTokens: 192, totalTokens: 299, cacheReadTokens: 0 },
      { type: "status", status: "completed", stopReason: "tool_use" }
    ])
  })

  it("error-mid-stream: an error event aborts the open block and fails the response", () => {
    const message = "The server had an error processing your request. Sorry about that! You can retry your request."
    expect(decode("error-mid-stream")).toEqual([
      { ...started, model: "gpt-4.1-mini-2025-04-14", responseId: "resp_68c1f4e5f6a7b8c9d0e1f2a3b4c5d6e7" },
      { type: "block_start", index: 0, block: { kind: "text" } },
      text(0, "Let"),
      text(0, " me"),
      text(0, " think"),
      { type: "block_abort", index: 0, reason: message },
      { type: "error", code: "server_error", message, raw: { type: "error", code: "server_error", message, param: null, sequence_number: 7 } },
      { type: "status", status: "failed" }
    ])
  })

  it("failed: response.failed reports the response's error", () => {
    expect(decode("failed")).toEqual([
      { ...started, model: "gpt-4.1-mini-2025-04-14", responseId: "resp_68c1f7b8c9d0e1f2a3b4c5d6e7f8a9b0" },
      { type: "error", code: "server_error", message: "The model failed to generate a response.", raw: { code: "server_error", message: "The model failed to generate a response." } },
      { type: "status", status: "failed" }
    ])
  })

  it("incomplete: response.incomplete completes with max_tokens", () => {
    expect(decode("incomplete").slice(-4)).toEqual([
      text(0, ","),
      { type: "block_stop", index: 0, final: "Once upon a time," },
      { type: "usage", inputTokens: 12, outputTokens: 16, reasoningTokens: 0, totalTokens: 28, cacheReadTokens: 0 },
      { type: "status", status: "completed", stopReason: "max_tokens" }
    ])
  })

  it("truncated: the finished text block stays closed, the open tool call is aborted, never left open", () => {
    const reason = "the stream ended before the response finished"
    expect(decode("truncated")).toEqual([
      { ...started, model: "gpt-4.1-mini-2025-04-14", responseId: "resp_68c1f5f6a7b8c9d0e1f2a3b4c5d6e7f8" },
      { type: "block_start", index: 0, block: { kind: "text" } },
      text(0, "Checking"),
      text(0, "."),
      { type: "block_stop", index: 0, stopReason: "end_turn", final: "Checking." },
      { type: "block_start", index: 1, block: { kind: "tool_use", id: "call_Tz6yX5wV4uT3sR2qP1oN0mL9", name: "get_weather" } },
      json(1, '{"ci'),
      json(1, 'ty":"Par'),
      { type: "block_abort", index: 1, reason },
      { type: "error", code: "incomplete_stream", message: reason },
      { type: "status", status: "failed" }
    ])
  })

  it("a server that sends only the done events still delivers the whole arguments and summary", () => {
    const decoder = openAiResponsesScheme.decoder()
    const push = (payload: object) => decoder.push({ event: "", data: JSON.stringify(payload) })
    const events = [
      ...push({ type: "response.created", response: { id: "resp_1", status: "in_progress" } }),
      ...push({
        type: "response.output_item.done",
        output_index: 0,
        item: { type: "reasoning", id: "rs_1", summary: [{ type: "summary_text", text: "Plan." }] }
      }),
      ...push({ type: "response.output_item.added", output_index: 1, item: { type: "function_call", id: "fc_1", call_id: "c1", name: "f", arguments: "" } }),
      ...push({ type: "response.function_call_arguments.done", output_index: 1, item_id: "fc_1", arguments: '{"x":1}' }),
      ...push({ type: "response.output_item.done", output_index: 1, item: { type: "function_call", id: "fc_1", call_id: "c1", name: "f", arguments: '{"x":1}' } }),
      ...push({ type: "response.completed", response: { id: "resp_1", status: "completed" } }),
      ...decoder.end()
    ]
    expect(events).toEqual([
      { ...started, responseId: "resp_1" },
      { type: "block_start", index: 0, block: { kind: "thinking" } },
      thinking(0, "Plan."),
      { type: "block_stop", index: 0, reasoning: { provider: "openai", id: "rs_1" }, final: "Plan." },
      { type: "block_start", index: 1, block: { kind: "tool_use", id: "c1", name: "f" } },
      json(1, '{"x":1}'),
      { type: "block_stop", index: 1, stopReason: "tool_use", final: '{"x":1}' },
      { type: "status", status: "completed", stopReason: "tool_use" }
    ])
  })

  it("reasoning decoded from a stream goes back unchanged in the next request", () => {
    // The smallest collector a worker would have: thinking text + stop data → a reasoning item.
    const events = decode("reasoning-tool-call")
    let summary = ""
    const items: Array<Item> = []
    for (const event of events) {
      if (event.type === "block_delta" && event.delta.kind === "thinking") summary += event.delta.text
      if (event.type === "block_stop" && event.reasoning !== undefined) items.push({ type: "reasoning", text: summary, data: event.reasoning })
    }
    const body = JSON.parse(openAiResponsesScheme.encodeRequest({ ...request, items, config: { reasoning: { effort: "medium" } } })) as {
      input: ReadonlyArray<unknown>
    }
    const done = parseSseText(fixture("reasoning-tool-call"))
      .map((message) => JSON.parse(message.data) as { type: string; item?: { type: string } })
      .find((event) => event.type === "response.output_item.done" && event.item?.type === "reasoning")
    const { id, encrypted_content, summary: parts } = done?.item as unknown as { id: string; encrypted_content: string; summary: Array<{ text: string }> }
    expect(body.input).toEqual([
      { type: "reasoning", id, summary: [{ type: "summary_text", text: parts.map((p) => p.text).join("\n\n") }], encrypted_content }
    ])
  })

  it.each(["text", "usage-cached", "parallel-tool-calls", "reasoning-tool-call", "error-mid-stream", "failed", "incomplete", "truncated"])(
    "%s decodes the same however the bytes are split into chunks",
    (name) => {
      const whole = fixture(name)
      const expected = decode(name)
      fc.assert(
        fc.property(fc.uniqueArray(fc.integer({ min: 1, max: whole.length - 1 }), { maxLength: 12 }), (cuts) => {
          const parser = createSseParser()
          const decoder = openAiResponsesScheme.decoder(request)
          const bounds = [0, ...cuts.sort((a, b) => a - b), whole.length]
          const events: Array<Event> = []
          for (let i = 1; i < bounds.length; i++) {
            for (const message of parser.feed(whole.slice(bounds[i - 1], bounds[i]))) events.push(...decoder.push(message))
          }
          events.push(...decoder.end())
          expect(withoutRawUsage(events)).toEqual(expected)
        }),
        { numRuns: 30 }
      )
    }
  )
})
