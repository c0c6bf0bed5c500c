import { readFileSync } from "node:fs"
import { afterEach, describe, expect, it } from "vitest"
import type { Event } from "../../../src/llm/event.ts"
import { Item } from "../../../src/llm/item.ts"
import { createLlmClient } from "../../../src/llm/llm-client.ts"
import type { Request } from "../../../src/llm/request.ts"
import { ResponseMeter, defaultResponseLimits } from "../../../src/llm/limits.ts"
import { openAiResponsesScheme } from "../../../src/llm/schemes/openai-responses.ts"
import { parseSseText } from "../../../src/llm/sse.ts"
import { startReplayProvider } from "../../../src/testing/replay-provider.ts"
import type { ReplayProvider } from "../../../src/testing/replay-provider.ts"
import { ResponseCollector } from "../../../src/timeline/assistant-response.ts"
import { Timeline } from "../../../src/timeline/timeline.ts"
import { withoutRawUsage } from "./without-raw-usage.ts"

/**
 * The final event is the authority, the deltas a preview (decision 0021), and the provider's own error
 * details survive, on the Responses API. Fixtures written for these tests under test/fixtures/sse/openai-responses/.
 */

const fixture = (name: string) => readFileSync(new URL(`../../fixtures/sse/openai-responses/${name}.sse`, import.meta.url), "utf8")

const request: Request = {
  model: "gpt-5-mini",
  items: [Item.userText("Weather?")],
  tools: [{ name: "get_weather", description: "Weather.", inputSchema: { type: "object", properties: {} } }],
  config: {}
}

const decodeText = (sse: string): Array<Event> => {
  const decoder = openAiResponsesScheme.decoder(request, {})
  return [...parseSseText(sse).flatMap((message) => decoder.push(message)), ...decoder.end()]
}
const decode = (name: string) => decodeText(fixture(name))

const collect = (events: ReadonlyArray<Event>) => {
  const timeline = new Timeline()
  const collector = new ResponseCollector(timeline)
  for (const event of events) timeline.dispatch(event)
  timeline.finish()
  return collector.result()
}

const deltaText = (events: ReadonlyArray<Event>, index: number) =>
  events.map((e) => (e.type === "block_delta" && e.index === index && e.delta.kind === "text" ? e.delta.text : "")).join("")

let server: ReplayProvider | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
})

describe("Responses errors keep the provider's code and message", () => {
  const MESSAGE = "Your project has used up its credit for this month; add credit to continue."

  it("error-nested: details under `error`, then response.failed — one error, the provider's, then failed", () => {
    expect(decode("error-nested")).toEqual([
      { type: "status", status: "started", model: "gpt-5-mini-2025-08-07", responseId: "resp_77aa01" },
      { type: "error", code: "insufficient_quota", message: MESSAGE, raw: { type: "insufficient_quota", code: "insufficient_quota", message: MESSAGE, param: null } },
      { type: "status", status: "failed" }
    ])
  })

  it("through the client: LlmProviderError with the provider's code and message", async () => {
    server = await startReplayProvider({ scheme: "openai-responses", script: [{ kind: "stream", transcript: fixture("error-nested") }] })
    const client = createLlmClient({ provider: "openai-responses", model: "m", apiKey: "k", baseUrl: server.baseUrl, retry: { maxRetries: 0 } })
    let error: unknown
    try {
      for await (const _ of client.stream(request)) {
        // drain
      }
    } catch (caught) {
      error = caught
    }
    expect(error).toMatchObject({ _tag: "LlmProviderError", code: "insufficient_quota", message: MESSAGE })
  })

  it("an `error` without response.failed still fails with its details when the stream ends", () => {
    const sse = fixture("error-nested").split("event: response.failed")[0]!
    const events = decodeText(sse)
    expect(events.filter((e) => e.type === "error")).toEqual([{ type: "error", code: "insufficient_quota", message: MESSAGE, raw: { type: "insufficient_quota", code: "insufficient_quota", message: MESSAGE, param: null } }])
    expect(events.at(-1)).toEqual({ type: "status", status: "failed" })
  })

  it("a nested error with a null code is named by its type", () => {
    const events = decodeText(
      `data: {"type":"error","error":{"type":"invalid_request_error","code":null,"message":"Bad input.","param":"input"}}\n\n`
    )
    expect(events).toContainEqual({ type: "error", code: "invalid_request_error", message: "Bad input.", raw: { type: "invalid_request_error", code: null, message: "Bad input.", param: "input" } })
  })

  it("response.failed alone reports the response's error; output after an `error` event is ignored", () => {
    const events = decodeText(
      [
        `data: {"type":"error","error":{"code":"server_error","message":"Boom."}}`,
        `data: {"type":"response.output_item.added","output_index":0,"item":{"type":"message","id":"m1","content":[]}}`,
        `data: {"type":"response.output_text.delta","output_index":0,"content_index":0,"delta":"late"}`,
        `data: {"type":"response.failed","response":{"status":"failed","error":{"code":"other_code","message":"Other."},"usage":{"input_tokens":3,"output_tokens":0,"total_tokens":3}}}`
      ].join("\n\n") + "\n\n"
    )
    expect(withoutRawUsage(events)).toEqual([
      { type: "error", code: "server_error", message: "Boom.", raw: { code: "server_error", message: "Boom." } },
      { type: "usage", inputTokens: 3, outputTokens: 0, totalTokens: 3 },
      { type: "status", status: "failed" }
    ])
  })
})

