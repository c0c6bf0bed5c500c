import { describe, expect, it } from "vitest"
import type { Event } from "../../src/llm/event.ts"
import { ReasoningCollector } from "../../src/timeline/reasoning-collector.ts"
import { TextCollector } from "../../src/timeline/text-collector.ts"
import { Timeline } from "../../src/timeline/timeline.ts"
import { ToolCallCollector } from "../../src/timeline/tool-call-collector.ts"
import { UsageCollector } from "../../src/timeline/usage-collector.ts"

const feed = (timeline: Timeline, events: ReadonlyArray<Event>): void => {
  for (const event of events) timeline.dispatch(event)
}

describe("TextCollector", () => {
  it("collects the whole text of each stopped block in start order and joins them", () => {
    const timeline = new Timeline()
    const collector = new TextCollector(timeline)
    feed(timeline, [
      { type: "block_start", index: 0, block: { kind: "text" } },
      { type: "block_start", index: 1, block: { kind: "text" } },
      { type: "block_delta", index: 1, delta: { kind: "text", text: "world" } },
      { type: "block_delta", index: 0, delta: { kind: "text", text: "Hello, " } },
      { type: "block_stop", index: 1 },
      { type: "block_stop", index: 0 }
    ])
    timeline.finish()
    expect(collector.blocks).toEqual([
      { index: 0, ordinal: 0, text: "Hello, " },
      { index: 1, ordinal: 1, text: "world" }
    ])
    expect(collector.text).toBe("Hello, world")
  })

  it("keeps an aborted block's partial text apart from the committed text", () => {
    const timeline = new Timeline()
    const collector = new TextCollector(timeline)
    feed(timeline, [
      { type: "block_start", index: 0, block: { kind: "text" } },
      { type: "block_delta", index: 0, delta: { kind: "text", text: "done" } },
      { type: "block_stop", index: 0 },
      { type: "block_start", index: 1, block: { kind: "text" } },
      { type: "block_delta", index: 1, delta: { kind: "text", text: "half a sen" } }
    ])
    timeline.abort("Cancelled")
    expect(collector.text).toBe("done")
    expect(collector.aborted).toEqual([{ index: 1, ordinal: 1, reason: "Cancelled", partialText: "half a sen" }])
  })

  it("reassembles a large text from many small deltas", () => {
    const timeline = new Timeline()
    const collector = new TextCollector(timeline)
    timeline.dispatch({ type: "block_start", index: 0, block: { kind: "text" } })
    const pieces = Array.from({ length: 20_000 }, (_, i) => `${i},`)
    for (const piece of pieces) timeline.dispatch({ type: "block_delta", index: 0, delta: { kind: "text", text: piece } })
    timeline.dispatch({ type: "block_stop", index: 0 })
    expect(collector.text).toBe(pieces.join(""))
  })
})

describe("ReasoningCollector", () => {
  it("pairs each thinking block's text with the reasoning data from its stop", () => {
    const timeline = new Timeline()
    const collector = new ReasoningCollector(timeline)
    feed(timeline, [
      { type: "block_start", index: 0, block: { kind: "thinking" } },
      { type: "block_delta", index: 0, delta: { kind: "thinking", text: "The user wants " } },
      { type: "block_delta", index: 0, delta: { kind: "thinking", text: "the weather." } },
      { type: "block_stop", index: 0, reasoning: { provider: "anthropic", signature: "EqQBCgIYAhIM1gbcDa9GJwZA2b3h" } },
      { type: "block_start", index: 1, block: { kind: "thinking" } },
      { type: "block_stop", index: 1, reasoning: { provider: "anthropic", redacted: "EmwKAhgBEgy3va3pzix" } },
      { type: "block_start", index: 2, block: { kind: "thinking" } },
      { type: "block_delta", index: 2, delta: { kind: "thinking", text: "summary only" } },
      { type: "block_stop", index: 2 }
    ])
    timeline.finish()
    expect(collector.items).toEqual([
      {
        type: "reasoning",
        text: "The user wants the weather.",
        data: { provider: "anthropic", signature: "EqQBCgIYAhIM1gbcDa9GJwZA2b3h" }
      },
      { type: "reasoning", text: "", data: { provider: "anthropic", redacted: "EmwKAhgBEgy3va3pzix" } },
      { type: "reasoning", text: "summary only" }
    ])
    expect("data" in collector.items[2]!).toBe(false)
  })

  it("drops an aborted thinking block and reports it", () => {
    const timeline = new Timeline()
    const collector = new ReasoningCollector(timeline)
    feed(timeline, [
      { type: "block_start", index: 0, block: { kind: "thinking" } },
      { type: "block_delta", index: 0, delta: { kind: "thinking", text: "Let me" } }
    ])
    timeline.finish()
    expect(collector.items).toEqual([])
    expect(collector.aborted).toHaveLength(1)
    expect(collector.aborted[0]).toMatchObject({ index: 0, ordinal: 0 })
  })
})

