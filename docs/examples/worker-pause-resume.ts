import { createLlmClient, defineTool, PreToolCall, Worker } from "llm-worker"
import { sseText, startReplayProvider } from "llm-worker/testing"

// One response with three parallel tool calls, then a closing answer.
const chunk = (delta: Record<string, unknown>, finish_reason: string | null = null) => ({
  data: JSON.stringify({ id: "chatcmpl-1", object: "chat.completion.chunk", choices: [{ index: 0, delta, finish_reason }] })
})
const call = (index: number, name: string) =>
  chunk({ tool_calls: [{ index, id: `call_${name}`, type: "function", function: { name, arguments: "{}" } }] })
const replay = await startReplayProvider({
  scheme: "openai-chat",
  script: [
    { kind: "stream", transcript: sseText([call(0, "list_files"), call(1, "delete_files"), call(2, "ping"), chunk({}, "tool_calls"), { data: "[DONE]" }]) },
    { kind: "stream", transcript: sseText([chunk({ content: "Done." }), chunk({}, "stop"), { data: "[DONE]" }]) }
  ]
})
const client = createLlmClient({ provider: "openai", model: "gpt-4.1-mini", apiKey: "sk-example", baseUrl: replay.baseUrl })
const worker = Worker.create({ client })
const ran: Array<string> = []
const tool = (name: string) => defineTool({ name, description: name, execute: () => (ran.push(name), `${name} ok`) })
worker.registerTools(["list_files", "delete_files", "ping"].map(tool))

// Destructive calls wait for a human; pings are skipped. Decisions made before a pause are kept.
let approved: boolean | undefined
worker.addHook("PreToolCall", ({ call }) => {
  console.log("PreToolCall asked about:", call.name)
  if (call.name === "ping") return PreToolCall.skip("pings are not needed")
  if (call.name !== "delete_files") return PreToolCall.continue()
  if (approved === undefined) return PreToolCall.pause("delete_files needs approval")
  return approved ? PreToolCall.continue() : PreToolCall.deny("the user said no")
})
worker.subscribe({ onToolResult: ({ outcome }) => console.log("result:", outcome.name, outcome.status, "-", outcome.output) })

const first = await worker.run("Clean up the temp folder")
if (first.status === "paused") console.log("run: paused -", first.pauseReason, "| pending:", worker.hasPendingCalls, "| ran:", ran.length)

approved = false // the user's answer; resume() asks the hooks only about undecided calls
const second = await worker.resume()
console.log("resume:", second.status, "| pending:", worker.hasPendingCalls, "| ran:", ran.join(","))
console.log("outputs in model order:", second.items.filter((item) => item.type === "function_call_output").map((item) => item.callId).join(","))
await replay.close()
