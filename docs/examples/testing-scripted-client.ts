import { z } from "zod"
import { defineTool, PreToolCall, Worker } from "llm-worker"
import { reply, scriptedClient } from "llm-worker/testing"

// A unit test of an agent's tool handling, with no HTTP at all: the client plays the script in process.
const client = scriptedClient({
  scheme: "anthropic", // replies are decoded by the real Anthropic decoder; requests encoded by its encoder
  script: [
    reply().toolCall("get_weather", { city: "Paris" }, { id: "toolu_1" }).toolCall("delete_city", { city: "Oslo" }, { id: "toolu_2" }),
    reply().text("Sunny in Paris; I may not delete Oslo.").usage({ inputTokens: 210, outputTokens: 14 })
  ]
})
const worker = Worker.create({ client, systemPrompt: "Be brief." })
worker.registerTools([
  defineTool({ name: "get_weather", description: "Weather", parameters: z.object({ city: z.string() }), execute: ({ city }) => `sunny in ${city}` }),
  defineTool({ name: "delete_city", description: "Deletes", parameters: z.object({ city: z.string() }), execute: () => "deleted" })
])
worker.addHook("PreToolCall", ({ call }) => (call.name.startsWith("delete") ? PreToolCall.deny("destructive") : PreToolCall.continue()))

const result = await worker.run("Weather in Paris, and delete Oslo")
console.log("status:", result.status, "| usage:", JSON.stringify(result.usage))
for (const item of result.items) console.log(`item: ${item.type}${item.type === "function_call_output" ? ` ${item.callId} ${item.output}` : ""}`)

// The client recorded every request it was given, and the exact body the real client would have sent.
console.log("requests:", client.calls.length)
const second = client.calls[1]
console.log("second request items:", second?.request.items.map((item) => item.type).join(","))
console.log("tool results sent:", JSON.parse(second?.body ?? "{}").messages.at(-1).content.map((part: { type: string }) => part.type).join(","))

// Cancellation works as with the real client: a stall is a real pause that cancel() cuts short.
const slow = Worker.create({ client: scriptedClient({ script: [reply().text("Thinking").stall(60_000).text(" done")] }) })
slow.subscribe({ onText: () => slow.cancel() })
await slow.run("Hi").catch((error: { _tag: string }) => console.log("cancelled run:", error._tag))
