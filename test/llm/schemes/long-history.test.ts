import { describe, expect, it } from "vitest"
import type { Item, ReasoningData } from "../../../src/llm/item.ts"
import type { Request, ToolSpec } from "../../../src/llm/request.ts"
import type { Scheme, SchemeName } from "../../../src/llm/scheme.ts"
import { anthropicScheme, uncachedAnthropicScheme } from "../../../src/llm/schemes/anthropic.ts"
import { makeGeminiScheme, uncachedGeminiScheme } from "../../../src/llm/schemes/gemini.ts"
import { makeOpenAiChatScheme, uncachedOpenAiChatScheme } from "../../../src/llm/schemes/openai-chat.ts"
import { openAiResponsesScheme, uncachedOpenAiResponsesScheme } from "../../../src/llm/schemes/openai-responses.ts"
import { readFile, weather } from "./support/tool-specs.ts"

/**
 * A long conversation through the cached encoders (per-item fragments, decision 0027, and folds resumed from an
 * earlier request's prefix, decision 0028) writes exactly the bytes of the uncached ones: 1,000 items sent again
 * with one new item (several times, each with another new item), a conversation growing request after request past
 * the points where kept text is flattened and old states are forgotten, a cache-locked prefix, a tool-set change
 * and a caller's plain item in the middle.
 */

const deepFreeze = <T>(value: T): T => {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    for (const child of Object.values(value)) deepFreeze(child)
    Object.freeze(value)
  }
  return value
}

const reasoning = (scheme: SchemeName, n: number): ReasoningData | undefined => {
  switch (scheme) {
    case "anthropic":
      return { provider: "anthropic", signature: `sig-${n}` }
    case "gemini":
      return { provider: "gemini", thoughtSignature: `ts-${n}` }
    case "openai-responses":
      return { provider: "openai", id: `rs_${n}`, encryptedContent: `enc-${n}` }
    default:
      return undefined
  }
}

/** Round `n`: five items of every usual kind, with text that escapes (quotes, a surrogate pair, non-ASCII). */
const round = (scheme: SchemeName, n: number): ReadonlyArray<Item> => {
  const data = reasoning(scheme, n)
  const callId = `call_${n}`
  return [
    { type: "message", role: "user", content: [{ type: "input_text", text: `Question ${n}: "r-${n}" 😀 °C?` }] },
    { type: "reasoning", text: n % 3 === 0 ? "" : `Look r-${n} up.`, ...(data === undefined ? {} : { data }) },
    { type: "function_call", callId, name: n % 2 === 0 ? "files.read" : "get_weather", arguments: `{"path":"r-${n}.txt"}` },
    { type: "function_call_output", callId, output: `{"id":"r-${n}","text":"line\\n${n}"}`, isError: n % 7 === 3 },
    { type: "message", role: "assistant", content: [{ type: "output_text", text: `Record r-${n}: sunny, ${20 + (n % 10)} °C.` }] }
  ]
}

const history = (scheme: SchemeName, rounds: number, from = 0): Array<Item> =>
  Array.from({ length: rounds }, (_, i) => round(scheme, from + i).map((item) => deepFreeze(item))).flat()

const TOOLS: ReadonlyArray<ToolSpec> = deepFreeze(structuredClone([readFile, weather]))
const OTHER_TOOLS: ReadonlyArray<ToolSpec> = deepFreeze(structuredClone([{ ...readFile, name: "files.open" }, weather]))

const request = (items: ReadonlyArray<Item>, extra: Partial<Request> = {}): Request => ({
  model: "m",
  systemPrompt: "Answer from the records.",
  items,
  tools: TOOLS,
  config: { maxTokens: 256 },
  ...extra
})

const PAIRS: ReadonlyArray<readonly [SchemeName, Scheme, Scheme]> = [
  ["openai-chat", makeOpenAiChatScheme(), uncachedOpenAiChatScheme()],
  ["openai-responses", openAiResponsesScheme, uncachedOpenAiResponsesScheme],
  ["anthropic", anthropicScheme, uncachedAnthropicScheme],
  ["gemini", makeGeminiScheme(), uncachedGeminiScheme()]
]

describe("a 1,000-item history through the cached encoders", () => {
  for (const [name, cached, uncached] of PAIRS) {
    const same = (req: Request): void => {
      const body = cached.encodeRequest(req)
      expect(body).toBe(uncached.encodeRequest(req))
    }

    it(`${name}: 1,000 items and one new item, again and again, equal the uncached bytes`, () => {
      const items = history(name, 200)
      expect(items).toHaveLength(1000)
      for (let i = 0; i < 4; i++) same(request([...items, deepFreeze<Item>({ type: "message", role: "user", content: [{ type: "input_text", text: `new ${i}` }] })]))
      // The same 1,000 items followed by an item that joins the last message, and by a tool round trip.
      same(request([...items, deepFreeze<Item>({ type: "message", role: "assistant", content: [{ type: "output_text", text: "and more" }] })]))
      same(request([...items, ...history(name, 1, 500)]))
      same(request(items))
    })

    it(`${name}: a conversation growing request after request equals the uncached bytes`, () => {
      let items: Array<Item> = history(name, 200)
      for (let step = 0; step < 40; step++) {
        const added = history(name, 1, 1000 + step)
        // A response (reasoning, call) in one request, its result and the answer in the next, as a worker sends them.
        items = [...items, ...added.slice(0, 3)]
        same(request(items))
        items = [...items, ...added.slice(3)]
        same(request(items))
      }
    })

    it(`${name}: a cache-locked prefix, a tool-set change and a plain item in the middle equal the uncached bytes`, () => {
      let items: Array<Item> = history(name, 200)
      for (let step = 0; step < 6; step++) {
        items = [...items, ...history(name, 1, 2000 + step)]
        same(request(items, { promptCache: { prefixItems: 600 } }))
        same(request(items, { promptCache: { prefixItems: items.length } }))
        same(request(items, { tools: OTHER_TOOLS }))
        same(request(items))
      }
      const plain: Item = { type: "message", role: "user", content: [{ type: "input_text", text: "edited in place" }] }
      const withPlain = [...items.slice(0, 500), plain, ...items.slice(500)]
      same(request(withPlain))
      ;(plain.content as Array<{ type: "input_text"; text: string }>)[0] = { type: "input_text", text: "edited again" }
      same(request(withPlain))
      same(request([...withPlain, ...history(name, 1, 3000)]))
    })
  }
})
