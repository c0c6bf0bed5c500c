import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { Item } from "../../src/llm/item.ts"
import type { Request, RequestConfig, ToolSpec } from "../../src/llm/request.ts"
import type { Scheme } from "../../src/llm/scheme.ts"
import { anthropicScheme, uncachedAnthropicScheme } from "../../src/llm/schemes/anthropic.ts"
import { makeGeminiScheme, uncachedGeminiScheme } from "../../src/llm/schemes/gemini.ts"
import { makeOpenAiChatScheme, uncachedOpenAiChatScheme } from "../../src/llm/schemes/openai-chat.ts"
import { openAiResponsesScheme, uncachedOpenAiResponsesScheme } from "../../src/llm/schemes/openai-responses.ts"
import { ownItem } from "../../src/worker/owned-items.ts"
import { readFile, weather } from "./schemes/support/tool-specs.ts"

/**
 * The envelope (everything before the history) is printed once per config, tools, model and prompt (decision
 * 0085): every reuse must give the bytes a fresh print gives, and a config that can still change must be
 * printed afresh.
 */

const deepFreeze = <T>(value: T): T => {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    for (const child of Object.values(value)) deepFreeze(child)
    Object.freeze(value)
  }
  return value
}

const frozenTools = deepFreeze([readFile, weather])
const otherTools = deepFreeze([weather])
const items = [ownItem(Item.userText("hello")), ownItem(Item.assistantText("hi"))]

const request = (config: RequestConfig, overrides: Partial<Request> = {}): Request => ({
  model: "claude-test",
  systemPrompt: "Be brief.",
  items,
  tools: frozenTools,
  config,
  ...overrides
})

/** Each format's cached scheme and the uncached one it must equal. */
const formats: ReadonlyArray<readonly [Scheme, Scheme]> = [
  [anthropicScheme, uncachedAnthropicScheme],
  [makeOpenAiChatScheme({ maxTokensField: "max_tokens" }), uncachedOpenAiChatScheme({ maxTokensField: "max_tokens" })],
  [openAiResponsesScheme, uncachedOpenAiResponsesScheme],
  [makeGeminiScheme(), uncachedGeminiScheme()]
]

const same = (r: Request): void => {
  for (const [cached, uncached] of formats) expect(cached.encodeRequest(r)).toBe(uncached.encodeRequest(r))
}

describe("request envelopes kept per config", () => {
  it("reuses nothing that differs: model, prompt, tools, prompt-cache prefix (property)", () => {
    const configs: ReadonlyArray<RequestConfig> = [
      Object.freeze({}),
      deepFreeze({ maxTokens: 512, temperature: 0.2, stopSequences: ["END"] }),
      deepFreeze({ toolChoice: { type: "tool", name: "files.read" }, parallelToolCalls: false }),
      deepFreeze({ reasoning: { budgetTokens: 2048 }, responseFormat: { type: "json_schema", name: "a", schema: { type: "object" } } })
    ]
    const tools: ReadonlyArray<ReadonlyArray<ToolSpec>> = [frozenTools, otherTools, Object.freeze([])]
    const step = fc.record({
      config: fc.constantFrom(...configs),
      model: fc.constantFrom("claude-test", "claude-other"),
      systemPrompt: fc.constantFrom(undefined, "", "Be brief.", 'Say "hi"\n😀'),
      tools: fc.constantFrom(...tools),
      locked: fc.boolean()
    })
    fc.assert(
      fc.property(fc.array(step, { minLength: 1, maxLength: 12 }), (steps) => {
        for (const s of steps) {
          const { locked, ...rest } = s
          const r: Request = { ...rest, items, ...(locked ? { promptCache: { prefixItems: 1 } } : {}) }
          same(r)
        }
      })
    )
  })

  it("sees a config edited in place: a plain object, a frozen one holding a plain array, a getter's new answer", () => {
    const plain: { maxTokens?: number; temperature?: number } = { maxTokens: 100 }
    same(request(plain))
    plain.temperature = 0.5
    expect(anthropicScheme.encodeRequest(request(plain))).toContain('"temperature":0.5')
    expect(openAiResponsesScheme.encodeRequest(request(plain))).toContain('"temperature":0.5')
    same(request(plain))

    const stops = ["A"]
    const shallow = Object.freeze({ stopSequences: stops })
    same(request(shallow))
    stops.push("B")
    expect(anthropicScheme.encodeRequest(request(shallow))).toContain('"stop_sequences":["A","B"]')
    same(request(shallow))

    let budget = 100
    const withGetter = Object.freeze({
      get maxTokens() {
        return budget
      }
    })
    same(request(withGetter))
    budget = 200
    expect(anthropicScheme.encodeRequest(request(withGetter))).toContain('"max_tokens":200')
    same(request(withGetter))
  })

  it("does not reuse a frozen config's envelope for tools edited in place", () => {
    const config = Object.freeze({})
    const plainTools: Array<ToolSpec> = [weather]
    same(request(config, { tools: plainTools }))
    plainTools.push(readFile)
    expect(anthropicScheme.encodeRequest(request(config, { tools: plainTools }))).toContain('"name":"files_read"')
    same(request(config, { tools: plainTools }))
  })

  it("reports a bad setting the same way on every request", () => {
    const config = Object.freeze({ temperature: Number.NaN })
    for (const [cached] of formats) {
      expect(() => cached.encodeRequest(request(config))).toThrow(/jsonBody: \$\.(generationConfig\.)?temperature is NaN/)
      expect(() => cached.encodeRequest(request(config))).toThrow(/jsonBody: \$\.(generationConfig\.)?temperature is NaN/)
    }
  })
})
