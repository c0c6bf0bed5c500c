import type { SchemeName } from "../../src/llm/scheme.ts"
import { loadTranscript } from "./sse-fixtures.ts"

/**
 * One response with many tool calls of chosen sizes, in each provider's genuine wire shape: the recorded
 * `parallel-tool-calls.sse` of each scheme (test/fixtures/sse) scaled up. Its events are the templates: every
 * call is opened, streamed and closed with copies of the recorded events for its first call, only ids, indices,
 * the tool name and the argument text changed; the recorded closing events end the response. Each call's
 * arguments are `{"data":"aaa…"}` of exactly the requested UTF-8 bytes, streamed in pieces of `pieceChars`
 * (Gemini sends a call's arguments whole, as recorded).
 */

/** The name every call uses; register a tool of this name taking `{ data: string }`. */
export const SCALED_TOOL = "store"

/** One SSE event: its type, if named, and its data. */
export interface SseEvent {
  readonly event?: string
  readonly data: string
}

/** The events of a recorded transcript, in order (recordings end their lines with LF or CRLF). */
export const recordedEvents = (scheme: SchemeName, name: string): ReadonlyArray<SseEvent> =>
  loadTranscript(scheme, name)
    .split(/(?:\r?\n){2,}/)
    .filter((block) => block.trim() !== "")
    .map((block) => {
      const lines = block.split(/\r?\n/)
      const event = lines.find((line) => line.startsWith("event: "))?.slice("event: ".length)
      const data = lines.find((line) => line.startsWith("data: "))?.slice("data: ".length) ?? ""
      return event === undefined ? { data } : { event, data }
    })

const events = (scheme: SchemeName): ReadonlyArray<SseEvent> => recordedEvents(scheme, "parallel-tool-calls")

const frame = (event: SseEvent): string => `${event.event === undefined ? "" : `event: ${event.event}\n`}data: ${event.data}\n\n`

type Json = Record<string, unknown>
const parse = (data: string): Json => JSON.parse(data) as Json
const at = (value: unknown, ...path: ReadonlyArray<string | number>): Json =>
  path.reduce<unknown>((node, key) => (node as Record<string | number, unknown>)[key], value) as Json

/** The argument text of one call: `{"data":"aaa…"}`, exactly `bytes` long (at least 11). */
export const argumentText = (bytes: number): string => `{"data":"${"a".repeat(Math.max(0, bytes - 11))}"}`

const pieces = (text: string, size: number): Array<string> => {
  const out: Array<string> = []
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size))
  return out
}

/** A template's JSON text with one string field as a hole: `fill(value)` writes it (JSON-escaped) in place. */
const withHole = (template: Json, set: (json: Json, hole: string) => void): ((value: string) => string) => {
  const marker = "@@HOLE@@"
  const copy = structuredClone(template)
  set(copy, marker)
  const [before, after] = JSON.stringify(copy).split(JSON.stringify(marker)) as [string, string]
  return (value) => before + JSON.stringify(value) + after
}

