/**
 * Requests: building one provider request body with `scheme.encodeRequest` for a 50-item history (user messages,
 * reasoning, tool calls, tool outputs, assistant text) and 100 tools, per wire format.
 *
 * - first build: a tool array the schemes have never seen (a fresh copy each iteration, made outside the timing),
 *   so the tools fragment is serialised from the schemas;
 * - repeated build: the same tool array every time, as a worker sends it turn after turn (fragment cache hit);
 * - reference: `JSON.stringify` of the neutral request object — not a provider body, only a yardstick for what
 *   "serialise this much data once" costs in the same process.
 */
import type { Request } from "../src/llm/request.ts"
import type { Scheme } from "../src/llm/scheme.ts"
import { anthropicScheme } from "../src/llm/schemes/anthropic.ts"
import { geminiScheme } from "../src/llm/schemes/gemini.ts"
import { openAiChatScheme } from "../src/llm/schemes/openai-chat.ts"
import { openAiResponsesScheme } from "../src/llm/schemes/openai-responses.ts"
import { benchHistory, benchTools } from "./support/conversation.ts"
import { formatBytes, formatNs, markdownTable, printHeader } from "./support/report.ts"
import { compareOps } from "./support/timing.ts"

const SCHEMES: ReadonlyArray<Scheme> = [openAiChatScheme, openAiResponsesScheme, anthropicScheme, geminiScheme]
const TOOLS = 100
const ROUNDS = 10 // five items each: 50 items

const main = async (): Promise<void> => {
  printHeader("Requests: building the provider body")
  console.log(
    `History: ${ROUNDS * 5} items (${ROUNDS} rounds of user message, reasoning, tool call, tool output, assistant text); ${TOOLS} tools with five-field object schemas. ` +
      "Times are medians of interleaved rounds (p50 per build).\n"
  )
  const tools = benchTools(TOOLS)
  const rows: Array<Array<string>> = []
  for (const scheme of SCHEMES) {
    const request: Request = {
      model: "bench-model",
      systemPrompt: "You are a careful assistant. Use the tools to look records up; answer in one sentence.",
      items: benchHistory(scheme.name, ROUNDS, tools),
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
        { setup: () => ({ ...request, tools: [...tools] }), run: (fresh: Request) => scheme.encodeRequest(fresh) }
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
}

await main()
