import { createLlmClient, Item, isLlmError, type Request } from "llm-worker"
import { sseText, startReplayProvider } from "llm-worker/testing"

// A recorded-style OpenAI Chat Completions stream, replayed by a local server (no network, no key needed).
const chunk = (choice: Record<string, unknown> | undefined, usage?: Record<string, unknown>) => ({
  data: JSON.stringify({ id: "chatcmpl-1", object: "chat.completion.chunk", model: "gpt-4o-2024-08-06", choices: choice === undefined ? [] : [{ index: 0, ...choice }], usage: usage ?? null })
})
const transcript = sseText([
  chunk({ delta: { role: "assistant", content: "" }, finish_reason: null }),
  chunk({ delta: { content: "Hello" }, finish_reason: null }),
  chunk({ delta: { content: " there" }, finish_reason: null }),
  chunk({ delta: {}, finish_reason: "stop" }),
  chunk(undefined, { prompt_tokens: 12, completion_tokens: 2, total_tokens: 14, prompt_tokens_details: { cached_tokens: 8 } }),
  { data: "[DONE]" }
])
// First attempt: 503 with Retry-After; the client retries on its own. Then the stream.
const replay = await startReplayProvider({
  scheme: "openai-chat",
  script: [{ kind: "status", status: 503, headers: { "retry-after": "0" }, body: '{"error":"busy"}' }, { kind: "stream", transcript }]
})

const client = createLlmClient({
  provider: "openai",
  model: "gpt-4.1-mini",
  apiKey: "sk-example", // otherwise read from OPENAI_API_KEY
  baseUrl: replay.baseUrl, // otherwise OPENAI_BASE_URL, else https://api.openai.com/v1
  retry: { maxRetries: 2 }, timeouts: { headersMs: 5_000, idleMs: 5_000 }
})
const request: Request = { model: client.model, items: [Item.userText("Hi")], tools: [], config: { maxTokens: 64, topK: 5 } }

// Options the provider cannot honour are reported, not silently dropped.
for (const warning of client.validate(request)) console.log("warning:", warning.setting, "-", warning.message)

for await (const event of client.stream(request)) console.log("event:", JSON.stringify(event))
console.log("attempts:", replay.requests.length, "body sent = encodeRequest:", replay.requests[1]?.body === client.encodeRequest(request))
await replay.close()

// Configuration problems surface when the client is created, as tagged errors.
try {
  createLlmClient({ provider: "anthropic", model: "claude-sonnet-4-5", env: {} })
} catch (error) {
  if (isLlmError(error)) console.log(`${error._tag}: ${error.message}`)
}

// A failure that outlives the retries rejects the stream with a tagged LlmError.
const down = await startReplayProvider({ scheme: "anthropic", script: [{ kind: "status", status: 400, body: '{"type":"error"}' }] })
const anthropic = createLlmClient({ provider: "anthropic", model: "claude-sonnet-4-5", apiKey: "k", baseUrl: down.baseUrl })
try {
  for await (const _ of anthropic.stream({ ...request, model: anthropic.model })) break
} catch (error) {
  if (isLlmError(error)) console.log(`${error._tag}:`, error.message, "after", down.requests.length, "attempt (400 is never retried)")
}
await down.close()

// Each response is bounded; past a limit the call fails with LlmLimitExceeded naming the option (never retried).
const chatty = await startReplayProvider({ scheme: "openai-chat", script: [{ kind: "stream", transcript }] })
const bounded = createLlmClient({ provider: "openai", model: "m", apiKey: "k", baseUrl: chatty.baseUrl, limits: { maxTextBytes: 8 } })
const drain = async () => { for await (const _ of bounded.stream(request)) continue }
await drain().catch((error) => isLlmError(error) && console.log(`${error._tag}: ${error.message}`))
await chatty.close()