const chat = (sizes: ReadonlyArray<number>, pieceChars: number): string => {
  const recorded = events("openai-chat")
  const open = parse(recorded[0]!.data)
  const delta = parse(recorded[1]!.data)
  const closing = recorded.filter((event) => event.data === "[DONE]" || /"finish_reason":"|"usage":\{/.test(event.data))
  const out: Array<string> = []
  sizes.forEach((size, index) => {
    const first = structuredClone(open)
    const call = at(first, "choices", 0, "delta", "tool_calls", 0)
    call["index"] = index
    call["id"] = `call_scaled${String(index).padStart(4, "0")}`
    at(call, "function")["name"] = SCALED_TOOL
    out.push(frame({ data: JSON.stringify(first) }))
    const piece = withHole(delta, (json, hole) => {
      const call = at(json, "choices", 0, "delta", "tool_calls", 0)
      call["index"] = index
      at(call, "function")["arguments"] = hole
    })
    for (const text of pieces(argumentText(size), pieceChars)) out.push(frame({ data: piece(text) }))
  })
  for (const event of closing) out.push(frame(event))
  return out.join("")
}

const anthropic = (sizes: ReadonlyArray<number>, pieceChars: number): string => {
  const recorded = events("anthropic")
  const find = (type: string, nth = 0): SseEvent => recorded.filter((event) => event.event === type)[nth]!
  const start = parse(find("content_block_start", 1).data)
  const delta = parse(find("content_block_delta", 1).data)
  const stop = parse(find("content_block_stop", 1).data)
  const out = [frame(find("message_start"))]
  sizes.forEach((size, index) => {
    const block = structuredClone(start)
    block["index"] = index
    at(block, "content_block")["id"] = `toolu_scaled${String(index).padStart(4, "0")}`
    at(block, "content_block")["name"] = SCALED_TOOL
    out.push(frame({ event: "content_block_start", data: JSON.stringify(block) }))
    const piece = withHole(delta, (json, hole) => {
      json["index"] = index
      at(json, "delta")["partial_json"] = hole
    })
    for (const text of pieces(argumentText(size), pieceChars)) out.push(frame({ event: "content_block_delta", data: piece(text) }))
    out.push(frame({ event: "content_block_stop", data: JSON.stringify({ ...stop, index }) }))
  })
  out.push(frame(find("message_delta")), frame(find("message_stop")))
  return out.join("")
}

const responses = (sizes: ReadonlyArray<number>, pieceChars: number): string => {
  const recorded = events("openai-responses")
  const find = (type: string): Json => parse(recorded.find((event) => event.event === type)!.data)
  const created = find("response.created")
  const progress = find("response.in_progress")
  const added = find("response.output_item.added")
  const delta = find("response.function_call_arguments.delta")
  const argsDone = find("response.function_call_arguments.done")
  const itemDone = find("response.output_item.done")
  const completed = find("response.completed")
  let sequence = 0
  const out: Array<string> = []
  const push = (type: string, json: Json) => out.push(frame({ event: type, data: JSON.stringify({ ...json, sequence_number: sequence++ }) }))
  push("response.created", created)
  push("response.in_progress", progress)
  const items: Array<Json> = []
  sizes.forEach((size, index) => {
    const itemId = `fc_scaled${String(index).padStart(4, "0")}`
    const item = { ...at(added, "item"), id: itemId, call_id: `call_scaled${String(index).padStart(4, "0")}`, name: SCALED_TOOL }
    push("response.output_item.added", { ...added, output_index: index, item })
    const args = argumentText(size)
    const piece = withHole(delta, (json, hole) => {
      json["item_id"] = itemId
      json["output_index"] = index
      json["delta"] = hole
      json["sequence_number"] = -1
    })
    // Sequence numbers are written by hand here: the template's hole is the delta, not the number.
    for (const text of pieces(args, pieceChars)) out.push(frame({ event: "response.function_call_arguments.delta", data: piece(text).replace('"sequence_number":-1', `"sequence_number":${sequence++}`) }))
    push("response.function_call_arguments.done", { ...argsDone, item_id: itemId, output_index: index, arguments: args })
    const done = { ...at(itemDone, "item"), id: itemId, call_id: item.call_id, name: SCALED_TOOL, arguments: args }
    push("response.output_item.done", { ...itemDone, output_index: index, item: done })
    items.push(done)
  })
  push("response.completed", { ...completed, response: { ...at(completed, "response"), output: items } })
  return out.join("")
}

const gemini = (sizes: ReadonlyArray<number>): string => {
  const recorded = events("gemini")
  const first = parse(recorded[0]!.data)
  const last = recorded[recorded.length - 1]!
  const out: Array<string> = []
  sizes.forEach((size) => {
    const chunk = withHole(first, (json, hole) => {
      const content = at(json, "candidates", 0, "content")
      content["parts"] = [{ functionCall: { name: SCALED_TOOL, args: { data: hole } } }]
    })
    out.push(frame({ data: chunk("a".repeat(Math.max(0, size - 11))) }))
  })
  out.push(frame(last))
  return out.join("")
}

/** The SSE transcript of one response whose calls have these argument sizes (UTF-8 bytes each, at least 11). */
export const scaledToolCalls = (scheme: SchemeName, sizes: ReadonlyArray<number>, pieceChars = 64 * 1024): string => {
  switch (scheme) {
    case "openai-chat":
      return chat(sizes, pieceChars)
    case "anthropic":
      return anthropic(sizes, pieceChars)
    case "openai-responses":
      return responses(sizes, pieceChars)
    case "gemini":
      return gemini(sizes)
  }
}