describe("ToolCallCollector", () => {
  it("assembles parallel calls from interleaved fragments, in model order", () => {
    const timeline = new Timeline()
    const collector = new ToolCallCollector(timeline)
    feed(timeline, [
      { type: "block_start", index: 0, block: { kind: "tool_use", id: "call_a", name: "get_weather" } },
      { type: "block_start", index: 1, block: { kind: "tool_use", id: "call_b", name: "get_time" } },
      { type: "block_delta", index: 0, delta: { kind: "input_json", json: '{"city": ' } },
      { type: "block_delta", index: 1, delta: { kind: "input_json", json: '{"timezone":' } },
      { type: "block_delta", index: 1, delta: { kind: "input_json", json: ' "Europe/Paris"}' } },
      { type: "block_stop", index: 1 },
      { type: "block_delta", index: 0, delta: { kind: "input_json", json: '"Paris"}' } },
      { type: "block_stop", index: 0, stopReason: "tool_use" }
    ])
    timeline.finish()
    expect(collector.calls).toEqual([
      { type: "function_call", callId: "call_a", name: "get_weather", arguments: '{"city": "Paris"}' },
      { type: "function_call", callId: "call_b", name: "get_time", arguments: '{"timezone": "Europe/Paris"}' }
    ])
  })

  it("carries a Gemini thought signature and leaves the key out when there is none", () => {
    const timeline = new Timeline()
    const collector = new ToolCallCollector(timeline)
    feed(timeline, [
      { type: "block_start", index: 0, block: { kind: "tool_use", id: "g1", name: "f", thoughtSignature: "CiQB0e2Kb" } },
      { type: "block_delta", index: 0, delta: { kind: "input_json", json: '{"x":1}' } },
      { type: "block_stop", index: 0 },
      { type: "block_start", index: 1, block: { kind: "tool_use", id: "g2", name: "f" } },
      { type: "block_delta", index: 1, delta: { kind: "input_json", json: '{"x":2}' } },
      { type: "block_stop", index: 1 }
    ])
    expect(collector.calls[0]!.thoughtSignature).toBe("CiQB0e2Kb")
    expect(Object.keys(collector.calls[1]!)).toEqual(["type", "callId", "name", "arguments"])
  })

  it("keeps argument text verbatim, but reads a call with no argument text as {}", () => {
    const timeline = new Timeline()
    const collector = new ToolCallCollector(timeline)
    feed(timeline, [
      { type: "block_start", index: 0, block: { kind: "tool_use", id: "a", name: "now" } },
      { type: "block_delta", index: 0, delta: { kind: "input_json", json: "" } },
      { type: "block_stop", index: 0 },
      { type: "block_start", index: 1, block: { kind: "tool_use", id: "b", name: "bad" } },
      { type: "block_delta", index: 1, delta: { kind: "input_json", json: ' {"unterminated": ' } },
      { type: "block_stop", index: 1 }
    ])
    expect(collector.calls.map((c) => c.arguments)).toEqual(["{}", ' {"unterminated": '])
  })

  it("yields no call for an aborted tool block, and reports what was cut off", () => {
    const timeline = new Timeline()
    const collector = new ToolCallCollector(timeline)
    feed(timeline, [
      { type: "block_start", index: 0, block: { kind: "tool_use", id: "ok", name: "a" } },
      { type: "block_delta", index: 0, delta: { kind: "input_json", json: "{}" } },
      { type: "block_stop", index: 0 },
      { type: "block_start", index: 1, block: { kind: "tool_use", id: "cut", name: "b" } },
      { type: "block_delta", index: 1, delta: { kind: "input_json", json: '{"q":"ha' } }
    ])
    timeline.abort("Cancelled")
    expect(collector.calls.map((c) => c.callId)).toEqual(["ok"])
    expect(collector.aborted).toEqual([
      { index: 1, ordinal: 1, callId: "cut", name: "b", reason: "Cancelled", partialArguments: '{"q":"ha' }
    ])
  })
})

describe("UsageCollector", () => {
  it("merges usage events: later defined fields win, omitted fields survive", () => {
    const timeline = new Timeline()
    const collector = new UsageCollector(timeline)
    expect(collector.usage).toEqual({})
    // Anthropic's shape: input and cache counts at message_start, output at message_delta.
    feed(timeline, [
      { type: "usage", inputTokens: 2095, outputTokens: 1, cacheReadTokens: 1800, cacheWriteTokens: 0 },
      { type: "ping" },
      { type: "usage", outputTokens: 503 }
    ])
    expect(collector.usage).toEqual({ inputTokens: 2095, outputTokens: 503, cacheReadTokens: 1800, cacheWriteTokens: 0 })
  })

  it("lists fields in one fixed order whatever order the events set them", () => {
    const timeline = new Timeline()
    const collector = new UsageCollector(timeline)
    feed(timeline, [
      { type: "usage", cacheWriteTokens: 4 },
      { type: "usage", totalTokens: 30, outputTokens: 10 },
      { type: "usage", inputTokens: 20 }
    ])
    expect(Object.keys(collector.usage)).toEqual(["inputTokens", "outputTokens", "totalTokens", "cacheWriteTokens"])
  })

  it("returns a snapshot the caller cannot use to change the collector", () => {
    const timeline = new Timeline()
    const collector = new UsageCollector(timeline)
    timeline.dispatch({ type: "usage", inputTokens: 1 })
    const snapshot = collector.usage as { inputTokens?: number }
    snapshot.inputTokens = 99
    expect(collector.usage.inputTokens).toBe(1)
  })
})
