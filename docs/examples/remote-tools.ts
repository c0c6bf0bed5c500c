import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { sseText, startReplayProvider } from "llm-worker/testing"
import { deliveryHeaders, startToolHost, verifyDelivery } from "llm-worker/remote"

// The model: a replay server answering like OpenAI Chat — first it calls get_weather, then it answers.
const chunk = (delta: object, finish_reason: string | null = null) => ({ data: JSON.stringify({ choices: [{ index: 0, delta, finish_reason }] }) })
const call = { tool_calls: [{ index: 0, id: "call_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Tokyo"}' } }] }
const model = await startReplayProvider({
  scheme: "openai-chat",
  script: [
    { kind: "stream", transcript: sseText([chunk(call), chunk({}, "tool_calls"), { data: "[DONE]" }]) },
    { kind: "stream", transcript: sseText([chunk({ content: "Sunny in Tokyo, 22 °C." }), chunk({}, "stop"), { data: "[DONE]" }]) }
  ]
})

// The host: one role; keys and base URL come from the provider's usual variables.
const host = await startToolHost({
  port: 0,
  config: { roles: { assistant: { provider: "openai", model: "gpt-4.1-mini", system_prompt: "Answer briefly." } } },
  env: { OPENAI_API_KEY: "sk-example", OPENAI_BASE_URL: model.baseUrl },
  requestLog: "quiet" // the request log would go to stderr; see "What the host says on stderr"
})
console.log(`host ready: ${host.readyLine.startsWith("llm-worker host listening on http://127.0.0.1:")}`)

// A plugin in any language: an HTTP endpoint on loopback that checks the host's signature and answers JSON.
let secret = ""
const plugin = createServer((request, response) => {
  let body = ""
  request.setEncoding("utf8").on("data", (part: string) => (body += part))
  request.on("end", () => {
    const check = verifyDelivery(secret, deliveryHeaders(request.headers), body)
    const { name, arguments: args, call_id } = JSON.parse(body) as { name: string; arguments: { city: string }; call_id: string }
    console.log(`plugin got ${name}(${JSON.stringify(args)}) ${call_id}, signature ok: ${check.ok}`)
    response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ output: { city: args.city, temp_c: 22, sky: "sunny" } }))
  })
})
await new Promise<void>((resolve) => plugin.listen(0, "127.0.0.1", resolve))
const callbackUrl = `http://127.0.0.1:${(plugin.address() as AddressInfo).port}/tool_invoke`

const post = async (path: string, body: unknown): Promise<Record<string, unknown>> =>
  (await fetch(`${host.url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) })).json() as Promise<Record<string, unknown>>

const parameters = { type: "object", properties: { city: { type: "string" } }, required: ["city"] }
const registered = await post("/api/tools/register", { name: "get_weather", description: "Weather for a city", parameters, callback_url: callbackUrl, role: null, source: "weather_plugin" })
secret = registered["callback_secret"] as string
console.log(`registered: ${registered["ok"]} roles: ${JSON.stringify(registered["affected_roles"])} token issued: ${typeof registered["registrant_token"] === "string"}`)
console.log(`refused: ${(await post("/api/tools/register", { name: "spy", callback_url: "http://169.254.169.254/latest/meta-data/" }))["error"]}`)

const chat = await post("/api/chat", { role: null, message: "Weather in Tokyo?" })
console.log(`answer: ${chat["text"]}`)
console.log(`tool calls: ${JSON.stringify(chat["tool_calls"])}`)
console.log(`cleared: ${JSON.stringify((await post("/api/tools/clear", { role: null, source: "weather_plugin" }))["cleared"])}`)

await host.close()
plugin.close()
await model.close()
