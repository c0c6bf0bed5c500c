import { Item } from "../src/llm/item.ts"
import type { Request } from "../src/llm/request.ts"
import { anthropicScheme } from "../src/llm/schemes/anthropic.ts"
import { geminiScheme } from "../src/llm/schemes/gemini.ts"
import { openAiChatScheme } from "../src/llm/schemes/openai-chat.ts"
import { openAiResponsesScheme } from "../src/llm/schemes/openai-responses.ts"
import { benchHistory, benchTools } from "../bench/support/conversation.ts"
const deepFreeze = <T,>(value: T): T => {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    for (const child of Object.values(value)) deepFreeze(child)
    Object.freeze(value)
  }
  return value
}
const tools = deepFreeze(benchTools(100))
const only = process.argv[2]
for (const scheme of [openAiChatScheme, openAiResponsesScheme, anthropicScheme, geminiScheme]) {
  if (only && scheme.name !== only) continue
  const history = deepFreeze(benchHistory(scheme.name, 200, tools))
  let n = 0
  const next = (): Request => ({ model: "m", systemPrompt: "sys", items: [...history, deepFreeze(Item.userText(`Q ${n++}`))], tools, config: { maxTokens: 1024 } })
  const body = scheme.encodeRequest(next())
  const key = ({ "openai-chat": '"messages":', "openai-responses": '"input":', anthropic: '"messages":', gemini: '"contents":' } as Record<string,string>)[scheme.name]!
  const ht = body.slice(body.lastIndexOf(key) + key.length, -1).slice(1, -1)
  const size = Math.ceil(ht.length / 1001)
  const pieces = Array.from({ length: 1001 }, (_, i) => ht.slice(i * size, (i + 1) * size).split("").join(""))
  const N = 3000
  for (let r = 0; r < 2; r++) {
  let t = process.hrtime.bigint()
  let s = 0
  for (let i = 0; i < N; i++) s += `[${pieces.join(",")}]`.length
  const floor = Number(process.hrtime.bigint() - t) / N
  const reqs = Array.from({ length: N }, next)
  t = process.hrtime.bigint()
  for (let i = 0; i < N; i++) s += scheme.encodeRequest(reqs[i]!).length
  const enc = Number(process.hrtime.bigint() - t) / N
  console.log(scheme.name, "floor", (floor / 1000).toFixed(1), "µs enc", (enc / 1000).toFixed(1), "µs ratio", (enc / floor).toFixed(2), s % 7)
  }
}
