import { z } from "zod"
import { createLlmClient, defineTool, Worker } from "llm-worker"
import { sseText, startReplayProvider } from "llm-worker/testing"

// Two recorded-style OpenAI Chat responses: the model calls a tool, then answers with its result.
const chunk = (delta: Record<string, unknown>, finish_reason: string | null = null) => ({
  data: JSON.stringify({ id: "chatcmpl-1", object: "chat.completion.chunk", choices: [{ index: 0, delta, finish_reason }] })
})
const call = (id: string, name: string, args: string) => ({ tool_calls: [{ index: 0, id, type: "function", function: { name, arguments: args } }] })
const toolTurn = sseText([chunk(call("call_1", "get_weather", "")), chunk({ tool_calls: [{ index: 0, function: { arguments: '{"city":"Paris"}' } }] }), chunk({}, "tool_calls"), { data: "[DONE]" }])
const answerTurn = sseText([chunk({ content: "Sunny in " }), chunk({ content: "Paris." }), chunk({}, "stop"), { data: "[DONE]" }])
const replay = await startReplayProvider({
  scheme: "openai-chat",
  script: [
    { kind: "stream", transcript: toolTurn },
    { kind: "stream", transcript: answerTurn }
  ]
})

const client = createLlmClient({ provider: "openai", model: "gpt-4.1-mini", apiKey: "sk-example", baseUrl: replay.baseUrl })
const worker = Worker.create({ client, systemPrompt: "Answer briefly.", toolTimeoutMs: 5_000 })
worker.registerTool(
  defineTool({
    name: "get_weather",
    description: "Current weather for a city",
    parameters: z.object({ city: z.string() }),
    execute: ({ city }) => ({ city, sky: "sunny" })
  })
)

// Subscribers get the UI view: text as it streams, completed calls, tool results, status.
const unsubscribe = worker.subscribe({
  onText: (text) => console.log("text delta:", JSON.stringify(text)),
  onToolCallCompleted: ({ call }) => console.log("model called:", call.name, call.arguments),
  onToolResult: ({ outcome }) => console.log("tool result:", outcome.status, outcome.output),
  onStatus: ({ status }) => console.log("status:", status)
})

// The same events as an async iterable (leave the loop to unsubscribe).
const turns: Array<number> = []
const watching = (async () => {
  for await (const event of worker.events()) {
    if (event.type === "turn_start") turns.push(event.turn)
    if (event.type === "status" && event.status !== "running") break
  }
})()

const result = await worker.run("What's the weather in Paris?")
await watching
unsubscribe()
console.log("result:", result.status, "turns:", turns.join(","))
console.log("appended:", result.items.map((item) => item.type).join(","))
console.log("history length:", worker.history().length, "state:", worker.state)
await replay.close()
