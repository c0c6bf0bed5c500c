import { describe, expect, it } from "vitest"
import type { Event } from "../../src/llm/event.ts"
import { assistantItems, ResponseCollector } from "../../src/timeline/assistant-response.ts"
import { Timeline, TimelineMisuse } from "../../src/timeline/timeline.ts"

const collect = (events: ReadonlyArray<Event>, end: (t: Timeline) => void = (t) => t.finish()) => {
  const timeline = new Timeline()
  const response = new ResponseCollector(timeline)
  for (const event of events) timeline.dispatch(event)
  end(timeline)
  return response.result()
}

/**
 * The neutral events an Anthropic Messages stream with extended thinking and two parallel tool calls decodes to
 * (message_start usage, thinking with signature, text, two tool_use blocks, message_delta stop_reason + usage).
 */
const anthropicTurn: ReadonlyArray<Event> = [
  { type: "status", status: "started" },
  { type: "usage", inputTokens: 472, outputTokens: 3, cacheReadTokens: 2048, cacheWriteTokens: 0 },
  { type: "block_start", index: 0, block: { kind: "thinking" } },
  { type: "block_delta", index: 0, delta: { kind: "thinking", text: "I should check both cities." } },
  { type: "block_stop", index: 0, reasoning: { provider: "anthropic", signature: "EqQBCgIYAhIM" } },
  { type: "block_start", index: 1, block: { kind: "text" } },
  { type: "block_delta", index: 1, delta: { kind: "text", text: "Let me look " } },
  { type: "block_delta", index: 1, delta: { kind: "text", text: "that up." } },
  { type: "block_stop", index: 1 },
  { type: "block_start", index: 2, block: { kind: "tool_use", id: "toolu_01A", name: "get_weather" } },
  { type: "block_delta", index: 2, delta: { kind: "input_json", json: "" } },
  { type: "block_delta", index: 2, delta: { kind: "input_json", json: '{"city": "Paris"}' } },
  { type: "block_stop", index: 2 },
  { type: "block_start", index: 3, block: { kind: "tool_use", id: "toolu_01B", name: "get_weather" } },
  { type: "block_delta", index: 3, delta: { kind: "input_json", json: '{"city": "Oslo"}' } },
  { type: "block_stop", index: 3 },
  { type: "usage", outputTokens: 89 },
  { type: "status", status: "completed", stopReason: "tool_use" }
]

