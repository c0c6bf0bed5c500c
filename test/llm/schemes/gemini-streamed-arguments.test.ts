import { readFileSync } from "node:fs"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import type { Event } from "../../../src/llm/event.ts"
import { LlmLimitExceeded, LlmProtocolError } from "../../../src/llm/llm-error.ts"
import { defaultResponseLimits } from "../../../src/llm/limits.ts"
import type { StreamDecoder } from "../../../src/llm/scheme.ts"
import { createGeminiDecoder, GENERATED_CALL_ID_PREFIX } from "../../../src/llm/schemes/gemini-decoder.ts"
import { GeminiPartialArgs, parseJsonPath } from "../../../src/llm/schemes/gemini-partial-args.ts"
import { createSseParser, parseSseText } from "../../../src/llm/sse.ts"
import { withoutRawUsage } from "./without-raw-usage.ts"

const fixture = (name: string): string => readFileSync(new URL(`../../fixtures/sse/gemini/${name}.sse`, import.meta.url), "utf8")

const sequentialIds = () => {
  let n = 0
  return () => `${GENERATED_CALL_ID_PREFIX}${++n}`
}

const decoder = (maxArgumentBytes = defaultResponseLimits.maxArgumentBytes): StreamDecoder =>
  createGeminiDecoder({ newCallId: sequentialIds() }, { limits: { ...defaultResponseLimits, maxArgumentBytes } })

const run = (d: StreamDecoder, text: string): Array<Event> =>
  withoutRawUsage([...parseSseText(text).flatMap((message) => d.push(message)), ...d.end()])

const chunk = (parts: ReadonlyArray<unknown>, finishReason?: string): { event: string; data: string } => ({
  event: "message",
  data: JSON.stringify({ candidates: [{ content: { role: "model", parts }, ...(finishReason === undefined ? {} : { finishReason }) }] })
})

const SIG = "Ck8BVm9yZXgtc3RyZWFtZWQtc2lnbmF0dXJlLWZvci10aGUtZmlyc3QtY2FsbC1tYWRlLXVwLWZvci10ZXN0cw=="

