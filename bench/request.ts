/**
 * Requests: building one provider request body with `scheme.encodeRequest` for a 50-item history (user messages,
 * reasoning, tool calls, tool outputs, assistant text) and 100 tools, per wire format.
 *
 * - first build: a tool array the schemes have never seen (a fresh copy each iteration, made outside the timing),
 *   so the tools fragment is serialised from the schemas;
 * - repeated build: the same tool array every time, as a worker sends it turn after turn (fragment cache hit);
 * - reference: `JSON.stringify` of the neutral request object — not a provider body, only a yardstick for what
 *   "serialise this much data once" costs in the same process.
 *
 * Second table, a long conversation: 1,000 history items (frozen, as the Worker keeps them) already sent once,
 * plus one new item each time — what every request of a long run costs. Against the floor of any encoder that
 * reuses per-item text: joining 1,001 strings of the same total size (the history's own text, cut into pieces),
 * and against the same scheme without its fragment cache (the whole history printed, as before the cache). The
 * builds are also timed with their body flattened into one string, as the floor's join makes one.
 */
import { flat } from "#internal/llm/fragment-cache"
import { Item } from "#internal/llm/item"
import type { Request } from "#internal/llm/request"
import type { Scheme } from "#internal/llm/scheme"
import { anthropicScheme, uncachedAnthropicScheme } from "#internal/llm/schemes/anthropic"
import { geminiScheme, uncachedGeminiScheme } from "#internal/llm/schemes/gemini"
import { openAiChatScheme, uncachedOpenAiChatScheme } from "#internal/llm/schemes/openai-chat"
import { openAiResponsesScheme, uncachedOpenAiResponsesScheme } from "#internal/llm/schemes/openai-responses"
import { benchHistory, benchTools } from "./support/conversation.ts"
import { formatBytes, formatNs, markdownTable, printHeader } from "./support/report.ts"
import { compareOps } from "./support/timing.ts"

const SCHEMES: ReadonlyArray<Scheme> = [openAiChatScheme, openAiResponsesScheme, anthropicScheme, geminiScheme]
const UNCACHED: Readonly<Record<string, Scheme>> = {
  "openai-chat": uncachedOpenAiChatScheme(),
  "openai-responses": uncachedOpenAiResponsesScheme,
  anthropic: uncachedAnthropicScheme,
  gemini: uncachedGeminiScheme()
}
const TOOLS = 100
const ROUNDS = 10 // five items each: 50 items
const LONG_ROUNDS = 200 // 1,000 items
/** Target: a request of 1,000 known items and 1 new one costs at most this many times joining their fragments. */
const LONG_TARGET = 2

/** The key each format writes its history under, last in the body. */
const HISTORY_KEY: Readonly<Record<string, string>> = {
  "openai-chat": '"messages":',
  "openai-responses": '"input":',
  anthropic: '"messages":',
  gemini: '"contents":'
}

const deepFreeze = <T>(value: T): T => {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    for (const child of Object.values(value)) deepFreeze(child)
    Object.freeze(value)
  }
  return value
}

/** `text` cut into `count` pieces of (nearly) equal length, each a string of its own as a cached fragment is. */
const pieces = (text: string, count: number): Array<string> => {
  const size = Math.ceil(text.length / count)
  return Array.from({ length: count }, (_, i) => text.slice(i * size, (i + 1) * size).split("").join(""))
}

