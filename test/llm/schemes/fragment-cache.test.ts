import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { isCacheable, MAX_VARIANTS } from "../../../src/llm/fragment-cache.ts"
import { HostedTool } from "../../../src/llm/hosted-tools.ts"
import type { ContentPart, Item, ProviderItemScheme, ReasoningData } from "../../../src/llm/item.ts"
import type { Request, ToolSpec } from "../../../src/llm/request.ts"
import type { Scheme } from "../../../src/llm/scheme.ts"
import { anthropicScheme, uncachedAnthropicScheme } from "../../../src/llm/schemes/anthropic.ts"
import { makeGeminiScheme, uncachedGeminiScheme } from "../../../src/llm/schemes/gemini.ts"
import { GENERATED_CALL_ID_PREFIX } from "../../../src/llm/schemes/gemini-decoder.ts"
import { makeOpenAiChatScheme, uncachedOpenAiChatScheme } from "../../../src/llm/schemes/openai-chat.ts"
import { openAiResponsesScheme, uncachedOpenAiResponsesScheme } from "../../../src/llm/schemes/openai-responses.ts"
import { ownItem } from "../../../src/worker/owned-items.ts"
import { readFile, weather } from "./support/tool-specs.ts"

/**
 * The fragment cache must never change a byte: for generated histories, every scheme's cached encoder writes
 * exactly what the uncached one (the history printed whole, as before the cache) writes — on the same items
 * met again in other positions, next to other items, under other tool sets, locked and unlocked.
 */

const deepFreeze = <T>(value: T): T => {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    for (const child of Object.values(value)) deepFreeze(child)
    Object.freeze(value)
  }
  return value
}

/** Texts that escape differently when cut apart: a surrogate pair, lone halves, quotes, controls, an empty one. */
const tricky = fc.constantFrom("", "😀", "\ud83d", "\ude00", 'say "hi"\n', "\u2028", "\\", "plain text")
const text = fc.oneof(tricky, fc.string({ maxLength: 12 }), fc.string({ unit: "binary", maxLength: 6 }))

const callIds = fc.constantFrom("call_a", "call_b", "call_c", `${GENERATED_CALL_ID_PREFIX}g1`, "")
const toolName = fc.constantFrom("files.read", "get_weather", "not_a_tool", "a.b")
const deep = `${"[".repeat(80)}${"]".repeat(80)}`
const args = fc.constantFrom('{"path":"a.txt"}', "{}", '{"a":{"b":[1,2,{"c":"😀"}]}}', "[1]", "not json", `{"x":${deep}}`, '  {"spaced": true} ')

const part: fc.Arbitrary<ContentPart> = fc.oneof(
  fc.record({ type: fc.constant("input_text" as const), text }),
  fc.record({ type: fc.constant("output_text" as const), text }),
  fc.record({ type: fc.constant("refusal" as const), text }),
  fc.record({ type: fc.constant("input_image" as const), mediaType: fc.constant("image/png"), data: fc.constant("iVBORw0KGgo=") })
)

const reasoningData: fc.Arbitrary<ReasoningData | undefined> = fc.oneof(
  fc.constant(undefined),
  fc.record({ provider: fc.constant("anthropic" as const), signature: fc.constantFrom("sig-1", "sig-2") }),
  fc.record({ provider: fc.constant("anthropic" as const), redacted: fc.constantFrom("red-1") }),
  fc.record({ provider: fc.constant("openai" as const), id: fc.constantFrom("rs_1", "rs_2") }, { requiredKeys: ["provider", "id"] }),
  fc.record({ provider: fc.constant("openai" as const), id: fc.constantFrom("rs_3"), encryptedContent: fc.constantFrom("enc-1", "enc-2") }),
  fc.record({ provider: fc.constant("gemini" as const), thoughtSignature: fc.constantFrom("ts-1", "ts-2") })
)

/**
 * Provider items of every scheme (each scheme sends back its own and drops the others'): object texts as a
 * provider sends them, and as a caller's history may hold them (surrounding whitespace, an empty object).
 */