describe("Gemini streamed function-call arguments", () => {
  it("rebuilds each call from its partialArgs: nested paths, arrays, strings in pieces, numbers, booleans, null", () => {
    expect(run(decoder(), fixture("streamed-arguments"))).toEqual([
      { type: "status", status: "started", model: "gemini-3-pro-preview", responseId: "Zm9yLXRlc3RzLW9ubHk" },
      { type: "block_start", index: 0, block: { kind: "thinking" } },
      { type: "block_delta", index: 0, delta: { kind: "thinking", text: "**Planning the trip**\n\nI need the route first." } },
      { type: "block_stop", index: 0 },
      { type: "block_start", index: 1, block: { kind: "tool_use", id: `${GENERATED_CALL_ID_PREFIX}1`, name: "plan_route", thoughtSignature: SIG } },
      {
        type: "block_delta",
        index: 1,
        delta: {
          kind: "input_json",
          json: '{"from":"Lyon","stops":[{"city":"Dijon","nights":2},{"city":"Strasbourg, Grand Est","nights":1.5}],"avoid_tolls":true,"note":null,"tags":["scenic \\"slow\\" route"]}'
        }
      },
      { type: "block_stop", index: 1 },
      { type: "block_start", index: 2, block: { kind: "tool_use", id: `${GENERATED_CALL_ID_PREFIX}2`, name: "check_weather" } },
      // The last piece carries no willContinue: it ends the call without an empty functionCall after it.
      { type: "block_delta", index: 2, delta: { kind: "input_json", json: '{"city":"Dijon","days":3}' } },
      { type: "block_stop", index: 2 },
      { type: "usage", inputTokens: 61, outputTokens: 240, reasoningTokens: 152, totalTokens: 301 },
      { type: "status", status: "completed", stopReason: "tool_use" }
    ])
  })

  it("aborts a streamed call that other content interrupts: it is never run on half its arguments", () => {
    expect(run(decoder(), fixture("streamed-arguments-interrupted"))).toEqual([
      { type: "status", status: "started", model: "gemini-3-pro-preview", responseId: "Zm9yLXRlc3RzLW9ubHk" },
      { type: "block_start", index: 0, block: { kind: "tool_use", id: `${GENERATED_CALL_ID_PREFIX}1`, name: "delete_files" } },
      { type: "block_abort", index: 0, reason: "the function call's arguments were interrupted by other content" },
      { type: "block_start", index: 1, block: { kind: "text" } },
      { type: "block_delta", index: 1, delta: { kind: "text", text: "Sorry, let me reconsider." } },
      { type: "block_delta", index: 1, delta: { kind: "text", text: " I will ask first." } },
      { type: "block_stop", index: 1, stopReason: "end_turn" },
      { type: "usage", inputTokens: 40, outputTokens: 12, totalTokens: 52 },
      { type: "status", status: "completed", stopReason: "end_turn" }
    ])
  })

  it("aborts a streamed call still open at finishReason, at another call, and at the end of the stream", () => {
    const open = [{ functionCall: { name: "a", willContinue: true } }, { functionCall: { partialArgs: [{ jsonPath: "$.x", numberValue: 1 }], willContinue: true } }]
    const atFinish = decoder()
    const finishEvents = [...open.flatMap((part) => atFinish.push(chunk([part]))), ...atFinish.push(chunk([], "STOP")), ...atFinish.end()]
    expect(finishEvents.filter((e) => e.type === "block_abort")).toEqual([
      { type: "block_abort", index: 0, reason: "finishReason before the function call's arguments were complete" }
    ])
    expect(finishEvents.at(-1)).toEqual({ type: "status", status: "completed", stopReason: "end_turn" })

    const atNext = decoder()
    const nextEvents = [...open.flatMap((part) => atNext.push(chunk([part]))), ...atNext.push(chunk([{ functionCall: { name: "b", args: { y: 2 } } }], "STOP")), ...atNext.end()]
    expect(nextEvents.filter((e) => e.type === "block_abort").map((e) => e.index)).toEqual([0])
    expect(nextEvents.filter((e) => e.type === "block_stop").map((e) => e.index)).toEqual([1])

    const atEnd = decoder()
    const endEvents = [...open.flatMap((part) => atEnd.push(chunk([part]))), ...atEnd.end()]
    expect(endEvents.filter((e) => e.type === "block_abort").map((e) => e.index)).toEqual([0])
    expect(endEvents.at(-1)).toEqual({ type: "status", status: "failed" })
  })

  it("still refuses a name-less functionCall when no streamed call is open, and a continuation for another id", () => {
    expect(() => decoder().push(chunk([{ functionCall: { args: {} } }]))).toThrow("functionCall part without a name")
    const d = decoder()
    d.push(chunk([{ functionCall: { id: "fc_1", name: "a", willContinue: true } }]))
    expect(() => d.push(chunk([{ functionCall: { id: "fc_2", willContinue: true } }]))).toThrow(LlmProtocolError)
  })

  it("counts streamed arguments against maxArgumentBytes while they arrive", () => {
    const d = decoder(64)
    d.push(chunk([{ functionCall: { name: "write", willContinue: true } }]))
    const piece = { functionCall: { partialArgs: [{ jsonPath: "$.body", stringValue: "x".repeat(40), willContinue: true }], willContinue: true } }
    d.push(chunk([piece]))
    expect(() => d.push(chunk([piece]))).toThrow(LlmLimitExceeded)
  })

  it("decodes the same however the bytes are split", () => {
    const whole = fixture("streamed-arguments")
    const expected = run(decoder(), whole)
    fc.assert(
      fc.property(fc.uniqueArray(fc.integer({ min: 1, max: whole.length - 1 }), { maxLength: 12 }), (cuts) => {
        const parser = createSseParser()
        const d = decoder()
        const bounds = [0, ...cuts.sort((a, b) => a - b), whole.length]
        const events: Array<Event> = []
        for (let i = 1; i < bounds.length; i++) {
          for (const message of parser.feed(whole.slice(bounds[i - 1], bounds[i]))) events.push(...d.push(message))
        }
        events.push(...d.end())
        expect(withoutRawUsage(events)).toEqual(expected)
      }),
      { numRuns: 50 }
    )
  })
})

