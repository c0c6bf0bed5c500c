import fc from "fast-check"
import { describe, expect, it } from "vitest"
import type { Event } from "../../../src/llm/event.ts"
import type { Request } from "../../../src/llm/request.ts"
import type { Scheme } from "../../../src/llm/scheme.ts"
import { anthropicScheme } from "../../../src/llm/schemes/anthropic.ts"
import { geminiScheme } from "../../../src/llm/schemes/gemini.ts"
import { openAiChatScheme } from "../../../src/llm/schemes/openai-chat.ts"
import { openAiResponsesScheme } from "../../../src/llm/schemes/openai-responses.ts"
import { parseSseText } from "../../../src/llm/sse.ts"
import { MAX_RESPONSE_META_CHARS } from "../../../src/llm/response-meta.ts"

/**
 * The model and response id each provider states at the start of a response reach the `started` status. The
 * streams are written here in each provider's wire shape, with the model and id as parameters (JSON values, so
 * a test can put a number or a huge string where the provider puts its strings).
 */

const request: Request = { model: "requested-alias", items: [], tools: [], config: {} }

const data = (value: unknown): string => `data: ${JSON.stringify(value)}\n\n`
const named = (name: string, value: unknown): string => `event: ${name}\n${data(value)}`

const chatChunk = (model: unknown, id: unknown, delta: object, finish: string | null) => ({
  id,
  object: "chat.completion.chunk",
  created: 1767225600,
  model,
  system_fingerprint: "fp_7c9a1d2b3e",
  choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }]
})

const chat = (model: unknown, id: unknown): string =>
  data(chatChunk(model, id, { role: "assistant", content: "", refusal: null }, null)) +
  data(chatChunk(model, id, { content: "Hi." }, null)) +
  data(chatChunk(model, id, {}, "stop")) +
  "data: [DONE]\n\n"

const responseObject = (model: unknown, id: unknown, status: string, output: ReadonlyArray<unknown>) => ({
  id,
  object: "response",
  created_at: 1767225600,
  status,
  error: null,
  incomplete_details: null,
  model,
  output,
  parallel_tool_calls: true,
  ...(status === "completed" ? { usage: { input_tokens: 9, output_tokens: 2, total_tokens: 11 } } : { usage: null })
})

const responses = (model: unknown, id: unknown): string => {
  const item = { id: "msg_0a1b2c", type: "message", status: "in_progress", role: "assistant", content: [] }
  const part = { type: "output_text", annotations: [], text: "Hi." }
  const done = { ...item, status: "completed", content: [part] }
  return (
    named("response.created", { type: "response.created", sequence_number: 0, response: responseObject(model, id, "in_progress", []) }) +
    named("response.in_progress", { type: "response.in_progress", sequence_number: 1, response: responseObject(model, id, "in_progress", []) }) +
    named("response.output_item.added", { type: "response.output_item.added", sequence_number: 2, output_index: 0, item }) +
    named("response.content_part.added", { type: "response.content_part.added", sequence_number: 3, item_id: item.id, output_index: 0, content_index: 0, part: { ...part, text: "" } }) +
    named("response.output_text.delta", { type: "response.output_text.delta", sequence_number: 4, item_id: item.id, output_index: 0, content_index: 0, delta: "Hi." }) +
    named("response.output_text.done", { type: "response.output_text.done", sequence_number: 5, item_id: item.id, output_index: 0, content_index: 0, text: "Hi." }) +
    named("response.content_part.done", { type: "response.content_part.done", sequence_number: 6, item_id: item.id, output_index: 0, content_index: 0, part }) +
    named("response.output_item.done", { type: "response.output_item.done", sequence_number: 7, output_index: 0, item: done }) +
    named("response.completed", { type: "response.completed", sequence_number: 8, response: responseObject(model, id, "completed", [done]) })
  )
}

const anthropic = (model: unknown, id: unknown): string =>
  named("message_start", {
    type: "message_start",
    message: { id, type: "message", role: "assistant", model, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 9, output_tokens: 1 } }
  }) +
  named("content_block_start", { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }) +
  named("ping", { type: "ping" }) +
  named("content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Hi." } }) +
  named("content_block_stop", { type: "content_block_stop", index: 0 }) +
  named("message_delta", { type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: 2 } }) +
  named("message_stop", { type: "message_stop" })

