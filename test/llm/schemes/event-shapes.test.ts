import { isDeepStrictEqual } from "node:util"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import type { Event } from "../../../src/llm/event.ts"
import { boundedRawUsage } from "../../../src/llm/raw-usage.ts"
import type { SseMessage, StreamDecoder } from "../../../src/llm/scheme.ts"
import { anthropicDeltaShape } from "../../../src/llm/schemes/anthropic-delta-shape.ts"
import { createAnthropicDecoder } from "../../../src/llm/schemes/anthropic-decoder.ts"
import { createGeminiDecoder, GENERATED_CALL_ID_PREFIX } from "../../../src/llm/schemes/gemini-decoder.ts"
import { geminiTextShape } from "../../../src/llm/schemes/gemini-text-shape.ts"
import { chatDeltaShape, responsesDeltaShape } from "../../../src/llm/schemes/openai-delta-shapes.ts"
import { openAiChatScheme } from "../../../src/llm/schemes/openai-chat.ts"
import { openAiResponsesScheme } from "../../../src/llm/schemes/openai-responses.ts"
import { createSseParser, parseSseText } from "../../../src/llm/sse.ts"
import { createUtf8Reads } from "../../../src/llm/transport/utf8-reads.ts"

/**
 * The shape recognisers (decision 0076) must give exactly what JSON.parse gives, or nothing. And a decoder fed
 * through the transport's path (read-by-read UTF-8, SSE parser, shapes) must give the events the reference path
 * gives: the streaming TextDecoder, the whole text parsed at once, and every event's data parsed by JSON.parse
 * (a leading space, which JSON ignores, keeps every shape from matching).
 */

const FAILS = Symbol("JSON.parse throws")
const parsed = (data: string): unknown => {
  try {
    return JSON.parse(data)
  } catch {
    return FAILS
  }
}

const agreesWithJsonParse = (shape: (data: string) => unknown, data: string): boolean => {
  const fast = shape(data)
  if (fast === undefined) return true
  const reference = parsed(data)
  return reference !== FAILS && isDeepStrictEqual(fast, reference) && JSON.stringify(fast) === JSON.stringify(reference)
}

/** Text a model may send: any code points, quotes, backslashes, control characters, lone surrogates. */
const text = fc.oneof(fc.string({ unit: "binary", maxLength: 12 }), fc.constantFrom('"', "\\", '\\"', "\n", "\u0000", "\ud800", "é😀"), fc.string({ maxLength: 8 }))
/** A string literal as JSON writes it, or something near one that is not. */
const literal = fc.oneof(
  text.map((s) => JSON.stringify(s)),
  text.map((s) => `"${s}"`),
  text.map((s) => `"${s}\\"`),
  fc.constantFrom('"a","text":"b"', '"a" ', " \"a\"", "null", "1", '"\\u00e9"', '"\\x"', '"\\u12"')
)
const pick = <T>(good: T, ...bad: ReadonlyArray<T>) => fc.oneof({ weight: 4, arbitrary: fc.constant(good) }, fc.constantFrom(...bad))

describe("anthropicDeltaShape", () => {
  const data = fc
    .tuple(
      pick('{"type":"content_block_delta","index":', '{"type": "content_block_delta","index":', '{"index":0,"type":"content_block_delta","index":'),
      fc.oneof(fc.nat(2000).map(String), fc.constantFrom("00", "01", "-1", "1e2", "1.0", "1234567890", "")),
      pick(',"delta":{"type":"', ',"delta": {"type":"', ',"extra":1,"delta":{"type":"'),
      fc.constantFrom('text_delta","text":', 'input_json_delta","partial_json":', 'thinking_delta","thinking":', 'signature_delta","signature":', 'text_delta","thinking":'),
      literal,
      pick("}}", "}", "}}}", ',"x":1}}', "} }", '},"index":9}')
    )
    .map((parts) => parts.join(""))

  it("gives what JSON.parse gives, or nothing (property)", () => {
    fc.assert(fc.property(data, (d) => agreesWithJsonParse(anthropicDeltaShape, d)), { numRuns: 3000 })
  })

  it("recognises the compact deltas Anthropic sends", () => {
    fc.assert(
      fc.property(fc.nat(100_000), text, fc.constantFrom("text", "partial_json", "thinking"), (index, value, key) => {
        const type = key === "text" ? "text_delta" : key === "partial_json" ? "input_json_delta" : "thinking_delta"
        const event = { type: "content_block_delta", index, delta: { type, [key]: value } }
        expect(anthropicDeltaShape(JSON.stringify(event))).toStrictEqual(JSON.parse(JSON.stringify(event)))
      })
    )
  })
})

