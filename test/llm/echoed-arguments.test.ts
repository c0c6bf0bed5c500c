import { describe, expect, it } from "vitest"
import { Item } from "../../src/llm/item.ts"
import type { Request } from "../../src/llm/request.ts"
import { anthropicScheme } from "../../src/llm/schemes/anthropic.ts"
import { geminiScheme } from "../../src/llm/schemes/gemini.ts"
import { openAiChatScheme } from "../../src/llm/schemes/openai-chat.ts"
import { DEFAULT_MAX_JSON_DEPTH } from "../../src/schema/json-depth.ts"

/**
 * A call whose argument text is nested far too deep stays in the history (the Worker answered it with an
 * `arguments nested deeper than N levels` error result). Formats that send arguments back as a JSON value
 * (Anthropic `input`, Gemini `args`) send `{}` for it, with a warning; text formats send the text as it was.
 */
const deep = (levels: number): string => `${'{"a":'.repeat(levels)}1${"}".repeat(levels)}`

const history = (args: string): Request => ({
  model: "m",
  items: [
    Item.userText("go"),
    Item.functionCall("call_1", "get_weather", args),
    Item.functionCallOutput("call_1", `arguments nested deeper than ${DEFAULT_MAX_JSON_DEPTH} levels`, true)
  ],
  tools: [],
  config: {}
})

describe("too-deep argument text in history", () => {
  it.each([
    ["anthropic", anthropicScheme, `"input":{}`],
    ["gemini", geminiScheme, `"args":{}`]
  ] as const)("%s: goes back as an empty object, with a warning", (_, scheme, expected) => {
    const request = history(deep(50_000))
    const body = scheme.encodeRequest(request)
    expect(body).toContain(expected)
    expect(body.length).toBeLessThan(2000)
    expect(JSON.parse(body)).toBeTypeOf("object")
    expect(scheme.validate(request).map((w) => w.message)).toContainEqual(expect.stringContaining(`nested deeper than ${DEFAULT_MAX_JSON_DEPTH} levels`))
  })

  it.each([
    ["anthropic", anthropicScheme, `"input":${deep(DEFAULT_MAX_JSON_DEPTH)}`],
    ["gemini", geminiScheme, `"args":${deep(DEFAULT_MAX_JSON_DEPTH)}`]
  ] as const)("%s: arguments at the bound go back verbatim", (_, scheme, expected) => {
    const request = history(deep(DEFAULT_MAX_JSON_DEPTH))
    expect(scheme.encodeRequest(request)).toContain(expected)
    expect(scheme.validate(request)).toEqual([])
  })

  it("chat: the text goes back as text (a string value cannot overflow anything)", () => {
    const args = deep(50_000)
    const body = openAiChatScheme.encodeRequest(history(args))
    expect(body).toContain(JSON.stringify(args))
  })
})