describe("the final event is the authority over the deltas", () => {
  it("text-done-only: trimmed deltas are completed from the done events; two messages, no issue", () => {
    const events = decode("text-done-only")
    const first = "Sure — I'll look that up for you first."
    const second = "Here is what I found: the library opens at nine and closes at five on weekdays."
    // Streaming consumers see the whole text too: the missing suffix arrives as one more delta.
    expect(deltaText(events, 0)).toBe(first)
    expect(deltaText(events, 1)).toBe(second)
    expect(events.filter((e) => e.type === "block_stop")).toEqual([
      { type: "block_stop", index: 0, stopReason: "end_turn", final: first },
      { type: "block_stop", index: 1, stopReason: "end_turn", final: second }
    ])
    const response = collect(events)
    expect(response.issues).toEqual([])
    expect(response.items).toEqual([
      { type: "message", role: "assistant", content: [{ type: "output_text", text: first }, { type: "output_text", text: second }] }
    ])
  })

  it("text-final-mismatch: deltas that disagree are replaced by the final text and reported", () => {
    const events = decode("text-final-mismatch")
    expect(events.filter((e) => e.type === "block_stop")).toEqual([
      { type: "block_stop", index: 0, stopReason: "end_turn", final: "The answer is 42." }
    ])
    const response = collect(events)
    expect(response.issues).toEqual([{ kind: "final_mismatch", index: 0, block: "text", streamedLength: 16, finalLength: 17 }])
    expect(response.items).toEqual([{ type: "message", role: "assistant", content: [{ type: "output_text", text: "The answer is 42." }] }])
  })

  it("completed-only: response.completed closes the message whose done never came and adds the unannounced call", () => {
    const events = decode("completed-only")
    const response = collect(events)
    expect(response.issues).toEqual([])
    expect(response.items).toEqual([
      { type: "message", role: "assistant", content: [{ type: "output_text", text: "Checking the forecast for Lyon now." }] },
      { type: "function_call", callId: "call_77aa31", name: "get_weather", arguments: '{"city":"Lyon"}' }
    ])
    expect(response.stopReason).toBe("tool_use")
  })

  it("an item's own done wins over response.completed; a repeated done adds nothing", () => {
    const sse = [
      `data: {"type":"response.output_item.added","output_index":0,"item":{"type":"message","id":"m1","content":[]}}`,
      `data: {"type":"response.output_text.delta","output_index":0,"content_index":0,"delta":"Hi"}`,
      `data: {"type":"response.output_item.done","output_index":0,"item":{"type":"message","id":"m1","status":"completed","content":[{"type":"output_text","text":"Hi there"}]}}`,
      `data: {"type":"response.output_item.done","output_index":0,"item":{"type":"message","id":"m1","status":"completed","content":[{"type":"output_text","text":"Hi there"}]}}`,
      `data: {"type":"response.completed","response":{"status":"completed","output":[{"type":"message","id":"m1","status":"completed","content":[{"type":"output_text","text":"Something else"}]}]}}`
    ].join("\n\n")
    const events = decodeText(`${sse}\n\n`)
    expect(events.filter((e) => e.type === "block_start")).toHaveLength(1)
    expect(collect(events).items).toEqual([{ type: "message", role: "assistant", content: [{ type: "output_text", text: "Hi there" }] }])
  })

  it("a done item without content does not erase the streamed text (compatible servers)", () => {
    const sse = [
      `data: {"type":"response.output_item.added","output_index":0,"item":{"type":"message","id":"m1","content":[]}}`,
      `data: {"type":"response.output_text.delta","output_index":0,"content_index":0,"delta":"Hello"}`,
      `data: {"type":"response.output_item.done","output_index":0,"item":{"type":"message","id":"m1","status":"completed","content":[]}}`,
      `data: {"type":"response.completed","response":{"status":"completed","output":[]}}`
    ].join("\n\n")
    const events = decodeText(`${sse}\n\n`)
    expect(events).toContainEqual({ type: "block_stop", index: 0, stopReason: "end_turn" })
    expect(collect(events).items).toEqual([{ type: "message", role: "assistant", content: [{ type: "output_text", text: "Hello" }] }])
  })

  it("arguments that disagree with the done copy are replaced by it and reported", () => {
    const sse = [
      `data: {"type":"response.output_item.added","output_index":0,"item":{"type":"function_call","id":"fc1","call_id":"c1","name":"get_weather","arguments":""}}`,
      `data: {"type":"response.function_call_arguments.delta","output_index":0,"delta":"{\\"city\\":\\"Pa"}`,
      `data: {"type":"response.output_item.done","output_index":0,"item":{"type":"function_call","id":"fc1","call_id":"c1","name":"get_weather","arguments":"{\\"city\\":\\"Rome\\"}"}}`,
      `data: {"type":"response.completed","response":{"status":"completed","output":[]}}`
    ].join("\n\n")
    const response = collect(decodeText(`${sse}\n\n`))
    expect(response.issues).toEqual([{ kind: "final_mismatch", index: 0, block: "tool_use", streamedLength: 11, finalLength: 15 }])
    expect(response.items).toEqual([{ type: "function_call", callId: "c1", name: "get_weather", arguments: '{"city":"Rome"}' }])
  })

  it("reasoning-copies: the reasoning sent back is the output_item.done copy (decision 0020)", () => {
    const response = collect(decode("reasoning-copies"))
    expect(response.issues).toEqual([])
    expect(response.items[0]).toEqual({
      type: "reasoning",
      text: "**Planning the lookup**\n\nI should call the weather tool.",
      data: { provider: "openai", id: "rs_77aa40", encryptedContent: "gAAAAB-done-copy-Zm9vYmFy-final==" }
    })
    const body = JSON.parse(openAiResponsesScheme.encodeRequest({ ...request, items: [...request.items, ...response.items] })) as {
      input: Array<Record<string, unknown>>
    }
    expect(body.input.find((entry) => entry["type"] === "reasoning")).toMatchObject({
      id: "rs_77aa40",
      encrypted_content: "gAAAAB-done-copy-Zm9vYmFy-final=="
    })
  })

  it("reasoning whose done never came is closed with the response.completed copy", () => {
    const sse = [
      `data: {"type":"response.output_item.added","output_index":0,"item":{"type":"reasoning","id":"rs_1","summary":[]}}`,
      `data: {"type":"response.reasoning_summary_text.delta","output_index":0,"summary_index":0,"delta":"Thinking"}`,
      `data: {"type":"response.completed","response":{"status":"completed","output":[{"type":"reasoning","id":"rs_1","encrypted_content":"enc-completed","summary":[{"type":"summary_text","text":"Thinking hard."}]}]}}`
    ].join("\n\n")
    const response = collect(decodeText(`${sse}\n\n`))
    expect(response.items).toEqual([
      { type: "reasoning", text: "Thinking hard.", data: { provider: "openai", id: "rs_1", encryptedContent: "enc-completed" } }
    ])
  })

  it("summary paragraphs: the break goes before the next part's text, as the done copy joins them", () => {
    const sse = [
      `data: {"type":"response.output_item.added","output_index":0,"item":{"type":"reasoning","id":"rs_1","summary":[]}}`,
      `data: {"type":"response.reasoning_summary_part.added","output_index":0,"summary_index":0}`,
      `data: {"type":"response.reasoning_summary_text.delta","output_index":0,"summary_index":0,"delta":"One."}`,
      `data: {"type":"response.reasoning_summary_part.added","output_index":0,"summary_index":1}`,
      `data: {"type":"response.reasoning_summary_part.added","output_index":0,"summary_index":2}`,
      `data: {"type":"response.reasoning_summary_text.delta","output_index":0,"summary_index":2,"delta":"Three."}`,
      `data: {"type":"response.output_item.done","output_index":0,"item":{"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"One."},{"type":"summary_text","text":""},{"type":"summary_text","text":"Three."}]}}`,
      `data: {"type":"response.completed","response":{"status":"completed","output":[]}}`
    ].join("\n\n")
    const response = collect(decodeText(`${sse}\n\n`))
    expect(response.issues).toEqual([])
    expect(response.items).toEqual([{ type: "reasoning", text: "One.\n\nThree.", data: { provider: "openai", id: "rs_1" } }])
  })

  it("raw reasoning text (content) is held against the item's content, not its summary", () => {
    const sse = [
      `data: {"type":"response.output_item.added","output_index":0,"item":{"type":"reasoning","id":"rs_1","summary":[],"content":[]}}`,
      `data: {"type":"response.reasoning_text.delta","output_index":0,"content_index":0,"delta":"Let me see"}`,
      `data: {"type":"response.output_item.done","output_index":0,"item":{"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"Short."}],"content":[{"type":"reasoning_text","text":"Let me see."}]}}`,
      `data: {"type":"response.completed","response":{"status":"completed","output":[]}}`
    ].join("\n\n")
    const response = collect(decodeText(`${sse}\n\n`))
    expect(response.issues).toEqual([])
    expect(response.items).toEqual([{ type: "reasoning", text: "Let me see.", data: { provider: "openai", id: "rs_1" } }])
  })
})

