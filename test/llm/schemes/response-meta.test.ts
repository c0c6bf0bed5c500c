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
import { anthropicStream, chatStream, geminiStream, responsesStream } from "../../support/response-meta-sse.ts"

/** The model and response id each provider states at the start of a response reach the `started` status. */

const request: Request = { model: "requested-alias", items: [], tools: [], config: {} }

interface Format {
  readonly name: string
  readonly scheme: Scheme
  readonly stream: (model: unknown, id: unknown) => string
  readonly model: string
  readonly id: string
}

const formats: ReadonlyArray<Format> = [
  { name: "openai chat", scheme: openAiChatScheme, stream: chatStream, model: "gpt-4o-2024-08-06", id: "chatcmpl-Bx7aQm2LkP0wN4sV9tY1uZ3c" },
  { name: "openai responses", scheme: openAiResponsesScheme, stream: responsesStream, model: "gpt-4o-2024-08-06", id: "resp_67ccd2bed1ec8190b14f964abc054267" },
  { name: "anthropic", scheme: anthropicScheme, stream: anthropicStream, model: "claude-sonnet-4-5-20250929", id: "msg_01Ka7bQwErTyUi9oPlMnBvCx" },
  { name: "gemini", scheme: geminiScheme, stream: geminiStream, model: "gemini-2.5-flash-preview-05-20", id: "Kx9aaQ2bC3dE4fG5hI6jK7l" }
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