describe("geminiTextShape", () => {
  const usage = fc.record({ promptTokenCount: fc.nat(), candidatesTokenCount: fc.nat(), totalTokenCount: fc.nat() }, { requiredKeys: [] })
  const rest = fc.oneof(
    fc.constant("}"),
    usage.map((u) => `,"usageMetadata":${JSON.stringify(u)},"modelVersion":"gemini-2.5-flash","responseId":"r1"}`),
    fc.dictionary(fc.oneof(fc.string({ maxLength: 6 }), fc.constantFrom("__proto__", "candidates", "constructor")), fc.jsonValue({ maxDepth: 2 }), { minKeys: 1, maxKeys: 3 }).map(
      (members) => `,${JSON.stringify(members).slice(1)}`
    ),
    fc.constantFrom(",}", ',"a":1,}', ' ,"a":1}', ',"a":1} ', "", "}}", ',"a":1', ',"__proto__":{"x":1}}', ',"candidates":[]}')
  )
  const data = fc
    .tuple(
      pick('{"candidates":[{"content":{"parts":[{"text":', '{"candidates":[{"content":{"parts":[{"thought":true,"text":', '{"candidates": [{"content":{"parts":[{"text":'),
      literal,
      pick('}],"role":"model"},"index":0}]', '}],"role":"model"},"finishReason":"STOP","index":0}]', '},{"text":"b"}],"role":"model"},"index":0}]', '}],"role":"model"},"index":1}]'),
      rest
    )
    .map((parts) => parts.join(""))

  it("gives what JSON.parse gives, or nothing (property)", () => {
    fc.assert(fc.property(data, (d) => agreesWithJsonParse(geminiTextShape, d)), { numRuns: 3000 })
  })

  it("recognises the compact text chunks Gemini sends", () => {
    fc.assert(
      fc.property(text, usage, (value, usageMetadata) => {
        const chunk = { candidates: [{ content: { parts: [{ text: value }], role: "model" }, index: 0 }], usageMetadata, modelVersion: "m" }
        expect(geminiTextShape(JSON.stringify(chunk))).toStrictEqual(JSON.parse(JSON.stringify(chunk)))
      })
    )
  })
})

/** A genuine compact event text with a few random edits: a character inserted, deleted or replaced. */
const edited = (genuine: fc.Arbitrary<string>) =>
  fc
    .tuple(genuine, fc.array(fc.tuple(fc.nat(), fc.nat(2), fc.constantFrom(" ", '"', "\\", ",", "}", "{", "[", "]", ":", "0", "1", "a", "-", "\u0001")), { maxLength: 3 }))
    .map(([text, edits]) =>
      edits.reduce((t, [at, how, c]) => {
        const i = at % (t.length + 1)
        return how === 0 ? t.slice(0, i) + c + t.slice(i) : how === 1 ? t.slice(0, i) + t.slice(i + 1) : t.slice(0, i) + c + t.slice(i + 1)
      }, text)
    )

const chatChunk = fc
  .tuple(text, fc.nat(9), fc.boolean(), fc.option(fc.constantFrom("default", "auto")), fc.nat(2_000_000_000))
  .map(([value, index, content, tier, created]) =>
    JSON.stringify({
      id: "chatcmpl-1",
      object: "chat.completion.chunk",
      created,
      model: "gpt-x",
      ...(tier === null ? {} : { service_tier: tier }),
      system_fingerprint: "fp_1",
      choices: [{ index: 0, delta: content ? { content: value } : { tool_calls: [{ index, function: { arguments: value } }] }, logprobs: null, finish_reason: null }],
      usage: null,
      obfuscation: "ab"
    })
  )