const gemini = (model: unknown, id: unknown): string =>
  data({
    candidates: [{ content: { parts: [{ text: "Hi" }], role: "model" }, index: 0 }],
    usageMetadata: { promptTokenCount: 9, candidatesTokenCount: 1, totalTokenCount: 10 },
    modelVersion: model,
    responseId: id
  }) +
  data({
    candidates: [{ content: { parts: [{ text: "." }], role: "model" }, finishReason: "STOP", index: 0 }],
    usageMetadata: { promptTokenCount: 9, candidatesTokenCount: 2, totalTokenCount: 11 },
    modelVersion: model,
    responseId: id
  })

interface Format {
  readonly name: string
  readonly scheme: Scheme
  readonly stream: (model: unknown, id: unknown) => string
  readonly model: string
  readonly id: string
}

const formats: ReadonlyArray<Format> = [
  { name: "openai chat", scheme: openAiChatScheme, stream: chat, model: "gpt-4o-2024-08-06", id: "chatcmpl-Bx7aQm2LkP0wN4sV9tY1uZ3c" },
  { name: "openai responses", scheme: openAiResponsesScheme, stream: responses, model: "gpt-4o-2024-08-06", id: "resp_67ccd2bed1ec8190b14f964abc054267" },
  { name: "anthropic", scheme: anthropicScheme, stream: anthropic, model: "claude-sonnet-4-5-20250929", id: "msg_01Ka7bQwErTyUi9oPlMnBvCx" },
  { name: "gemini", scheme: geminiScheme, stream: gemini, model: "gemini-2.5-flash-preview-05-20", id: "Kx9aaQ2bC3dE4fG5hI6jK7l" }
]

const decode = (format: Format, model: unknown, id: unknown): Array<Event> => {
  const decoder = format.scheme.decoder(request)
  return [...parseSseText(format.stream(model, id)).flatMap((message) => decoder.push(message)), ...decoder.end()]
}

const statuses = (events: ReadonlyArray<Event>) => events.filter((event) => event.type === "status")

describe.each(formats)("the model and response id on the started status: $name", (format) => {
  it("carries the model the provider names (not the one requested) and its response id, once, on the first status", () => {
    const events = decode(format, format.model, format.id)
    expect(events[0]).toEqual({ type: "status", status: "started", model: format.model, responseId: format.id })
    // The other status events stay as they were: the fields are stated once per response.
    expect(statuses(events).slice(1)).toEqual([{ type: "status", status: "completed", stopReason: "end_turn" }])
  })

  it("leaves out a value that is not a string, or is empty, and still decodes the response", () => {
    for (const [model, id] of [[42, { id: "x" }], [null, ""], [["gpt"], true]] as const) {
      const events = decode(format, model, id)
      expect(events[0]).toEqual({ type: "status", status: "started" })
      expect(statuses(events).at(-1)).toEqual({ type: "status", status: "completed", stopReason: "end_turn" })
    }
    const events = decode(format, 7, format.id)
    expect(events[0]).toEqual({ type: "status", status: "started", responseId: format.id })
  })

  it(`cuts a model name or id longer than ${MAX_RESPONSE_META_CHARS} characters, never half a surrogate pair`, () => {
    const huge = "m".repeat(1_000_000)
    const events = decode(format, huge, `${"i".repeat(MAX_RESPONSE_META_CHARS - 1)}😀tail`)
    expect(events[0]).toEqual({
      type: "status",
      status: "started",
      model: "m".repeat(MAX_RESPONSE_META_CHARS),
      responseId: "i".repeat(MAX_RESPONSE_META_CHARS - 1)
    })
  })

  it("never throws on any JSON value in place of the model and id; what passes is a bounded string", () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 3 }), fc.jsonValue({ maxDepth: 3 }), (model, id) => {
        const first = decode(format, model, id)[0]
        expect(first).toMatchObject({ type: "status", status: "started" })
        for (const value of [first?.type === "status" ? first.model : undefined, first?.type === "status" ? first.responseId : undefined]) {
          if (value !== undefined) {
            expect(typeof value).toBe("string")
            expect(value.length).toBeLessThanOrEqual(MAX_RESPONSE_META_CHARS)
          }
        }
        if (typeof model === "string" && model !== "" && model.length <= MAX_RESPONSE_META_CHARS && first?.type === "status") expect(first.model).toBe(model)
      }),
      { numRuns: 60 }
    )
  })
})
