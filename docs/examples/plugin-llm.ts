import { fileURLToPath } from "node:url"
import { sseText, startReplayProvider } from "llm-worker/testing"
import { createPluginLlmHandler, createPluginRuntime, isPluginLlmError } from "llm-worker/plugin-llm"

// The active model, replayed by a local server (no network, no key needed): one answer per request, from the
// dated model the provider names for the alias asked for.
const answer = (text: string) =>
  sseText([
    { data: JSON.stringify({ model: "gpt-4.1-mini-2025-04-14", choices: [{ index: 0, delta: { role: "assistant", content: text }, finish_reason: "stop" }] }) },
    { data: JSON.stringify({ choices: [], usage: { prompt_tokens: 120, completion_tokens: 30, total_tokens: 150 } }) },
    { data: "[DONE]" }
  ])
const replay = await startReplayProvider({
  scheme: "openai-chat",
  script: [
    { kind: "stream", transcript: answer("Ana ships the release Friday; someone must book the room.") },
    { kind: "stream", transcript: answer('{"tasks":[{"owner":"Ana","action":"ship the release","due":null},{"owner":null,"action":"book the room","due":null}]}') },
    { kind: "stream", transcript: answer("pong") }
  ]
})

// What the host reads from its YAML config: the plugins to load and what each may override (here: nothing).
const config = {
  plugins: { entries: { tldr: { module: "plugins/tldr.ts" }, "paste-to-tasks": { module: "plugins/paste-to-tasks.ts" } } },
  llm: { timeout: 30 }
}
const runtime = createPluginRuntime({
  active: { provider: "openai", model: "gpt-4.1-mini", apiKey: "sk-example", baseUrl: replay.baseUrl },
  config,
  baseDir: fileURLToPath(new URL(".", import.meta.url)),
  audit: (record) => console.log("audit:", record.pluginId, record.purpose, record.requestedModel, "->", record.model, record.usage.totalTokens, record.outcome)
})
console.log("loaded:", (await runtime.loadFromConfig()).map((plugin) => plugin.id).join(", "))

const notes = "Ana ships the release on Friday. Someone books the room."
console.log(JSON.stringify(await runtime.commands.run("tldr", notes)))
console.log(JSON.stringify(await runtime.commands.run("paste-to-tasks", notes)))

// The gate is closed: choosing a model needs plugins.entries.tldr.llm.allow_model_override.
try {
  await runtime.llm.forPlugin("tldr").complete({ messages: [{ role: "user", content: "hi" }], model: "gpt-4.1" })
} catch (error) {
  if (isPluginLlmError(error) && error._tag === "PluginLlmTrustError") console.log("refused:", error.override, "->", error.configKey)
}

// A remote plugin gets the same lane over HTTP, authenticated by its registrant token (mounted by the host).
const handler = createPluginLlmHandler({ runtime, pluginForToken: (token) => (token === "tok-1" ? "remote-notes" : undefined) })
const response = await handler.handle({
  method: "POST",
  path: "/api/llm/complete",
  headers: { "x-llm-worker-registrant-token": "tok-1" },
  body: { messages: [{ role: "user", content: "ping" }], purpose: "health" }
})
console.log("http:", response.status, response.body["text"], response.body["model"], JSON.stringify(response.body["usage"]))
await replay.close()
