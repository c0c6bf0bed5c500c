import { readFileSync } from "node:fs"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import type { Event } from "../../../src/llm/event.ts"
import type { Request } from "../../../src/llm/request.ts"
import type { StreamDecoder } from "../../../src/llm/scheme.ts"
import { createSseParser, parseSseText } from "../../../src/llm/sse.ts"
import { openAiChatScheme } from "../../../src/llm/schemes/openai-chat.ts"
import { makeOpenAiChatDecoder } from "../../../src/llm/schemes/openai-chat-decoder.ts"
import { toolNames } from "../../../src/schema/provider-tools.ts"
import { withoutRawUsage } from "./without-raw-usage.ts"

const fixture = (name: string) =>
  readFileSync(new URL(`../../fixtures/sse/openai-chat/${name}.sse`, import.meta.url), "utf8")

// The request the recorded responses answer: its dotted tool name travels as files_read.
const request: Request = {
  model: "gpt-4.1-mini",
  items: [],
  tools: [
    { name: "files.read", description: "Read a file.", inputSchema: { type: "object", properties: {} } },
    { name: "get_weather", description: "Weather.", inputSchema: { type: "object", properties: {} } }
  ],
  config: {}
}

const run = (decoder: StreamDecoder, text: string): Array<Event> =>
  withoutRawUsage([...parseSseText(text).flatMap((message) => decoder.push(message)), ...decoder.end()])

const decode = (name: string) => run(openAiChatScheme.decoder(request), fixture(name))

const text = (index: number, value: string): Event => ({ type: "block_delta", index, delta: { kind: "text", text: value } })
const json = (index: number, value: string): Event => ({ type: "block_delta", index, delta: { kind: "input_json", json: value } })
const started: Event = { type: "status", status: "started" }

/** Argument text per tool call id, reassembled from the input_json deltas of each tool block. */
const toolArguments = (events: ReadonlyArray<Event>): Record<string, string> => {
  const idOf = new Map<number, string>()
  const out: Record<string, string> = {}
  for (const event of events) {
    if (event.type === "block_start" && event.block.kind === "tool_use") {
      idOf.set(event.index, event.block.id)
      out[event.block.id] = ""
    }
    if (event.type === "block_delta" && event.delta.kind === "input_json") {
      const id = idOf.get(event.index) as string
      out[id] += event.delta.json
    }
  }
  return out
}