const responsesEvent = fc.tuple(text, fc.nat(20), fc.boolean(), fc.nat(9999)).map(([value, index, isText, sequence]) =>
  JSON.stringify(
    isText
      ? { type: "response.output_text.delta", item_id: "msg_1", output_index: index, content_index: 0, delta: value, logprobs: [], obfuscation: "Qk", sequence_number: sequence }
      : { type: "response.function_call_arguments.delta", item_id: "fc_1", output_index: index, delta: value, obfuscation: "Qk", sequence_number: sequence }
  )
)

describe("OpenAI delta shapes", () => {
  it("give what JSON.parse gives, or nothing, on genuine and edited events (property)", () => {
    fc.assert(fc.property(edited(chatChunk), (d) => agreesWithJsonParse(chatDeltaShape, d)), { numRuns: 3000 })
    fc.assert(fc.property(edited(responsesEvent), (d) => agreesWithJsonParse(responsesDeltaShape, d)), { numRuns: 3000 })
  })

  it("recognise the compact deltas OpenAI sends", () => {
    // OpenAI's own order, with service_tier, and a call among the first eight (the shapes kept ready).
    const openAiOwn = chatChunk.filter((d) => d.includes('"service_tier"') && !/"tool_calls":\[\{"index":[89]/.test(d))
    fc.assert(
      fc.property(openAiOwn, (d) => {
        expect(chatDeltaShape(d)).toStrictEqual(JSON.parse(d))
      })
    )
    fc.assert(
      fc.property(responsesEvent, (d) => {
        expect(responsesDeltaShape(d)).toStrictEqual(JSON.parse(d))
      })
    )
  })

  it("edited Anthropic and Gemini events too (property)", () => {
    const anthropic = fc.tuple(text, fc.nat(9)).map(([value, index]) => JSON.stringify({ type: "content_block_delta", index, delta: { type: "text_delta", text: value } }))
    const gemini = fc.tuple(text, fc.nat(99)).map(([value, n]) =>
      JSON.stringify({ candidates: [{ content: { parts: [{ text: value }], role: "model" }, index: 0 }], usageMetadata: { promptTokenCount: n, promptTokensDetails: [{ modality: "TEXT", tokenCount: n }] }, modelVersion: "g" })
    )
    fc.assert(fc.property(edited(anthropic), (d) => agreesWithJsonParse(anthropicDeltaShape, d)), { numRuns: 2000 })
    fc.assert(fc.property(edited(gemini), (d) => agreesWithJsonParse(geminiTextShape, d)), { numRuns: 2000 })
  })
})

/** Cuts bytes at the given points into consecutive reads. */
const cut = (bytes: Uint8Array, points: ReadonlyArray<number>): ReadonlyArray<Uint8Array> => {
  const at = [...new Set(points.map((p) => p % (bytes.length + 1)))].sort((a, b) => a - b)
  const reads: Array<Uint8Array> = []
  let from = 0
  for (const p of at) {
    reads.push(bytes.subarray(from, p))
    from = p
  }
  reads.push(bytes.subarray(from))
  return reads
}

type Outcome = { readonly events: ReadonlyArray<Event>; readonly error?: string }

const drive = (decoder: StreamDecoder, messages: Iterable<SseMessage>): Outcome => {
  const events: Array<Event> = []
  try {
    for (const message of messages) events.push(...decoder.push(message))
    events.push(...decoder.end())
    return { events }
  } catch (error) {
    return { events, error: (error as Error).message }
  }
}

/** The transport's path: read-by-read UTF-8, the SSE parser per read, the decoder with its shapes. */
const transportPath = (decoder: StreamDecoder, reads: ReadonlyArray<Uint8Array>): Outcome => {
  const utf8 = createUtf8Reads()
  const sse = createSseParser()
  return drive(decoder, (function* () {
    for (const read of reads) yield* sse.feed(utf8.decode(read))
  })())
}

/** The reference path: the streaming TextDecoder, the whole text at once, every data parsed by JSON.parse. */
const referencePath = (decoder: StreamDecoder, reads: ReadonlyArray<Uint8Array>): Outcome => {
  const utf8 = new TextDecoder()
  const whole = reads.map((read) => utf8.decode(read, { stream: true })).join("")
  return drive(decoder, parseSseText(whole).map((m) => ({ ...m, data: ` ${m.data}` })))
}

const sse = (events: ReadonlyArray<{ readonly name?: string; readonly data: unknown }>): Uint8Array =>
  new TextEncoder().encode(events.map((e) => `${e.name === undefined ? "" : `event: ${e.name}\n`}data: ${JSON.stringify(e.data)}\n\n`).join(""))

const cuts = fc.array(fc.nat(), { maxLength: 12 })

describe("decoders on the transport's path against the reference path (property)", () => {
  it("anthropic", () => {
    const delta = fc.oneof(
      text.map((t) => ({ type: "text_delta", text: t })),
      text.map((t) => ({ type: "thinking_delta", thinking: t })),
      text.map((t) => ({ type: "input_json_delta", partial_json: t }))
    )
    const stream = fc.record({ deltas: fc.array(fc.tuple(fc.nat(2), delta), { maxLength: 12 }), stops: fc.boolean() })
    fc.assert(
      fc.property(stream, cuts, ({ deltas, stops }, points) => {
        const events = [
          { name: "message_start", data: { type: "message_start", message: { id: "msg_1", usage: { input_tokens: 3, output_tokens: 1 } } } },
          { name: "content_block_start", data: { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } } },
          { name: "content_block_start", data: { type: "content_block_start", index: 1, content_block: { type: "thinking", thinking: "" } } },
          { name: "content_block_start", data: { type: "content_block_start", index: 2, content_block: { type: "tool_use", id: "toolu_1", name: "f", input: {} } } },
          ...deltas.map(([index, d]) => ({ name: "content_block_delta", data: { type: "content_block_delta", index, delta: d } })),
          ...(stops ? [0, 1, 2].map((index) => ({ name: "content_block_stop", data: { type: "content_block_stop", index } })) : []),
          { name: "message_delta", data: { type: "message_delta", delta: { stop_reason: "end_turn" }, usage: { output_tokens: 9 } } },
          { name: "message_stop", data: { type: "message_stop" } }
        ]
        const reads = cut(sse(events), points)
        expect(transportPath(createAnthropicDecoder(), reads)).toEqual(referencePath(createAnthropicDecoder(), reads))
      }),
      { numRuns: 300 }
    )
  })

  it("openai-chat", () => {
    const step = fc.tuple(fc.boolean(), fc.nat(1), text)
    fc.assert(
      fc.property(fc.array(step, { maxLength: 12 }), cuts, (steps, points) => {
        const chunk = (delta: unknown, finish: string | null = null) => ({
          id: "chatcmpl-1",
          object: "chat.completion.chunk",
          created: 1767225600,
          model: "gpt-x",
          service_tier: "default",
          system_fingerprint: "fp_1",
          choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
          usage: null,
          obfuscation: "ab"
        })
        const events = [
          { data: chunk({ role: "assistant", content: "" }) },
          { data: chunk({ tool_calls: [{ index: 0, id: "call_0", type: "function", function: { name: "f", arguments: "" } }] }) },
          { data: chunk({ tool_calls: [{ index: 1, id: "call_1", type: "function", function: { name: "g", arguments: "" } }] }) },
          ...steps.map(([content, index, value]) => ({ data: chunk(content ? { content: value } : { tool_calls: [{ index, function: { arguments: value } }] }) })),
          { data: chunk({}, "tool_calls") }
        ]
        const reads = cut(new TextEncoder().encode(new TextDecoder().decode(sse(events)) + "data: [DONE]\n\n"), points)
        expect(transportPath(openAiChatScheme.decoder(), reads)).toEqual(referencePath(openAiChatScheme.decoder(), reads))
      }),
      { numRuns: 200 }
    )
  })

  it("openai-responses", () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.boolean(), text), { maxLength: 12 }), cuts, (steps, points) => {
        let sequence = 0
        const named = (data: Record<string, unknown>) => ({ name: data["type"] as string, data: { ...data, sequence_number: sequence++ } })
        const events = [
          named({ type: "response.created", response: { id: "resp_1", status: "in_progress", output: [] } }),
          named({ type: "response.output_item.added", output_index: 0, item: { id: "msg_1", type: "message", status: "in_progress", content: [], role: "assistant" } }),
          named({ type: "response.content_part.added", item_id: "msg_1", output_index: 0, content_index: 0, part: { type: "output_text", annotations: [], text: "" } }),
          named({ type: "response.output_item.added", output_index: 1, item: { id: "fc_1", type: "function_call", status: "in_progress", arguments: "", call_id: "call_1", name: "f" } }),
          ...steps.map(([isText, value]) =>
            named(
              isText
                ? { type: "response.output_text.delta", item_id: "msg_1", output_index: 0, content_index: 0, delta: value, logprobs: [], obfuscation: "Qk" }
                : { type: "response.function_call_arguments.delta", item_id: "fc_1", output_index: 1, delta: value, obfuscation: "Qk" }
            )
          ),
          named({ type: "response.completed", response: { id: "resp_1", status: "completed", output: [], usage: { input_tokens: 1, output_tokens: 2, total_tokens: 3 } } })
        ]
        const reads = cut(sse(events), points)
        expect(transportPath(openAiResponsesScheme.decoder(), reads)).toEqual(referencePath(openAiResponsesScheme.decoder(), reads))
      }),
      { numRuns: 200 }
    )
  })

  it("gemini, usage merged from every chunk as before", () => {
    const usage = fc.oneof(
      fc.record({ promptTokenCount: fc.nat(99), candidatesTokenCount: fc.option(fc.nat(99)), totalTokenCount: fc.nat(200), thoughtsTokenCount: fc.nat(9) }, { requiredKeys: [] }),
      fc.constant({ trafficType: "ON_DEMAND" }),
      fc.constant(JSON.parse('{"__proto__":1,"promptTokenCount":2}') as Record<string, unknown>),
      fc.constant(undefined)
    )
    const chunk = fc.tuple(
      fc.oneof(
        text.map((t) => [{ text: t }]),
        text.map((t) => [{ text: t, thought: true }]),
        fc.constant([{ functionCall: { name: "f", args: { a: 1 } } }])
      ),
      usage
    )
    fc.assert(
      fc.property(fc.array(chunk, { maxLength: 10 }), cuts, (chunks, points) => {
        const events = [
          ...chunks.map(([parts, usageMetadata]) => ({
            data: { candidates: [{ content: { parts, role: "model" }, index: 0 }], ...(usageMetadata === undefined ? {} : { usageMetadata }), modelVersion: "g", responseId: "r" }
          })),
          { data: { candidates: [{ content: { parts: [{ text: "" }], role: "model" }, finishReason: "STOP", index: 0 }] } }
        ]
        const reads = cut(sse(events), points)
        const ids = () => {
          let n = 0
          return () => `${GENERATED_CALL_ID_PREFIX}${++n}`
        }
        const ours = transportPath(createGeminiDecoder({ newCallId: ids() }), reads)
        expect(ours).toEqual(referencePath(createGeminiDecoder({ newCallId: ids() }), reads))
        // The usage reported is the fold the decoder made before the map: later non-null fields win.
        const snapshots = chunks.map(([, u]) => u).filter((u) => u !== undefined)
        const fold = snapshots.reduce<Record<string, unknown> | undefined>(
          (base, next) => Object.fromEntries([...Object.entries(base ?? {}), ...Object.entries(next)].filter((e) => e[1] !== null && e[1] !== undefined)),
          undefined
        )
        const reported = ours.events.find((e) => e.type === "usage")
        expect(reported?.type === "usage" ? reported.raw : undefined).toEqual(fold === undefined ? undefined : boundedRawUsage(JSON.parse(JSON.stringify(fold))))
      }),
      { numRuns: 300 }
    )
  })
})
