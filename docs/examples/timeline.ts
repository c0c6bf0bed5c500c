import { anthropicScheme, parseSseText, ResponseCollector, Timeline, type Event } from "llm-worker"
import { sseText } from "llm-worker/testing"

// An Anthropic Messages stream: a text block, then two tool calls whose argument fragments arrive in pieces.
const event = (data: Record<string, unknown>) => ({ event: String(data["type"]), data: JSON.stringify(data) })
const start = (index: number, block: Record<string, unknown>) => event({ type: "content_block_start", index, content_block: block })
const delta = (index: number, d: Record<string, unknown>) => event({ type: "content_block_delta", index, delta: d })
const json = (index: number, partial_json: string) => delta(index, { type: "input_json_delta", partial_json })
const transcript = sseText([
  event({ type: "message_start", message: { id: "msg_1", role: "assistant", content: [], usage: { input_tokens: 120, output_tokens: 1 } } }),
  start(0, { type: "text", text: "" }),
  delta(0, { type: "text_delta", text: "Checking both " }),
  delta(0, { type: "text_delta", text: "cities." }),
  event({ type: "content_block_stop", index: 0 }),
  start(1, { type: "tool_use", id: "toolu_a", name: "get_weather", input: {} }),
  json(1, '{"city":'),
  json(1, '"Paris"}'),
  event({ type: "content_block_stop", index: 1 }),
  start(2, { type: "tool_use", id: "toolu_b", name: "get_weather", input: {} }),
  json(2, '{"city":"Oslo"}'),
  event({ type: "content_block_stop", index: 2 }),
  event({ type: "message_delta", delta: { stop_reason: "tool_use" }, usage: { output_tokens: 48 } }),
  event({ type: "message_stop" })
])

// The scheme's decoder turns provider SSE into neutral events; no network involved.
const decoder = anthropicScheme.decoder()
const events: Array<Event> = [...parseSseText(transcript).flatMap((message) => decoder.push(message)), ...decoder.end()]

// One timeline per response. Each block gets its own scope, so per-block state needs no bookkeeping.
const timeline = new Timeline()
const response = new ResponseCollector(timeline)
timeline.onBlock("tool_use", (meta, at) => {
  let fragments = 0
  return {
    onDelta: () => void fragments++,
    onStop: () => console.log(`block ${at.index} (${meta.name} ${meta.id}): ${fragments} fragments`)
  }
})
timeline.onMeta("usage", (usage) => console.log("usage event:", JSON.stringify(usage)))
timeline.onIssue((issue) => console.log("issue:", issue.kind, issue.index))

for (const e of events) timeline.dispatch(e)
timeline.dispatch({ type: "block_delta", index: 7, delta: { kind: "text", text: "stray" } }) // recorded, not thrown
timeline.finish()

const result = response.result()
console.log("text:", response.text.text)
console.log("calls:", response.toolCalls.calls.map((call) => `${call.name}${call.arguments}`).join(" "))
console.log("stop:", result.stopReason, "usage:", JSON.stringify(result.usage))
console.log("history items:", result.items.map((item) => item.type).join(","))