describe("OpenAI Chat decoder on recorded-style streams", () => {
  it("text: one text block, closed by finish_reason, then usage and completion", () => {
    expect(decode("text")).toEqual([
      { ...started, model: "gpt-4.1-mini-2025-04-14", responseId: "chatcmpl-C7tXq2w9bLkT4mNpR0aVzE3sYd1Ui" },
      { type: "block_start", index: 0, block: { kind: "text" } },
      ...["Hello", "!", " How", " can", " I", " help", "?"].map((piece) => text(0, piece)),
      { type: "block_stop", index: 0, stopReason: "end_turn" },
      { type: "usage", inputTokens: 19, outputTokens: 8, reasoningTokens: 0, totalTokens: 27, cacheReadTokens: 0 },
      { type: "status", status: "completed", stopReason: "end_turn" }
    ])
  })

  it("usage-cached: cached prompt tokens become cacheReadTokens", () => {
    const usage = decode("usage-cached").filter((event) => event.type === "usage")
    expect(usage).toEqual([{ type: "usage", inputTokens: 2113, outputTokens: 6, reasoningTokens: 0, totalTokens: 2119, cacheReadTokens: 1920 }])
  })

  it("parallel-tool-calls: two blocks keyed by index and id, both closed with tool_use, names mapped back", () => {
    const events = decode("parallel-tool-calls")
    const weather = "call_Wq3nE8rT1yU6iO0pA2sD4fG7"
    const read = "call_Rf5tG9hY2uJ7kI3oL8pZ1xC4"
    expect(events).toEqual([
      { ...started, model: "gpt-4.1-mini-2025-04-14", responseId: "chatcmpl-C7tYAa8sD7fG6hJ5kL4zX3cV2bN1m" },
      { type: "block_start", index: 0, block: { kind: "tool_use", id: weather, name: "get_weather" } },
      ...['{"ci', 'ty":"', "Paris", '","un', 'it":"c', '"}'].map((piece) => json(0, piece)),
      { type: "block_start", index: 1, block: { kind: "tool_use", id: read, name: "files.read" } },
      ...['{"pa', 'th":"', "notes", '.txt"}'].map((piece) => json(1, piece)),
      { type: "block_stop", index: 0, stopReason: "tool_use" },
      { type: "block_stop", index: 1, stopReason: "tool_use" },
      { type: "usage", inputTokens: 142, outputTokens: 58, reasoningTokens: 0, totalTokens: 200, cacheReadTokens: 0 },
      { type: "status", status: "completed", stopReason: "tool_use" }
    ])
    expect(toolArguments(events)).toEqual({ [weather]: '{"city":"Paris","unit":"c"}', [read]: '{"path":"notes.txt"}' })
  })

  it("without the request, tool names are reported as sent on the wire", () => {
    const events = run(openAiChatScheme.decoder(), fixture("parallel-tool-calls"))
    const names = events.flatMap((event) => (event.type === "block_start" && event.block.kind === "tool_use" ? [event.block.name] : []))
    expect(names).toEqual(["get_weather", "files_read"])
  })

  it("error-mid-stream: the open block is aborted and the provider error reported", () => {
    const message = "The server had an error while processing your request. Sorry about that!"
    expect(decode("error-mid-stream")).toEqual([
      { ...started, model: "gpt-4.1-mini-2025-04-14", responseId: "chatcmpl-C7tYK9vB8nM7qW6eR5tY4uI3oP2aS" },
      { type: "block_start", index: 0, block: { kind: "text" } },
      text(0, "Let"),
      text(0, " me"),
      text(0, " think"),
      { type: "block_abort", index: 0, reason: message },
      { type: "error", code: "server_error", message, raw: { message, type: "server_error", param: null, code: null } },
      { type: "status", status: "failed" }
    ])
  })

  it("error-with-usage: an error chunk that also carries usage (OpenRouter) reports the usage before failing", () => {
    const message = "Upstream provider returned an error mid-stream"
    expect(decode("error-with-usage")).toEqual([
      { ...started, model: "mistralai/mistral-small-3.2", responseId: "gen-1767225600-Qx7mB2vL9pR4tK8wZ3nY" },
      { type: "block_start", index: 0, block: { kind: "text" } },
      text(0, "The capital"),
      text(0, " of France"),
      { type: "block_abort", index: 0, reason: message },
      { type: "usage", inputTokens: 14, outputTokens: 4, totalTokens: 18 },
      { type: "error", code: "502", message, raw: { code: 502, message, metadata: { provider_name: "Mistral", raw: "connection reset" } } },
      { type: "status", status: "failed" }
    ])
  })

  it("truncated: end() aborts every open block, the tool call included, and reports the truncation", () => {
    const events = decode("truncated")
    expect(events.slice(-4)).toEqual([
      { type: "block_abort", index: 0, reason: "the stream ended before the response finished" },
      { type: "block_abort", index: 1, reason: "the stream ended before the response finished" },
      { type: "error", code: "incomplete_stream", message: "the stream ended before the response finished" },
      { type: "status", status: "failed" }
    ])
    expect(events.some((event) => event.type === "block_stop")).toBe(false)
  })

  it("compatible server: reasoning_content becomes thinking, id-less calls on index 0 get distinct generated ids", () => {
    const names = toolNames(request.tools, "openai-chat")
    const events = run(makeOpenAiChatDecoder(names, { generatedIdPrefix: "gen_" }), fixture("compat-reasoning-no-ids"))
    expect(events).toEqual([
      { ...started, model: "qwen3-8b", responseId: "chatcmpl-q8Xv2LmN4pR7tY1uK3" },
      { type: "block_start", index: 0, block: { kind: "thinking" } },
      ...["The user", " wants weather", " and a file."].map((piece): Event => ({
        type: "block_delta",
        index: 0,
        delta: { kind: "thinking", text: piece }
      })),
      { type: "block_stop", index: 0 },
      { type: "block_start", index: 1, block: { kind: "tool_use", id: "gen_0", name: "get_weather" } },
      json(1, '{"city":"Paris","unit":"c"}'),
      { type: "block_start", index: 2, block: { kind: "tool_use", id: "gen_1", name: "files.read" } },
      json(2, '{"path":"notes.txt"}'),
      // The server said "stop" after calling tools; the calls are what matters.
      { type: "block_stop", index: 1, stopReason: "tool_use" },
      { type: "block_stop", index: 2, stopReason: "tool_use" },
      { type: "status", status: "completed", stopReason: "tool_use" }
    ])
  })

  it("generated ids never repeat across decoders (turns)", () => {
    const ids = [1, 2, 3].flatMap(() =>
      run(openAiChatScheme.decoder(request), fixture("compat-reasoning-no-ids")).flatMap((event) =>
        event.type === "block_start" && event.block.kind === "tool_use" ? [event.block.id] : []
      )
    )
    expect(new Set(ids).size).toBe(6)
  })

  it("reasoning never reaches a text block", () => {
    const events = decode("compat-reasoning-no-ids")
    const textBlocks = events.filter((event) => event.type === "block_delta" && event.delta.kind === "text")
    expect(textBlocks).toEqual([])
  })

  it("a non-JSON chunk fails the response instead of being skipped", () => {
    const decoder = openAiChatScheme.decoder()
    expect(decoder.push({ event: "", data: "{not json" })).toEqual([
      { type: "error", code: "invalid_response", message: "chat chunk is not a JSON object: {not json" },
      { type: "status", status: "failed" }
    ])
    expect(decoder.end()).toEqual([])
  })

  it.each(["text", "usage-cached", "parallel-tool-calls", "error-mid-stream", "error-with-usage", "truncated", "compat-reasoning-no-ids"])(
    "%s decodes the same however the bytes are split into chunks",
    (name) => {
      const whole = fixture(name)
      const names = toolNames(request.tools, "openai-chat")
      const expected = run(makeOpenAiChatDecoder(names, { generatedIdPrefix: "g" }), whole)
      fc.assert(
        fc.property(fc.uniqueArray(fc.integer({ min: 1, max: whole.length - 1 }), { maxLength: 12 }), (cuts) => {
          const parser = createSseParser()
          const decoder = makeOpenAiChatDecoder(names, { generatedIdPrefix: "g" })
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

  it("parallel calls whose deltas interleave never overwrite each other", () => {
    const call = fc.record({ args: fc.array(fc.string({ minLength: 1, maxLength: 6 }), { minLength: 1, maxLength: 5 }) })
    fc.assert(
      fc.property(fc.array(call, { minLength: 1, maxLength: 5 }), fc.infiniteStream(fc.nat()), (calls, picks) => {
        // Each call opens with its id and name, then its fragments; calls are interleaved in a random order.
        const queues = calls.map((c, i) => [
          { index: i, id: `call_${i}`, type: "function", function: { name: `tool_${i}`, arguments: "" } },
          ...c.args.map((piece) => ({ index: i, function: { arguments: piece } }))
        ])
        const chunks: Array<string> = []
        const picker = picks[Symbol.iterator]()
        while (queues.some((q) => q.length > 0)) {
          const live = queues.filter((q) => q.length > 0)
          const queue = live[(picker.next().value as number) % live.length] as Array<unknown>
          chunks.push(JSON.stringify({ choices: [{ index: 0, delta: { tool_calls: [queue.shift()] }, finish_reason: null }] }))
        }
        chunks.push(JSON.stringify({ choices: [{ index: 0, delta: {}, finish_reason: "tool_calls" }] }), "[DONE]")
        const decoder = openAiChatScheme.decoder()
        const events = [...chunks.flatMap((data) => decoder.push({ event: "", data })), ...decoder.end()]
        expect(toolArguments(events)).toEqual(Object.fromEntries(calls.map((c, i) => [`call_${i}`, c.args.join("")])))
        const stops = events.filter((event) => event.type === "block_stop")
        expect(stops).toHaveLength(calls.length)
      })
    )
  })
})

describe("numeric error codes from compatible servers", () => {
  it("keeps a numeric code (OpenRouter's 502) so the retry policy can recognise it", () => {
    const decoder = openAiChatScheme.decoder()
    const events = decoder.push({ event: "message", data: '{"error":{"code":502,"message":"Bad gateway"}}' })
    expect(events).toContainEqual({ type: "error", code: "502", message: "Bad gateway", raw: { code: 502, message: "Bad gateway" } })
  })
})
