import { createLlmClient, Item, type SchemeName } from "llm-worker"
import { reply, replyError, startReplayProvider } from "llm-worker/testing"

// One script in neutral terms: reasoning, text, two parallel calls, usage. No provider's wire shape in sight.
const script = [
  replyError(429, { message: "Slow down", retryAfterSeconds: 0 }),
  reply()
    .reasoning("Two cities, two calls.", { signature: "c2lnLTE=" })
    .text("Checking both.")
    .toolCall("get_weather", { city: "Paris" }, { id: "call_1", chunks: 3 })
    .toolCall("get_weather", { city: "Oslo" }, { id: "call_2" })
    .usage({ inputTokens: 120, outputTokens: 40, reasoningTokens: 12, cacheReadTokens: 100 })
]
const providers: Record<SchemeName, string> = { "openai-chat": "openai", "openai-responses": "openai-responses", anthropic: "anthropic", gemini: "gemini" }

for (const [scheme, provider] of Object.entries(providers) as Array<[SchemeName, string]>) {
  // The replay provider encodes each step as this scheme's provider streams it, and serves it over real HTTP.
  const replay = await startReplayProvider({ scheme, script })
  const client = createLlmClient({ provider, model: "scripted-model", apiKey: "test", baseUrl: replay.baseUrl, retry: { sleep: async () => {} } })
  const seen: Array<string> = []
  for await (const event of client.stream({ model: "scripted-model", items: [Item.userText("Weather?")], tools: [], config: {} })) {
    if (event.type === "block_start") seen.push(event.block.kind === "tool_use" ? `${event.block.name}#${event.block.id}` : event.block.kind)
    if (event.type === "block_stop" && event.reasoning !== undefined) seen.push(`signed(${event.reasoning.provider})`)
    if (event.type === "usage") seen.push(`usage ${event.inputTokens}/${event.outputTokens} cached ${event.cacheReadTokens} reasoning ${event.reasoningTokens}`)
    if (event.type === "status" && event.status === "completed") seen.push(`stop ${event.stopReason}`)
  }
  console.log(`${scheme.padEnd(16)} ${replay.requests.length} requests: ${seen.join(", ")}`)
  await replay.close()
}

// Failures and pauses are part of the script too: an in-stream error, and a stall that trips the idle deadline.
const failing = await startReplayProvider({ scheme: "anthropic", script: [reply().text("Let me").error("overloaded_error", "Overloaded"), reply().text("Hi").stall(5_000).text("!")] })
const client = createLlmClient({ provider: "anthropic", model: "m", apiKey: "test", baseUrl: failing.baseUrl, retry: { maxRetries: 0 }, timeouts: { idleMs: 100 } })
for (let attempt = 0; attempt < 2; attempt++) {
  try {
    for await (const _event of client.stream({ model: "m", items: [Item.userText("Hi")], tools: [], config: {} }));
  } catch (error) {
    console.log("failed:", (error as Error).message)
  }
}
await failing.close()
