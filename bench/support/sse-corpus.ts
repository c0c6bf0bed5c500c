import { readFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import type { SchemeName } from "#internal/llm/scheme"
import { parseSseText } from "#internal/llm/sse"

/**
 * Large SSE bodies for throughput benchmarks, made of genuine events from the recorded-style transcripts in
 * test/fixtures/sse: the text-delta events are cycled in order, and whole tool-call blocks are repeated with fresh
 * indices and ids so every call stays a valid, separate call. Event payloads are re-serialised compactly
 * (`JSON.stringify`), which only changes the transcripts' whitespace.
 */

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "test", "fixtures", "sse")

type Json = Record<string, unknown>

interface RawEvent {
  readonly event: string
  readonly data: Json | string
}

const load = (scheme: SchemeName, name: string): ReadonlyArray<RawEvent> =>
  parseSseText(readFileSync(join(FIXTURES, scheme, `${name}.sse`), "utf8")).map((m) => ({
    event: m.event,
    data: m.data === "[DONE]" ? m.data : (JSON.parse(m.data) as Json)
  }))

const serialise = (events: ReadonlyArray<RawEvent>, named: boolean): string =>
  events
    .map((e) => `${named ? `event: ${e.event}\n` : ""}data: ${typeof e.data === "string" ? e.data : JSON.stringify(e.data)}\n\n`)
    .join("")

/** A deep copy of a genuine event with `edit` applied to its payload. */
const variant = (event: RawEvent, edit: (data: Json) => void): RawEvent => {
  const data = structuredClone(event.data) as Json
  edit(data)
  return { event: event.event, data }
}


const pick = (events: ReadonlyArray<RawEvent>, test: (data: Json, name: string) => boolean): ReadonlyArray<RawEvent> =>
  events.filter((e) => typeof e.data !== "string" && test(e.data, e.event))

const one = (events: ReadonlyArray<RawEvent>, test: (data: Json, name: string) => boolean): RawEvent => {
  const found = pick(events, test)[0]
  if (found === undefined) throw new Error("sse-corpus: fixture event not found")
  return found
}

const cycle = <T>(items: ReadonlyArray<T>, count: number): ReadonlyArray<T> =>
  Array.from({ length: count }, (_, i) => items[i % items.length] as T)

/** The object at `path`, or an empty object when any step is missing (so filters can probe freely). */
const at = (value: unknown, ...path: ReadonlyArray<string | number>): Json => {
  let current = value
  for (const key of path) current = typeof current === "object" && current !== null ? (current as Record<string | number, unknown>)[key] : undefined
  return typeof current === "object" && current !== null ? (current as Json) : {}
}

export interface CorpusShape {
  /** Text-delta events in the single text block. */
  readonly textDeltas: number
  /** Separate tool-call blocks after it, each with its genuine argument deltas. */
  readonly toolCalls: number
}

const anthropic = ({ textDeltas, toolCalls }: CorpusShape): string => {
  const text = load("anthropic", "text")
  const tools = load("anthropic", "parallel-tool-calls")
  const deltas = pick(text, (d) => d["type"] === "content_block_delta")
  const toolBlock = tools.filter((e) => typeof e.data !== "string" && e.data["index"] === 1)
  const events: Array<RawEvent> = [
    one(text, (d) => d["type"] === "message_start"),
    one(text, (d) => d["type"] === "content_block_start"),
    ...cycle(deltas, textDeltas),
    one(text, (d) => d["type"] === "content_block_stop")
  ]
  for (let k = 1; k <= toolCalls; k++) {
    for (const event of toolBlock) {
      events.push(
        variant(event, (d) => {
          d["index"] = k
          if (d["type"] === "content_block_start") at(d, "content_block")["id"] = `toolu_bench_${k}`
        })
      )
    }
  }
  events.push(one(tools, (d) => d["type"] === "message_delta"), one(tools, (d) => d["type"] === "message_stop"))
  return serialise(events, true)
}