const longConversation = async (tools: ReturnType<typeof benchTools>): Promise<void> => {
  console.log(
    `\n### A long conversation: ${LONG_ROUNDS * 5} history items already sent, 1 new item\n\n` +
      "Each build appends a new user message (frozen, made outside the timing) to the same 1,000 frozen items. " +
      "Floor: joining 1,001 strings of the history's own text (`[` + pieces.join(\",\") + `]`). Cached: the scheme as shipped " +
      "(per-item fragments, decision 0027, resumed from the fold of the 1,000 items, decision 0028). Uncached: the same scheme " +
      "printing the whole history, as every request did before the fragment cache.\n"
  )
  const rows: Array<Array<string>> = []
  const verdicts: Array<string> = []
  for (const scheme of SCHEMES) {
    const uncached = UNCACHED[scheme.name] as Scheme
    const history = deepFreeze(benchHistory(scheme.name, LONG_ROUNDS, tools))
    let n = 0
    const next = (): Request => ({
      model: "bench-model",
      systemPrompt: "You are a careful assistant. Use the tools to look records up; answer in one sentence.",
      items: [...history, deepFreeze(Item.userText(`Question ${n++}: and record r-${n}?`))],
      tools,
      config: { maxTokens: 1024, temperature: 0, toolChoice: { type: "auto" } }
    })
    const probe = next()
    const body = scheme.encodeRequest(probe)
    if (body !== uncached.encodeRequest(probe)) throw new Error(`${scheme.name}: cached and uncached bodies differ`)
    const historyText = body.slice(body.lastIndexOf(HISTORY_KEY[scheme.name] as string) + (HISTORY_KEY[scheme.name] as string).length, -1)
    const fragments = pieces(historyText.slice(1, -1), history.length + 1)
    const cut = body.length >> 1
    const [floor, cached, flattened, copy, whole] = await compareOps(
      [
        () => `[${fragments.join(",")}]`,
        { setup: next, run: (request: Request) => scheme.encodeRequest(request) },
        // The encoders return ropes (concatenations V8 joins when the text is first read whole, e.g. by
        // `Buffer.from` before sending); the floor's join returns a flat string. So also: the build with its body
        // flattened (`flat`), and flattening a two-piece copy of the same body alone, the part of that which is
        // copying the body's bytes once.
        { setup: next, run: (request: Request) => flat(scheme.encodeRequest(request)) },
        { setup: () => body.slice(0, cut) + body.slice(cut), run: (text: string) => flat(text) },
        { setup: next, run: (request: Request) => flat(uncached.encodeRequest(request)) }
      ],
      11,
      40e6
    )
    if (floor === undefined || cached === undefined || flattened === undefined || copy === undefined || whole === undefined) {
      throw new Error("missing timing")
    }
    rows.push([
      scheme.name,
      formatBytes(Buffer.byteLength(historyText)),
      formatBytes(Buffer.byteLength(body)),
      formatNs(floor.p50),
      formatNs(cached.p50),
      `${cached.ratio.toFixed(2)}×`,
      formatNs(flattened.p50),
      formatNs(copy.p50),
      `${flattened.ratio.toFixed(2)}×`,
      formatNs(whole.p50),
      `${(whole.p50 / flattened.p50).toFixed(1)}×`
    ])
    verdicts.push(`${scheme.name} ${cached.ratio <= LONG_TARGET ? "meets" : "misses"} ≤ ${LONG_TARGET}× (${cached.ratio.toFixed(2)}×; flattened ${flattened.ratio.toFixed(2)}×)`)
  }
  console.log(
    markdownTable(
      [
        "format",
        "history text",
        "body",
        "floor: join 1,001 fragments",
        "cached build",
        "cached / floor",
        "cached build, flattened",
        "flattening the body alone",
        "flattened / floor",
        "uncached build, flattened",
        "uncached / cached (flattened)"
      ],
      rows
    )
  )
  console.log(`\nTarget ≤ ${LONG_TARGET}× the floor: ${verdicts.join("; ")}.`)
}

const main = async (): Promise<void> => {
  printHeader("Requests: building the provider body")
  console.log(
    `History: ${ROUNDS * 5} items (${ROUNDS} rounds of user message, reasoning, tool call, tool output, assistant text); ${TOOLS} tools with five-field object schemas. ` +
      "Times are medians of interleaved rounds (p50 per build).\n"
  )
  // Frozen, as the registry hands tool sets out (`toolDefinitionsSorted()`) and the Worker keeps its history:
  // only what cannot change is cached.
  const tools = deepFreeze(benchTools(TOOLS))
  const rows: Array<Array<string>> = []
  for (const scheme of SCHEMES) {
    const request: Request = {
      model: "bench-model",
      systemPrompt: "You are a careful assistant. Use the tools to look records up; answer in one sentence.",
      items: deepFreeze(benchHistory(scheme.name, ROUNDS, tools)),
      tools,
      config: { maxTokens: 1024, temperature: 0, toolChoice: { type: "auto" } }
    }
    const body = scheme.encodeRequest(request)
    const toolsOnly = scheme.encodeRequest({ ...request, items: [] }).length - scheme.encodeRequest({ ...request, items: [], tools: [] }).length
    if (scheme.encodeRequest({ ...request, tools: [...tools] }) !== body) throw new Error(`${scheme.name}: a fresh tool array changed the body`)
    const [reference, repeated, first] = await compareOps(
      [
        () => JSON.stringify(request),
        () => scheme.encodeRequest(request),
        { setup: () => ({ ...request, tools: Object.freeze([...tools]) }), run: (fresh: Request) => scheme.encodeRequest(fresh) }
      ],
      11,
      40e6
    )
    if (reference === undefined || repeated === undefined || first === undefined) throw new Error("missing timing")
    rows.push([
      scheme.name,
      formatBytes(Buffer.byteLength(body)),
      `${Math.round((toolsOnly / body.length) * 100)}%`,
      formatNs(first.p50),
      formatNs(repeated.p50),
      `${(first.p50 / repeated.p50).toFixed(1)}×`,
      formatNs(reference.p50),
      `${repeated.ratio.toFixed(2)}×`
    ])
  }
  console.log(
    markdownTable(
      ["format", "body", "tools share", "first build", "repeated build", "first / repeated", "JSON.stringify(request)", "repeated / stringify"],
      rows
    )
  )
  await longConversation(tools)
}

await main()