const providerJson = fc.constantFrom(
  '{"type":"web_search_call","id":"ws_1","status":"completed"}',
  '{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{"query":"😀 \\"q\\""}}',
  '{"executableCode":{"language":"PYTHON","code":"print(1)"}}',
  "{}",
  ' {"type":"x", "a": [1, {"b": {}}]}\n',
  '{"nested":{}}'
)
const providerItem = fc.record({
  type: fc.constant("provider_item" as const),
  scheme: fc.constantFrom<ProviderItemScheme>("openai-responses", "anthropic", "gemini"),
  kind: fc.constantFrom("web_search_call", "server_tool_use", "executableCode"),
  json: providerJson
})

const item: fc.Arbitrary<Item> = fc.oneof(
  providerItem,
  fc.record({ type: fc.constant("message" as const), role: fc.constantFrom("user" as const, "assistant" as const), content: fc.array(part, { maxLength: 3 }) }),
  fc
    .record({ callId: callIds, name: toolName, arguments: args, thoughtSignature: fc.option(fc.constantFrom("ts-call"), { nil: undefined }) })
    .map(({ thoughtSignature, ...call }): Item => ({ type: "function_call", ...call, ...(thoughtSignature === undefined ? {} : { thoughtSignature }) })),
  fc.record({ type: fc.constant("function_call_output" as const), callId: callIds, output: text, isError: fc.boolean() }),
  fc
    .record({ text, data: reasoningData })
    .map(({ text: t, data }): Item => ({ type: "reasoning", text: t, ...(data === undefined ? {} : { data }) }))
)

/**
 * Owned (the Worker's own copy, whose fragments and prefix states live in its memo), deep-frozen by a caller
 * (cacheable once walked; its fragments live in the caches' WeakMaps) or left plain (never cached).
 */
const poolItem = fc
  .tuple(item, fc.constantFrom("owned", "frozen", "plain"))
  .map(([value, kind]) => (kind === "owned" ? ownItem(value) : kind === "frozen" ? deepFreeze(value) : value))

const frozenTools = (list: ReadonlyArray<ToolSpec>): ReadonlyArray<ToolSpec> => deepFreeze([...list])
/** Tool sets: the same frozen arrays again and again (cached name maps), a renaming swap, none, a plain array. */
const TOOL_SETS: ReadonlyArray<ReadonlyArray<ToolSpec>> = [
  frozenTools([readFile, weather]),
  frozenTools([weather]),
  frozenTools([{ ...readFile, name: "a.b" }, weather]),
  [],
  [readFile, weather]
]

/** Hosted-tool sets, for every scheme (each sends its own after the function tools and leaves the rest out). */
const HOSTED_SETS: ReadonlyArray<ReadonlyArray<HostedTool> | undefined> = [
  undefined,
  Object.freeze([HostedTool.openAiWebSearch({ searchContextSize: "low" }), HostedTool.anthropicWebSearch({ maxUses: 2 })]),
  Object.freeze([HostedTool.geminiCodeExecution(), HostedTool.geminiGoogleSearch(), HostedTool.anthropicCodeExecution()]),
  [HostedTool.openAiWebSearch(), HostedTool.geminiUrlContext()]
]

const PAIRS: ReadonlyArray<readonly [string, () => Scheme, Scheme]> = [
  ["openai-chat", () => makeOpenAiChatScheme(), uncachedOpenAiChatScheme()],
  ["openai-chat echoReasoning", () => makeOpenAiChatScheme({ echoReasoning: true }), uncachedOpenAiChatScheme({ echoReasoning: true })],
  ["openai-responses", () => openAiResponsesScheme, uncachedOpenAiResponsesScheme],
  ["anthropic", () => anthropicScheme, uncachedAnthropicScheme],
  ["gemini", () => makeGeminiScheme(), uncachedGeminiScheme()],
  [
    "gemini streamFunctionCallArguments",
    () => makeGeminiScheme({ streamFunctionCallArguments: true }),
    uncachedGeminiScheme({ streamFunctionCallArguments: true })
  ],
  ["gemini openapi-subset", () => makeGeminiScheme({ toolSchemas: "openapi-subset" }), uncachedGeminiScheme({ toolSchemas: "openapi-subset" })]
]