const openAiChat = ({ textDeltas, toolCalls }: CorpusShape): string => {
  const text = load("openai-chat", "text")
  const tools = load("openai-chat", "parallel-tool-calls")
  const withContent = pick(text, (d) => typeof at(d, "choices", 0, "delta")["content"] === "string")
  const [opening, ...deltas] = withContent
  const firstCall = pick(tools, (d) => at(d, "choices", 0, "delta", "tool_calls", 0)["index"] === 0)
  const events: Array<RawEvent> = [opening as RawEvent, ...cycle(deltas, textDeltas)]
  for (let k = 0; k < toolCalls; k++) {
    for (const event of firstCall) {
      events.push(
        variant(event, (d) => {
          const call = at(d, "choices", 0, "delta", "tool_calls", 0)
          call["index"] = k
          if (call["id"] !== undefined) call["id"] = `call_bench_${k}`
          delete at(d, "choices", 0, "delta")["role"]
        })
      )
    }
  }
  events.push(
    one(tools, (d) => at(d, "choices", 0)["finish_reason"] === "tool_calls"),
    one(tools, (d) => (d["choices"] as ReadonlyArray<unknown>).length === 0),
    { event: "message", data: "[DONE]" }
  )
  return serialise(events, false)
}

const openAiResponses = ({ textDeltas, toolCalls }: CorpusShape): string => {
  const text = load("openai-responses", "text")
  const tools = load("openai-responses", "reasoning-tool-call")
  const byType = (events: ReadonlyArray<RawEvent>, type: string) => pick(events, (d) => d["type"] === type)
  const callEvents = pick(tools, (d) => d["output_index"] === 1)
  const events: Array<RawEvent> = [
    ...byType(text, "response.created"),
    ...byType(text, "response.in_progress"),
    ...byType(text, "response.output_item.added"),
    ...byType(text, "response.content_part.added"),
    ...cycle(byType(text, "response.output_text.delta"), textDeltas),
    ...byType(text, "response.output_text.done"),
    ...byType(text, "response.content_part.done"),
    ...byType(text, "response.output_item.done")
  ]
  for (let k = 1; k <= toolCalls; k++) {
    for (const event of callEvents) {
      events.push(
        variant(event, (d) => {
          d["output_index"] = k
          if (d["item_id"] !== undefined) d["item_id"] = `fc_bench_${k}`
          const item = d["item"] as Json | undefined
          if (item !== undefined) {
            item["id"] = `fc_bench_${k}`
            item["call_id"] = `call_bench_${k}`
          }
        })
      )
    }
  }
  events.push(...byType(tools, "response.completed"))
  let sequence = 0
  return serialise(
    events.map((e) => variant(e, (d) => void (d["sequence_number"] = sequence++))),
    true
  )
}

const gemini = ({ textDeltas, toolCalls }: CorpusShape): string => {
  const text = load("gemini", "text")
  const tools = load("gemini", "parallel-tool-calls")
  const isFinal = (d: Json) => at(d, "candidates", 0)["finishReason"] !== undefined
  const chunks = pick(text, (d) => !isFinal(d))
  // Each genuine function-call chunk carries two calls; repeat it until `toolCalls` calls have been sent.
  const callChunk = one(tools, (d) => !isFinal(d))
  const events: Array<RawEvent> = [...cycle(chunks, textDeltas), ...cycle([callChunk], Math.ceil(toolCalls / 2)), one(tools, isFinal)]
  return serialise(events, false)
}

const BUILDERS: Readonly<Record<SchemeName, (shape: CorpusShape) => string>> = {
  anthropic,
  "openai-chat": openAiChat,
  "openai-responses": openAiResponses,
  gemini
}

/** One response's SSE text for `scheme`: a text block of `textDeltas` deltas, then `toolCalls` tool calls. */
export const syntheticSse = (scheme: SchemeName, shape: CorpusShape): string => BUILDERS[scheme](shape)

/** Splits bytes into pieces of `size` (the last may be shorter), as a socket would deliver them. */
export const chunkBytes = (bytes: Uint8Array, size: number): ReadonlyArray<Uint8Array> => {
  const out: Array<Uint8Array> = []
  for (let from = 0; from < bytes.length; from += size) out.push(bytes.subarray(from, from + size))
  return out
}
