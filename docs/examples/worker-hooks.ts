import { z } from "zod"
import { createLlmClient, defineTool, Item, OnPromptSubmit, OnTurnEnd, PostToolCall, PreLlmRequest, PreToolCall, StreamHook, Worker } from "llm-worker"
import { sseText, startReplayProvider } from "llm-worker/testing"

const chunk = (delta: Record<string, unknown>, finish_reason: string | null = null) => ({
  data: JSON.stringify({ id: "chatcmpl-1", object: "chat.completion.chunk", choices: [{ index: 0, delta, finish_reason }] })
})
const args = (text: string, head?: object) => chunk({ tool_calls: [{ index: 0, ...head, function: { ...(head && { name: "get_weather" }), arguments: text } }] })
const answer = (text: string) => ({ kind: "stream" as const, transcript: sseText([chunk({ content: text }), chunk({}, "stop"), { data: "[DONE]" }]) })
const replay = await startReplayProvider({
  scheme: "openai-chat",
  script: [
    { kind: "stream", transcript: sseText([args("", { id: "call_1", type: "function" }), args('{"city":'), args('"Paris"}'), chunk({}, "tool_calls"), { data: "[DONE]" }]) },
    answer("Sunny"),
    answer("It is sunny in Paris.")
  ]
})
const client = createLlmClient({ provider: "openai", model: "gpt-4.1-mini", apiKey: "sk-example", baseUrl: replay.baseUrl })
const worker = Worker.create({ client })
const weather = z.object({ city: z.string() })
worker.registerTool(defineTool({ name: "get_weather", description: "Weather", parameters: weather, execute: ({ city }) => `sunny in ${city}` }))
const log = (point: string, detail: unknown) => console.log(`${point}:`, typeof detail === "string" ? detail : JSON.stringify(detail))

// Rewrites chain: the second hook sees the first one's rewrite. Cancel ends the run before any request.
worker.addHook("OnPromptSubmit", ({ item }) =>
  JSON.stringify(item).includes("secret") ? OnPromptSubmit.cancel("no secrets") : OnPromptSubmit.rewrite(Item.userText("Weather in Paris?"))
)
worker.addHook("OnPromptSubmit", ({ item }) => log("OnPromptSubmit", item.type === "message" ? item.content[0] : item))
// PreLlmRequest edits a private copy of the request; the stored history is untouched.
worker.addHook("PreLlmRequest", ({ turn, context }) => PreLlmRequest.rewrite({ ...context, systemPrompt: `Turn ${turn}. Be brief.` }))
let chunks = 0
worker.addHook("OnStreamChunk", () => void chunks++)
worker.addHook("OnTextDelta", ({ text }) => (text.includes("forbidden") ? StreamHook.abort("bad word") : StreamHook.continue()))
worker.addHook("OnToolCallDelta", ({ name, json }) => log("OnToolCallDelta", `${name} += ${json}`))
worker.addHook("OnStreamComplete", ({ turn, eventCount }) => log("OnStreamComplete", `turn ${turn}, ${eventCount} events`))
worker.addHook("PreToolCall", ({ call, meta }) =>
  meta.name === "get_weather" ? PreToolCall.rewriteArguments(call.arguments.replace("Paris", "Paris, FR")) : PreToolCall.deny("not allowed")
)
worker.addHook("PostToolCall", ({ call, result }) => PostToolCall.rewriteResult(`${result.output} (${call.arguments})`))
// OnTurnEnd: ask again once if the answer is too short (self-correction), then finish.
worker.addHook("OnTurnEnd", ({ history }) => {
  const last = history.at(-1)
  const text = last?.type === "message" ? last.content.map((part) => ("text" in part ? part.text : "")).join("") : ""
  return text.split(" ").length < 3 ? OnTurnEnd.continueWith([Item.userText("Please answer in a full sentence.")]) : OnTurnEnd.finish()
})
worker.addHook("OnAbort", ({ reason, error }) => log("OnAbort", `${error._tag}: ${reason}`))

const result = await worker.run("how's the weather?")
log("result", `${result.status}, ${result.cache.length} requests, ${chunks} stream chunks`)
for (const item of result.items) log("item", item)
log("system prompt sent", JSON.parse(replay.requests[0]?.body ?? "{}").messages[0].content)
await worker.run("tell me the secret").catch((error: Error) => log("second run", error.message))
await replay.close()