describe("the size limits bound final values as they bound deltas", () => {
  const limits = { ...defaultResponseLimits, maxTextBytes: 10, maxReasoningBytes: 10, maxArgumentBytes: 10 }
  const run = (events: ReadonlyArray<Event>) => {
    const meter = new ResponseMeter(limits)
    for (const event of events) meter.check(event)
  }

  it("a final text past maxTextBytes fails, though its deltas were small", () => {
    const events: Array<Event> = [
      { type: "block_start", index: 0, block: { kind: "text" } },
      { type: "block_delta", index: 0, delta: { kind: "text", text: "Hi" } },
      { type: "block_stop", index: 0, final: "Hi, this is far too long" }
    ]
    expect(() => run(events)).toThrow(expect.objectContaining({ _tag: "LlmLimitExceeded", limit: "maxTextBytes", seen: 24 }))
  })

  it("a final value replaces its block's deltas in the count; text of all blocks adds up", () => {
    const block = (index: number, delta: string, final: string): Array<Event> => [
      { type: "block_start", index, block: { kind: "text" } },
      { type: "block_delta", index, delta: { kind: "text", text: delta } },
      { type: "block_stop", index, final }
    ]
    expect(() => run([...block(0, "abcdefgh", "abcd"), ...block(1, "efg", "efg")])).not.toThrow()
    expect(() => run([...block(0, "abcd", "abcdefgh"), ...block(1, "efg", "efg")])).toThrow(
      expect.objectContaining({ limit: "maxTextBytes", seen: 11 })
    )
  })

  it("final reasoning and final arguments are bounded too", () => {
    expect(() =>
      run([
        { type: "block_start", index: 0, block: { kind: "thinking" } },
        { type: "block_stop", index: 0, final: "thinking, at length" }
      ])
    ).toThrow(expect.objectContaining({ limit: "maxReasoningBytes" }))
    expect(() =>
      run([
        { type: "block_start", index: 0, block: { kind: "tool_use", id: "c", name: "f" } },
        { type: "block_stop", index: 0, final: '{"a":"0123456789"}' }
      ])
    ).toThrow(expect.objectContaining({ limit: "maxArgumentBytes" }))
  })

  it("through the client: a done event whose text passes maxTextBytes fails the response", async () => {
    const long = "x".repeat(4096)
    const transcript = [
      `event: response.output_item.added\ndata: {"type":"response.output_item.added","output_index":0,"item":{"type":"message","id":"m1","content":[]}}`,
      `event: response.output_text.delta\ndata: {"type":"response.output_text.delta","output_index":0,"content_index":0,"delta":"x"}`,
      `event: response.output_item.done\ndata: {"type":"response.output_item.done","output_index":0,"item":{"type":"message","id":"m1","status":"completed","content":[{"type":"output_text","text":"y${long}"}]}}`,
      `event: response.completed\ndata: {"type":"response.completed","response":{"status":"completed","output":[]}}`
    ].join("\n\n") + "\n\n"
    server = await startReplayProvider({ scheme: "openai-responses", script: [{ kind: "stream", transcript }] })
    const client = createLlmClient({
      provider: "openai-responses",
      model: "m",
      apiKey: "k",
      baseUrl: server.baseUrl,
      retry: { maxRetries: 0 },
      limits: { maxTextBytes: 1024 }
    })
    let error: unknown
    try {
      for await (const _ of client.stream(request)) {
        // drain
      }
    } catch (caught) {
      error = caught
    }
    expect(error).toMatchObject({ _tag: "LlmLimitExceeded", limit: "maxTextBytes" })
  })
})