/** A frozen history long enough for kept prefix states: calls with their outputs, messages of both roles. */
const LONG_BASE: ReadonlyArray<Item> = deepFreeze(
  Array.from({ length: 8 }, (_, n): Array<Item> => [
    { type: "message", role: "user", content: [{ type: "input_text", text: `q${n} 😀` }] },
    { type: "function_call", callId: `call_long_${n}`, name: n % 2 === 0 ? "files.read" : "get_weather", arguments: '{"path":"a.txt"}' },
    { type: "function_call_output", callId: `call_long_${n}`, output: `out ${n}`, isError: n % 3 === 0 },
    { type: "message", role: "assistant", content: [{ type: "output_text", text: `a${n}` }] }
  ]).flat()
)

/** One request of a sequence: a history made of pool items (so items recur in new contexts), a tool set, a lock. */
const requestSpec = (poolSize: number) =>
  fc.record({
    picks: fc.array(fc.nat({ max: poolSize - 1 }), { maxLength: 14 }),
    tools: fc.nat({ max: TOOL_SETS.length - 1 }),
    hosted: fc.nat({ max: HOSTED_SETS.length - 1 }),
    prefix: fc.option(fc.nat({ max: 14 }), { nil: undefined }),
    system: fc.option(fc.constantFrom("Be brief.", ""), { nil: undefined })
  })

const scenario = fc.array(poolItem, { minLength: 1, maxLength: 12 }).chain((pool) =>
  fc.record({
    pool: fc.constant(pool),
    requests: fc.array(requestSpec(pool.length), { minLength: 1, maxLength: 6 }),
    grow: fc.boolean(),
    long: fc.boolean()
  })
)

const toRequest = (
  pool: ReadonlyArray<Item>,
  spec: { picks: ReadonlyArray<number>; tools: number; hosted: number; prefix: number | undefined; system: string | undefined },
  before: ReadonlyArray<Item>
): Request => {
  const items = [...before, ...spec.picks.map((i) => pool[i] as Item)]
  return {
    model: "m",
    ...(spec.system === undefined ? {} : { systemPrompt: spec.system }),
    items,
    tools: TOOL_SETS[spec.tools] as ReadonlyArray<ToolSpec>,
    config: HOSTED_SETS[spec.hosted] === undefined ? {} : { hostedTools: HOSTED_SETS[spec.hosted] as ReadonlyArray<HostedTool> },
    ...(spec.prefix === undefined ? {} : { promptCache: { prefixItems: Math.min(spec.prefix, items.length) } })
  }
}

