/**
 * Sends one prompt with one demo tool to a provider and prints the neutral event stream, one event per line.
 *
 *   npm run try -- --provider anthropic [--model claude-sonnet-4-5] [--prompt "…"] [--fake]
 *
 * Without a key for a hosted provider (or with --fake), a local fake server replays a recorded stream of that
 * provider's wire format instead, and the output says so.
 */
import { parseArgs } from "node:util"
import { createLlmClient } from "../src/llm/llm-client.ts"
import { isLlmError } from "../src/llm/llm-error.ts"
import type { LlmClient } from "../src/llm/client.ts"
import { Item } from "../src/llm/item.ts"
import { providerNames, providers } from "../src/llm/providers/registry.ts"
import type { Request } from "../src/llm/request.ts"
import { startReplayProvider } from "../src/testing/replay-provider.ts"
import { DEFAULT_MODELS } from "../src/llm/providers/defaults.ts"
import { listTranscripts, loadTranscript } from "../test/support/sse-fixtures.ts"
import type { ReplayProvider } from "../src/testing/replay-provider.ts"

const { values } = parseArgs({
  options: {
    provider: { type: "string", default: "openai" },
    model: { type: "string" },
    prompt: { type: "string", default: "What's the weather in Paris and in London right now?" },
    fake: { type: "boolean", default: false }
  }
})

const providerName = values.provider
const provider = providers.get(providerName)
if (provider === undefined) {
  console.error(`Unknown provider "${providerName}". Choose one of: ${providerNames.join(", ")}`)
  process.exit(2)
}
const model = values.model ?? DEFAULT_MODELS[providerName] ?? "default"

const request: Request = {
  model,
  systemPrompt: "You are a concise assistant. Use the tool when the user asks about weather.",
  items: [Item.userText(values.prompt)],
  tools: [
    {
      name: "get_weather",
      description: "Current weather for one city",
      inputSchema: {
        type: "object",
        properties: { location: { type: "string", description: "City name, e.g. Paris" } },
        required: ["location"],
        additionalProperties: false
      }
    }
  ],
  config: { maxTokens: 512 }
}

/** The transcript to replay: one with tool calls when the scheme has it, else the first recorded one. */
const pickTranscript = (names: ReadonlyArray<string>): string | undefined =>
  ["parallel-tool-calls", "thinking-tool-call", "text"].find((name) => names.includes(name)) ?? names[0]

/** A client for the real provider, or why there is none (no key, or --fake). */
const realClient = (): LlmClient | string => {
  if (values.fake) return "--fake given"
  try {
    return createLlmClient({ provider, model })
  } catch (error) {
    if (isLlmError(error) && error._tag === "LlmConfigError") return error.message
    throw error
  }
}

let fake: ReplayProvider | undefined
let client = realClient()
if (typeof client !== "string") {
  console.log(`# ${provider.name} (${provider.scheme.name}) · model ${model}`)
} else {
  const transcript = pickTranscript(listTranscripts(provider.scheme.name))
  if (transcript === undefined) {
    console.error(`# ${client}; and there is no recorded ${provider.scheme.name} stream to replay.`)
    process.exit(1)
  }
  fake = await startReplayProvider({ scheme: provider.scheme.name, script: [{ kind: "stream", transcript: loadTranscript(provider.scheme.name, transcript) }] })
  console.log(`# NOT CALLING ${provider.name}: ${client}.`)
  console.log(`# Replaying the recorded stream test/fixtures/sse/${provider.scheme.name}/${transcript}.sse from a local fake server at ${fake.baseUrl}.`)
  console.log(`# The reply below is a recording and does not answer your prompt.`)
  client = createLlmClient({ provider, model, apiKey: "fake-key", baseUrl: fake.baseUrl })
}

for (const warning of client.validate(request)) console.log(`# warning: ${warning.setting}: ${warning.message}`)

const controller = new AbortController()
process.once("SIGINT", () => controller.abort())
let exitCode = 0
try {
  for await (const event of client.stream(request, { signal: controller.signal })) console.log(JSON.stringify(event))
} catch (error) {
  exitCode = 1
  console.error(isLlmError(error) ? `${error._tag}: ${error.message}` : error)
} finally {
  await fake?.close()
}
process.exit(exitCode)
