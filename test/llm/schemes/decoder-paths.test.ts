import fc from "fast-check"
import { describe, expect, it } from "vitest"
import type { Event } from "../../../src/llm/event.ts"
import { boundedRawUsage } from "../../../src/llm/raw-usage.ts"
import type { SseMessage, StreamDecoder } from "../../../src/llm/scheme.ts"
import { createAnthropicDecoder } from "../../../src/llm/schemes/anthropic-decoder.ts"
import { createGeminiDecoder, GENERATED_CALL_ID_PREFIX } from "../../../src/llm/schemes/gemini-decoder.ts"
import { openAiChatScheme } from "../../../src/llm/schemes/openai-chat.ts"
import { openAiResponsesScheme } from "../../../src/llm/schemes/openai-responses.ts"
import { createSseParser, parseSseText } from "../../../src/llm/sse.ts"
import { createUtf8Reads } from "../../../src/llm/transport/utf8-reads.ts"
import { cutBytes } from "../../support/cut.ts"

/**
 * Every decoder fed as the transport feeds it (read-by-read UTF-8 decoding, the SSE parser per read) must give
 * the events of the reference path: the streaming TextDecoder and the whole text parsed at once (decision 0075),
 * over generated streams cut into random reads. Gemini's usage, now gathered in a map, must be the fold the
 * decoder made before.
 */

/** Text a model may send: any code points, quotes, backslashes, control characters, lone surrogates. */
const text = fc.oneof(fc.string({ unit: "binary", maxLength: 12 }), fc.constantFrom('"', "\\", '\\"', "\n", "\u0000", "\ud800", "é😀"), fc.string({ maxLength: 8 }))


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

/** The transport's path: read-by-read UTF-8, the SSE parser per read. */
const transportPath = (decoder: StreamDecoder, reads: ReadonlyArray<Uint8Array>): Outcome => {
  const utf8 = createUtf8Reads()
  const sse = createSseParser()
  return drive(decoder, (function* () {
    for (const read of reads) yield* sse.feed(utf8.decode(read))
  })())
}

/** The reference path: the streaming TextDecoder, the whole text parsed at once. */
const referencePath = (decoder: StreamDecoder, reads: ReadonlyArray<Uint8Array>): Outcome => {
  const utf8 = new TextDecoder()
  const whole = reads.map((read) => utf8.decode(read, { stream: true })).join("")
  return drive(decoder, parseSseText(whole))
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
        const reads = cutBytes(sse(events), points)
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
        const reads = cutBytes(new TextEncoder().encode(new TextDecoder().decode(sse(events)) + "data: [DONE]\n\n"), points)
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
        const reads = cutBytes(sse(events), points)
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
        const reads = cutBytes(sse(events), points)
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

describe("a chat chunk's data is trimmed as `trim()` trims it, without the call when nothing would go (property)", () => {
  /** Whitespace `trim()` removes (JSON's four, and Unicode's that JSON.parse refuses) and characters it keeps. */
  const pad = fc.array(fc.constantFrom(" ", "\t", "\n", "\r", "\u00a0", "\ufeff", "\u2028", "\u3000", "\u000b", "x", "\u0000", "é"), { maxLength: 3 }).map((cs) => cs.join(""))
  const body = fc.oneof(
    fc.constant("[DONE]"),
    text.map((t) => JSON.stringify({ choices: [{ index: 0, delta: { content: t }, finish_reason: null }] })),
    fc.constant(JSON.stringify({ choices: [{ index: 0, delta: {}, finish_reason: "stop" }] })),
    text
  )
  it("openai-chat", () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(pad, body, pad), { minLength: 1, maxLength: 8 }), (chunks) => {
        const padded = chunks.map(([before, data, after]) => ({ event: "message", data: `${before}${data}${after}` }))
        const reference = padded.map((message) => ({ ...message, data: message.data.trim() }))
        const strip = (outcome: Outcome) => ({ ...outcome, events: outcome.events.map((e) => (e.type === "block_start" && e.block.kind === "tool_use" ? { ...e, block: { ...e.block, id: "" } } : e)) })
        expect(strip(drive(openAiChatScheme.decoder(), padded))).toEqual(strip(drive(openAiChatScheme.decoder(), reference)))
      }),
      { numRuns: 300 }
    )
  })
})
