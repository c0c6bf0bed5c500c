import { readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import type { Event } from "../../../src/llm/event.ts"
import { LlmProtocolError } from "../../../src/llm/llm-error.ts"
import { createAnthropicDecoder } from "../../../src/llm/schemes/anthropic-decoder.ts"
import { parseSseText } from "../../../src/llm/sse.ts"
import { withoutRawUsage } from "./without-raw-usage.ts"

const fixture = (name: string): string =>
  readFileSync(new URL(`../../fixtures/sse/anthropic/${name}.sse`, import.meta.url), "utf8")

const decode = (text: string): Array<Event> => {
  const decoder = createAnthropicDecoder()
  return withoutRawUsage([...parseSseText(text).flatMap((message) => decoder.push(message)), ...decoder.end()])
}

describe("Anthropic stream decoder", () => {
  it("decodes a text response", () => {
    expect(decode(fixture("text"))).toEqual([
      { type: "status", status: "started", model: "claude-sonnet-4-5-20250929", responseId: "msg_01XFDUDYJgAACzvnptvVoYEL" },
      { type: "block_start", index: 0, block: { kind: "text" } },
      { type: "ping" },
      { type: "block_delta", index: 0, delta: { kind: "text", text: "Hello" } },
      { type: "block_delta", index: 0, delta: { kind: "text", text: "! How can I help" } },
      { type: "block_delta", index: 0, delta: { kind: "text", text: " you today?" } },
      { type: "block_stop", index: 0 },
      { type: "usage", inputTokens: 12, outputTokens: 12, totalTokens: 24, cacheReadTokens: 0, cacheWriteTokens: 0 },
      { type: "status", status: "completed", stopReason: "end_turn" }
    ])
  })

  it("keeps two parallel tool calls in separate blocks", () => {
    expect(decode(fixture("parallel-tool-calls"))).toEqual([
      { type: "status", status: "started", model: "claude-sonnet-4-5-20250929", responseId: "msg_014p7gG3wDgGV9EUtLvnow3U" },
      { type: "block_start", index: 0, block: { kind: "text" } },
      { type: "block_delta", index: 0, delta: { kind: "text", text: "I'll check the weather in both cities." } },
      { type: "block_stop", index: 0 },
      { type: "block_start", index: 1, block: { kind: "tool_use", id: "toolu_01T1x1fJ34qAmk2tNTrN7Up6", name: "get_weather" } },
      { type: "block_delta", index: 1, delta: { kind: "input_json", json: '{"location": ' } },
      { type: "block_delta", index: 1, delta: { kind: "input_json", json: '"Paris"}' } },
      { type: "block_stop", index: 1 },
      { type: "block_start", index: 2, block: { kind: "tool_use", id: "toolu_01Q8dkDGbhVxSFaFUo2kEzLT", name: "get_weather" } },
      { type: "block_delta", index: 2, delta: { kind: "input_json", json: '{"locat' } },
      { type: "block_delta", index: 2, delta: { kind: "input_json", json: 'ion": "Tokyo"}' } },
      { type: "block_stop", index: 2 },
      { type: "usage", inputTokens: 640, outputTokens: 112, totalTokens: 752, cacheReadTokens: 0, cacheWriteTokens: 0 },
      { type: "status", status: "completed", stopReason: "tool_use" }
    ])
  })

  it("closes a thinking block with its signature, then a tool call", () => {
    expect(decode(fixture("thinking-tool-call"))).toEqual([
      { type: "status", status: "started", model: "claude-sonnet-4-5-20250929", responseId: "msg_01Aq9w938a90dw8q5q4hSDMm" },
      { type: "block_start", index: 0, block: { kind: "thinking" } },
      { type: "block_delta", index: 0, delta: { kind: "thinking", text: "The user wants the time in Berlin." } },
      { type: "block_delta", index: 0, delta: { kind: "thinking", text: " I should call get_time." } },
      {
        type: "block_stop",
        index: 0,
        reasoning: {
          provider: "anthropic",
          signature: "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds6Gj8kGvJ2Z8c3pVHcBJZFyaFSSxMdIGnthpRKzIZc1DY9yvMDCMa6xcEA=="
        }
      },
      { type: "block_start", index: 1, block: { kind: "tool_use", id: "toolu_01NRLabsLyVHZPKxbKvkfSMn", name: "get_time" } },
      { type: "block_delta", index: 1, delta: { kind: "input_json", json: '{"timezone": "Europe/Berlin"}' } },
      { type: "block_stop", index: 1 },
      { type: "usage", inputTokens: 512, outputTokens: 87, totalTokens: 599, cacheReadTokens: 0, cacheWriteTokens: 0 },
      { type: "status", status: "completed", stopReason: "tool_use" }
    ])
  })

  it("reports cache reads and writes, counting them into the prompt total", () => {
    const usage = decode(fixture("cached-usage")).filter((event) => event.type === "usage")
    expect(usage).toEqual([
      { type: "usage", inputTokens: 21 + 188 + 2048, outputTokens: 6, totalTokens: 2263, cacheReadTokens: 2048, cacheWriteTokens: 188 }
    ])
  })

  it("turns an overloaded_error event into an error, aborts the open block and fails", () => {
    expect(decode(fixture("error-mid-stream"))).toEqual([
      { type: "status", status: "started", model: "claude-sonnet-4-5-20250929", responseId: "msg_01ErrMidStream000000000" },
      { type: "block_start", index: 0, block: { kind: "text" } },
      { type: "ping" },
      { type: "block_delta", index: 0, delta: { kind: "text", text: "Let me think about" } },
      { type: "error", code: "overloaded_error", message: "Overloaded", raw: { type: "overloaded_error", message: "Overloaded" } },
      { type: "block_abort", index: 0, reason: "Overloaded" },
      { type: "usage", inputTokens: 30, outputTokens: 1, totalTokens: 31, cacheReadTokens: 0, cacheWriteTokens: 0 },
      { type: "status", status: "failed" }
    ])
  })

  it("aborts the tool call a truncated stream left open", () => {
    const events = decode(fixture("truncated"))
    expect(events.slice(-5)).toEqual([
      { type: "block_delta", index: 1, delta: { kind: "input_json", json: '{"location": "San' } },
      { type: "error", code: "incomplete_stream", message: "the Anthropic stream ended before message_stop" },
      { type: "block_abort", index: 1, reason: "stream ended before the block was complete" },
      { type: "usage", inputTokens: 200, outputTokens: 2, totalTokens: 202, cacheReadTokens: 0, cacheWriteTokens: 0 },
      { type: "status", status: "failed" }
    ])
    expect(events.filter((event) => event.type === "block_stop")).toEqual([{ type: "block_stop", index: 0 }])
  })

  it("refuses a second message_start with another id: no merged message, the open tool call aborted, never stopped", () => {
    const decoder = createAnthropicDecoder()
    const events: Array<Event> = []
    let thrown: unknown
    for (const message of parseSseText(fixture("spliced-message-start"))) {
      try {
        events.push(...decoder.push(message))
      } catch (error) {
        thrown = error
        break
      }
    }
    expect(thrown).toBeInstanceOf(LlmProtocolError)
    expect((thrown as LlmProtocolError).message).toBe(
      'Anthropic stream: a second message_start ("msg_01SpliceSecond2Mx6Jp0Ye8" after "msg_01SpliceFirst7Hq2Lw9Zr4Tn") inside one response'
    )
    // What the transport does on a thrown decoder: end() closes what is open.
    events.push(...decoder.end())
    expect(events.filter((event) => event.type === "block_start").map((event) => event.index)).toEqual([0, 1])
    expect(events.filter((event) => event.type === "block_stop")).toEqual([
      { type: "block_stop", index: 0, reasoning: { provider: "anthropic", signature: "c2lnbmF0dXJlLW9mLXRoZS1maXJzdC1tZXNzYWdl" } }
    ])
    expect(events).toContainEqual({ type: "block_abort", index: 1, reason: "stream ended before the block was complete" })
    expect(JSON.stringify(events)).not.toContain("A date is asked for")
  })

  it("ignores a repeated message_start for the same message before any content", () => {
    expect(decode(fixture("duplicate-message-start"))).toEqual([
      { type: "status", status: "started", model: "claude-haiku-4-5-20251001", responseId: "msg_01RepeatStart5Gk3Vn8Hs" },
      { type: "block_start", index: 0, block: { kind: "text" } },
      { type: "block_delta", index: 0, delta: { kind: "text", text: "Good morning" } },
      { type: "block_delta", index: 0, delta: { kind: "text", text: " to you too." } },
      { type: "block_stop", index: 0 },
      { type: "usage", inputTokens: 21, outputTokens: 9, totalTokens: 30, cacheReadTokens: 0, cacheWriteTokens: 0 },
      { type: "status", status: "completed", stopReason: "end_turn" }
    ])
  })

  it("refuses the same message started again once its content began (a replay would repeat the content)", () => {
    const decoder = createAnthropicDecoder()
    const push = (data: object) => decoder.push({ event: "x", data: JSON.stringify(data) })
    push({ type: "message_start", message: { id: "msg_a" } })
    push({ type: "content_block_start", index: 0, content_block: { type: "text", text: "" } })
    expect(() => push({ type: "message_start", message: { id: "msg_a" } })).toThrow(
      'Anthropic stream: a second message_start ("msg_a", after content) inside one response'
    )
  })

  it("quotes the ids of a refused second message_start bounded", () => {
    const decoder = createAnthropicDecoder()
    const push = (data: object) => decoder.push({ event: "x", data: JSON.stringify(data) })
    push({ type: "message_start", message: {} })
    let message = ""
    try {
      push({ type: "message_start", message: { id: "m".repeat(100_000) } })
    } catch (error) {
      message = (error as Error).message
    }
    expect(message).toContain("after one without an id")
    expect(message.length).toBeLessThan(300)
  })

  it("sends a tool's start input when no input_json_delta carries text", () => {
    const decoder = createAnthropicDecoder()
    const push = (data: object) => decoder.push({ event: "x", data: JSON.stringify(data) })
    push({ type: "message_start", message: { usage: { input_tokens: 1, output_tokens: 1 } } })
    push({ type: "content_block_start", index: 0, content_block: { type: "tool_use", id: "toolu_1", name: "now", input: {} } })
    expect(push({ type: "content_block_stop", index: 0 })).toEqual([
      { type: "block_delta", index: 0, delta: { kind: "input_json", json: "{}" } },
      { type: "block_stop", index: 0 }
    ])
  })

  it("carries redacted thinking data on the block stop", () => {
    const decoder = createAnthropicDecoder()
    const push = (data: object) => decoder.push({ event: "x", data: JSON.stringify(data) })
    push({ type: "message_start", message: {} })
    expect(push({ type: "content_block_start", index: 0, content_block: { type: "redacted_thinking", data: "EmwKAhgBEgy3va3pzix" } })).toEqual([
      { type: "block_start", index: 0, block: { kind: "thinking" } }
    ])
    expect(push({ type: "content_block_stop", index: 0 })).toEqual([
      { type: "block_stop", index: 0, reasoning: { provider: "anthropic", redacted: "EmwKAhgBEgy3va3pzix" } }
    ])
  })

  it("claims no reasoning data for a thinking block that never got a signature", () => {
    const decoder = createAnthropicDecoder()
    const push = (data: object) => decoder.push({ event: "x", data: JSON.stringify(data) })
    push({ type: "message_start", message: {} })
    push({ type: "content_block_start", index: 0, content_block: { type: "thinking", thinking: "", signature: "" } })
    expect(push({ type: "content_block_stop", index: 0 })).toEqual([{ type: "block_stop", index: 0 }])
  })

  it("keeps blocks it does not model as provider items, in the same index sequence (decision 0025)", () => {
    const decoder = createAnthropicDecoder()
    const push = (data: object) => decoder.push({ event: "x", data: JSON.stringify(data) })
    push({ type: "message_start", message: {} })
    expect(push({ type: "content_block_start", index: 0, content_block: { type: "server_tool_use", id: "srvtoolu_1", name: "web_search", input: {} } })).toEqual([])
    expect(push({ type: "content_block_delta", index: 0, delta: { type: "input_json_delta", partial_json: "{}" } })).toEqual([])
    expect(push({ type: "content_block_stop", index: 0 })).toEqual([
      {
        type: "provider_output",
        index: 0,
        item: {
          type: "provider_item",
          scheme: "anthropic",
          kind: "server_tool_use",
          json: '{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{}}'
        }
      }
    ])
    expect(push({ type: "content_block_start", index: 1, content_block: { type: "text", text: "" } })).toEqual([
      { type: "block_start", index: 1, block: { kind: "text" } }
    ])
  })

  it("rejects data that is not JSON and deltas for blocks never opened", () => {
    expect(() => createAnthropicDecoder().push({ event: "message_start", data: "{not json" })).toThrow(LlmProtocolError)
    const decoder = createAnthropicDecoder()
    expect(() =>
      decoder.push({ event: "x", data: JSON.stringify({ type: "content_block_delta", index: 3, delta: { type: "text_delta", text: "a" } }) })
    ).toThrow(LlmProtocolError)
  })

  it("reports nothing more after the response completed", () => {
    const decoder = createAnthropicDecoder()
    for (const message of parseSseText(fixture("text"))) decoder.push(message)
    expect(decoder.end()).toEqual([])
  })
})