describe("fragment cache", () => {
  for (const [name, cached, uncached] of PAIRS) {
    it(`${name}: cached bytes equal uncached bytes, request after request`, () => {
      fc.assert(
        fc.property(scenario, ({ pool, requests, grow, long }) => {
          // A fresh cached instance per run where the scheme allows it; the shared ones carry state across runs,
          // which is exactly what a long-lived process does.
          const scheme = cached()
          let history: ReadonlyArray<Item> = long ? LONG_BASE : []
          for (const spec of requests) {
            // Earlier requests' folds are resumed from 2 items on (decisions 0028, 0079); long ones hold many states.
            const request = toRequest(pool, spec, grow ? history : long ? LONG_BASE : [])
            history = request.items
            const body = uncached.encodeRequest(request)
            expect(scheme.encodeRequest(request)).toBe(body)
            // Both forms write one JSON document whatever the history holds (provider items spliced in, marked).
            expect(() => JSON.parse(body) as unknown).not.toThrow()
            // Asked twice, the second answer comes from the cache.
            expect(scheme.encodeRequest(request)).toBe(uncached.encodeRequest(request))
          }
        }),
        { numRuns: 300 }
      )
    })
  }

  it("an Anthropic provider block gets one cache breakpoint, also when it ends both the prefix and the history", () => {
    for (const json of ['{"type":"server_tool_use","id":"s","name":"web_search","input":{}}', "{}", ' {"type":"x"}\n']) {
      const provider = deepFreeze<Item>({ type: "provider_item", scheme: "anthropic", kind: "server_tool_use", json })
      const items = [deepFreeze<Item>({ type: "message", role: "user", content: [{ type: "input_text", text: "q" }] }), provider]
      const request: Request = { model: "m", items, tools: [], config: {}, promptCache: { prefixItems: 2 } }
      for (const scheme of [anthropicScheme, uncachedAnthropicScheme]) {
        const body = scheme.encodeRequest(request)
        // No system prompt: the one marker is the block's, written once although the prefix end is the history's end.
        expect(body.split('"cache_control"').length - 1).toBe(1)
        const block = (JSON.parse(body) as { messages: Array<{ content: Array<Record<string, unknown>> }> }).messages[1]?.content[0]
        expect(block).toEqual({ ...(JSON.parse(json) as object), cache_control: { type: "ephemeral" } })
      }
    }
  })

  it("owned items encoded by several scheme instances in turn: each instance keeps its own fragments and states", () => {
    // The first instance to cache an owned item keeps its entries in the item's memo, the others in their WeakMaps:
    // neither may ever serve the other's bytes (echoReasoning changes an assistant message's bytes).
    const history = [
      ...LONG_BASE.slice(0, 4),
      { type: "reasoning", text: "thought", data: { provider: "openai", id: "rs_1" } },
      { type: "message", role: "assistant", content: [{ type: "output_text", text: "a" }] },
      ...LONG_BASE.slice(4, 12)
    ].map((item) => ownItem(item))
    const pairs = PAIRS.map(([, cached, uncached]) => [cached(), uncached] as const)
    for (let length = 1; length <= history.length; length++) {
      const request: Request = { model: "m", items: history.slice(0, length), tools: TOOL_SETS[0] as ReadonlyArray<ToolSpec>, config: {} }
      for (const [cached, uncached] of pairs) expect(cached.encodeRequest(request)).toBe(uncached.encodeRequest(request))
    }
  })

  it("a caller's plain item edited in place is encoded afresh", () => {
    for (const [, cached, uncached] of PAIRS) {
      const scheme = cached()
      const message = { type: "message" as const, role: "user" as const, content: [{ type: "input_text" as const, text: "first" }] }
      const request: Request = { model: "m", items: [message], tools: [], config: {} }
      const before = scheme.encodeRequest(request)
      message.content[0] = { type: "input_text", text: "second" }
      const after = scheme.encodeRequest(request)
      expect(after).not.toBe(before)
      expect(after).toBe(uncached.encodeRequest(request))
    }
  })

  it("caches only what cannot change: deep-frozen data, no getters", () => {
    const frozen = deepFreeze<Item>({ type: "message", role: "user", content: [{ type: "input_text", text: "x" }] })
    expect(isCacheable(frozen)).toBe(true)
    expect(isCacheable(Object.freeze<Item>({ type: "message", role: "user", content: [{ type: "input_text", text: "x" }] }))).toBe(false)
    let n = 0
    const withGetter = Object.freeze({
      type: "function_call_output" as const,
      callId: "c",
      get output() {
        return String(n++)
      },
      isError: false
    })
    expect(isCacheable(withGetter)).toBe(false)
  })

  it("an item met in many contexts keeps a bounded number of fragments and stays exact in each", () => {
    const scheme = makeGeminiScheme()
    const output = deepFreeze<Item>({ type: "function_call_output", callId: "call_x", output: "ok", isError: false })
    // Each context names the call differently, so each is a different fragment of the same output item.
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < MAX_VARIANTS * 3; i++) {
        const call = deepFreeze<Item>({ type: "function_call", callId: "call_x", name: `tool_${i}`, arguments: "{}" })
        const request: Request = { model: "m", items: [call, output], tools: [], config: {} }
        expect(scheme.encodeRequest(request)).toBe(uncachedGeminiScheme().encodeRequest(request))
      }
    }
  })
})