describe("Gemini parts after finishReason", () => {
  it("keeps text that follows the first finishReason; the last finishReason is the response's", () => {
    const events = run(decoder(), fixture("text-after-finish-reason"))
    const text = events.map((e) => (e.type === "block_delta" && e.delta.kind === "text" ? e.delta.text : "")).join("")
    expect(text).toBe("High tide in Brest is at 06:12, low tide at 12:31.")
    const textStart = events.findIndex((e) => e.type === "block_start" && e.block.kind === "text")
    // The server's functionResponse part between the call and the text is kept as a provider item (decision 0025).
    expect(events.slice(textStart - 2)).toEqual([
      { type: "block_stop", index: 0 },
      {
        type: "provider_output",
        index: 1,
        item: {
          type: "provider_item",
          scheme: "gemini",
          kind: "functionResponse",
          json: '{"functionResponse":{"name":"tides_server_lookup","response":{"result":"high 06:12, low 12:31"}}}'
        }
      },
      { type: "block_start", index: 2, block: { kind: "text" } },
      { type: "block_delta", index: 2, delta: { kind: "text", text: "High tide in Brest is" } },
      { type: "block_delta", index: 2, delta: { kind: "text", text: " at 06:12, low tide at 12:31." } },
      { type: "block_stop", index: 2, stopReason: "tool_use" },
      { type: "usage", inputTokens: 515, outputTokens: 71, reasoningTokens: 30, totalTokens: 586 },
      { type: "status", status: "completed", stopReason: "tool_use" }
    ])
  })

  it("maps the last finishReason", () => {
    const d = decoder()
    const events = [...d.push(chunk([{ text: "Part one." }], "STOP")), ...d.push(chunk([{ text: " Part two" }], "MAX_TOKENS")), ...d.end()]
    expect(events.filter((e) => e.type === "block_stop")).toEqual([
      { type: "block_stop", index: 0, stopReason: "end_turn" },
      { type: "block_stop", index: 1, stopReason: "max_tokens" }
    ])
    expect(events.at(-1)).toEqual({ type: "status", status: "completed", stopReason: "max_tokens" })
  })
})

describe("streamed argument builder", () => {
  const build = (pieces: ReadonlyArray<unknown>, max = 1 << 20): string => {
    const args = new GeminiPartialArgs("call_1", max)
    for (const piece of pieces) args.apply(piece)
    return args.text()
  }

  it("parses the JSONPath subset Gemini writes", () => {
    expect(parseJsonPath("$")).toEqual([])
    expect(parseJsonPath("$.a.b[0][12].c")).toEqual([{ key: "a" }, { key: "b" }, { index: 0 }, { index: 12 }, { key: "c" }])
    expect(parseJsonPath(`$['a.b']["c\\"d"]`)).toEqual([{ key: "a.b" }, { key: 'c"d' }])
    for (const bad of ["a", "$.", "$..a", "$[x]", "$[-1]", "$[1234567890]", "$['open", "$a"]) expect(() => parseJsonPath(bad)).toThrow(LlmProtocolError)
  })

  it("keeps a __proto__ key as an ordinary key, never as a prototype", () => {
    expect(build([{ jsonPath: "$.__proto__.polluted", boolValue: true }])).toBe('{"__proto__":{"polluted":true}}')
    expect(({} as Record<string, unknown>)["polluted"]).toBeUndefined()
  })

  it("refuses holes, paths through scalars, and the wrong kind of container", () => {
    expect(() => build([{ jsonPath: "$.a[1]", numberValue: 1 }])).toThrow("skips array elements")
    expect(() => build([{ jsonPath: "$.a", numberValue: 1 }, { jsonPath: "$.a.b", numberValue: 2 }])).toThrow("not an object")
    expect(() => build([{ jsonPath: "$.a[0]", numberValue: 1 }, { jsonPath: "$.a.b", numberValue: 2 }])).toThrow(LlmProtocolError)
    expect(() => build([{ jsonPath: "$", numberValue: 1 }])).toThrow("whole arguments object")
    expect(() => build([{ stringValue: "no path" }])).toThrow("without a jsonPath")
    expect(() => build([{ jsonPath: "$.a", numberValue: "1" }])).toThrow("wrong type")
  })

  it("appends string pieces only while the same path continues", () => {
    expect(
      build([
        { jsonPath: "$.a", stringValue: "x", willContinue: true },
        { jsonPath: "$.a", stringValue: "y", willContinue: true },
        { jsonPath: "$.a", stringValue: "" },
        { jsonPath: "$.b", stringValue: "1" },
        { jsonPath: "$.b", stringValue: "2" }
      ])
    ).toBe('{"a":"xy","b":"2"}')
  })

  it("builds arguments nested thousands of levels deep without recursion", () => {
    const depth = 20_000
    const text = build([{ jsonPath: `$${".a".repeat(depth)}`, numberValue: 1 }])
    expect(text).toBe(`${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`)
  })

  it("holds no more than maxArgumentBytes, whatever the pieces", () => {
    fc.assert(
      fc.property(fc.array(fc.record({ key: fc.constantFrom("a", "b", "c"), text: fc.string({ maxLength: 30 }), more: fc.boolean() }), { maxLength: 40 }), (pieces) => {
        const max = 200
        try {
          const text = build(pieces.map((p) => ({ jsonPath: `$.${p.key}`, stringValue: p.text, willContinue: p.more })), max)
          expect(Buffer.byteLength(text)).toBeLessThanOrEqual(max)
        } catch (error) {
          expect(error).toBeInstanceOf(LlmLimitExceeded)
        }
      })
    )
  })
})