describe("ResponseCollector", () => {
  it("turns a finished response into reasoning, message and function-call items in model order", () => {
    const result = collect(anthropicTurn)
    expect(result).toEqual({
      state: "finished",
      items: [
        { type: "reasoning", text: "I should check both cities.", data: { provider: "anthropic", signature: "EqQBCgIYAhIM" } },
        { type: "message", role: "assistant", content: [{ type: "output_text", text: "Let me look that up." }] },
        { type: "function_call", callId: "toolu_01A", name: "get_weather", arguments: '{"city": "Paris"}' },
        { type: "function_call", callId: "toolu_01B", name: "get_weather", arguments: '{"city": "Oslo"}' }
      ],
      stopReason: "tool_use",
      usage: { inputTokens: 472, outputTokens: 89, cacheReadTokens: 2048, cacheWriteTokens: 0 },
      abortedToolCalls: [],
      citations: [],
      issues: []
    })
  })

  it("names the model that answered and the response id when the started status states them", () => {
    const [, ...rest] = anthropicTurn
    const result = collect([{ type: "status", status: "started", model: "claude-sonnet-4-5-20250929", responseId: "msg_01XyZ" }, ...rest])
    expect([result.model, result.responseId]).toEqual(["claude-sonnet-4-5-20250929", "msg_01XyZ"])
    // Keys kept (undefined) when the provider stated neither: one shape for every response (decision 0085).
    const plain = collect(anthropicTurn)
    expect(["model" in plain, plain.model, plain.responseId]).toEqual([true, undefined, undefined])
  })

  it("takes the stop reason from the last block stop when the status gives none", () => {
    const result = collect([
      { type: "block_start", index: 0, block: { kind: "text" } },
      { type: "block_delta", index: 0, delta: { kind: "text", text: "Hi" } },
      { type: "block_stop", index: 0, stopReason: "max_tokens" },
      { type: "block_start", index: 1, block: { kind: "text" } },
      { type: "block_stop", index: 1 },
      { type: "status", status: "completed" }
    ])
    expect(result.stopReason).toBe("max_tokens")
  })

  it("prefers the completed status over block stops, and has no reason when nobody gave one", () => {
    expect(
      collect([
        { type: "block_start", index: 0, block: { kind: "text" } },
        { type: "block_stop", index: 0, stopReason: "end_turn" },
        { type: "status", status: "completed", stopReason: "stop_sequence" }
      ]).stopReason
    ).toBe("stop_sequence")
    expect(collect([{ type: "status", status: "completed" }]).stopReason).toBeUndefined()
  })

  it("reports an interrupted tool call instead of committing it", () => {
    const result = collect(
      [
        { type: "block_start", index: 0, block: { kind: "text" } },
        { type: "block_delta", index: 0, delta: { kind: "text", text: "Checking." } },
        { type: "block_stop", index: 0 },
        { type: "block_start", index: 1, block: { kind: "tool_use", id: "call_1", name: "search" } },
        { type: "block_delta", index: 1, delta: { kind: "input_json", json: '{"q": "ty' } }
      ],
      (t) => t.abort("Cancelled")
    )
    expect(result.state).toBe("aborted")
    expect(result.items).toEqual([
      { type: "message", role: "assistant", content: [{ type: "output_text", text: "Checking." }] }
    ])
    expect(result.abortedToolCalls).toEqual([
      { index: 1, ordinal: 1, callId: "call_1", name: "search", reason: "Cancelled", partialArguments: '{"q": "ty' }
    ])
  })

  it("refuses to assemble a response while its timeline is open", () => {
    const timeline = new Timeline()
    const response = new ResponseCollector(timeline)
    expect(() => response.result()).toThrow(TimelineMisuse)
    timeline.finish()
    expect(response.result().items).toEqual([])
  })

  it("a new timeline per response starts clean after an aborted one", () => {
    const first = collect(
      [
        { type: "block_start", index: 0, block: { kind: "tool_use", id: "stale", name: "x" } },
        { type: "block_delta", index: 0, delta: { kind: "input_json", json: "{}" } }
      ],
      (t) => t.abort("Cancelled")
    )
    expect(first.items).toEqual([])
    const second = collect([
      { type: "block_start", index: 0, block: { kind: "text" } },
      { type: "block_delta", index: 0, delta: { kind: "text", text: "fresh" } },
      { type: "block_stop", index: 0 }
    ])
    expect(second.items).toEqual([
      { type: "message", role: "assistant", content: [{ type: "output_text", text: "fresh" }] }
    ])
    expect(second.abortedToolCalls).toEqual([])
  })
})

describe("assistantItems", () => {
  it("groups consecutive text blocks into one message and splits at other items", () => {
    const items = assistantItems({
      text: [
        { index: 0, ordinal: 0, text: "a" },
        { index: 1, ordinal: 1, text: "b" },
        { index: 3, ordinal: 3, text: "c" }
      ],
      reasoning: [{ index: 4, ordinal: 4, item: { type: "reasoning", text: "think" } }],
      toolCalls: [{ index: 2, ordinal: 2, call: { type: "function_call", callId: "c1", name: "f", arguments: "{}" } }]
    })
    expect(items).toEqual([
      {
        type: "message",
        role: "assistant",
        content: [
          { type: "output_text", text: "a" },
          { type: "output_text", text: "b" }
        ]
      },
      { type: "function_call", callId: "c1", name: "f", arguments: "{}" },
      { type: "message", role: "assistant", content: [{ type: "output_text", text: "c" }] },
      { type: "reasoning", text: "think" }
    ])
  })

  it("leaves out empty text blocks and reasoning with neither text nor data", () => {
    const items = assistantItems({
      text: [
        { index: 0, ordinal: 0, text: "" },
        { index: 2, ordinal: 2, text: "" }
      ],
      reasoning: [
        { index: 1, ordinal: 1, item: { type: "reasoning", text: "" } },
        { index: 3, ordinal: 3, item: { type: "reasoning", text: "", data: { provider: "gemini", thoughtSignature: "s" } } }
      ],
      toolCalls: []
    })
    expect(items).toEqual([{ type: "reasoning", text: "", data: { provider: "gemini", thoughtSignature: "s" } }])
  })
})
