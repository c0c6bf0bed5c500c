import { z } from "zod"
import { createLlmClient, defineTool, ToolHook, Worker } from "llm-worker"
import { sseText, startReplayProvider } from "llm-worker/testing"

const chunk = (delta: Record<string, unknown>, finish_reason: string | null = null) => ({
  data: JSON.stringify({ id: "chatcmpl-1", object: "chat.completion.chunk", choices: [{ index: 0, delta, finish_reason }] })
})
const call = (id: string, args: string) => chunk({ tool_calls: [{ index: 0, id, type: "function", function: { name: "get_weather", arguments: args } }] })
const turn = (id: string, args: string) => ({ kind: "stream" as const, transcript: sseText([call(id, args), chunk({}, "tool_calls"), { data: "[DONE]" }]) })
const answer = { kind: "stream" as const, transcript: sseText([chunk({ content: "Done." }), chunk({}, "stop"), { data: "[DONE]" }]) }
const replay = await startReplayProvider({ scheme: "openai-chat", script: [turn("call_1", '{"city":"paris"}'), answer, turn("call_2", '{"city":"Oslo"}'), answer] })
const client = createLlmClient({ provider: "openai", model: "gpt-4.1-mini", apiKey: "sk-example", baseUrl: replay.baseUrl })

const weather = defineTool({
  name: "get_weather",
  description: "Weather forecast for a city",
  parameters: z.object({ city: z.string(), days: z.int().min(1).max(14).optional() }),
  execute: ({ city, days }) => ({ city, days: days ?? 1, celsius: 21 })
})
const worker = Worker.create({ client })
worker.registerTool(weather)

// The plain hook sees text, for every tool; the typed hooks see this tool's types.
worker.addHook("PreToolCall", ({ call }) => console.log(`plain PreToolCall: ${call.arguments}`))
worker.addToolHook(weather, "PreToolCall", ({ call }) => {
  const { city } = call.arguments // { city: string; days?: number }
  return ToolHook.rewriteArguments({ city: city.charAt(0).toUpperCase() + city.slice(1), days: 3 })
})
worker.addToolHook(weather, "PostToolCall", ({ output }) => {
  console.log(`typed PostToolCall: ${output.city}, ${output.days} days, ${output.celsius} °C`)
  return ToolHook.rewriteOutput({ ...output, fahrenheit: Math.round(output.celsius * 1.8 + 32) })
})
worker.addHook("PostToolCall", ({ result }) => console.log(`plain PostToolCall: ${result.output}`))
await worker.run("Weather in Paris?")

// A rewrite the schema refuses (days must be at most 14) fails the run with HookFailed, naming the issue.
const strict = Worker.create({ client })
strict.registerTool(weather)
strict.addToolHook(weather, "PreToolCall", ({ call }) => ToolHook.rewriteArguments({ ...call.arguments, days: 30 }))
await strict.run("Weather in Oslo?").catch((error: Error) => console.log(`${error.name}: ${error.message}`))
await replay.close()
