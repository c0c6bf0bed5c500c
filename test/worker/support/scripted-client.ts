import type { LlmClient, StreamOptions } from "../../../src/llm/client.ts"
import type { Event } from "../../../src/llm/event.ts"
import { LlmCancelled } from "../../../src/llm/llm-error.ts"
import type { Request } from "../../../src/llm/request.ts"
import type { SchemeName } from "../../../src/llm/scheme.ts"

/** One scripted response: its events, optionally paced, or a stall that never ends on its own. */
export interface ScriptedResponse {
  readonly events: ReadonlyArray<Event>
  /** Wait this long before each event. */
  readonly delayMs?: number
  /** After these events, wait forever (until the signal fires, or truly forever when `ignoreSignal`). */
  readonly stallAfter?: number
  /** Throw this instead of ending normally (after the events). */
  readonly fail?: unknown
  readonly ignoreSignal?: boolean
}

type Script = ScriptedResponse | ((request: Request, n: number) => ScriptedResponse)

/**
 * A deterministic `LlmClient` for unit tests: replays neutral events turn by turn and records every request.
 * It behaves like a real client towards its signal: it throws `LlmCancelled` when the signal fires.
 */
export class ScriptedClient implements LlmClient {
  readonly provider = "scripted"
  readonly model = "scripted-model"
  readonly requests: Array<Request> = []
  readonly #script: Array<Script>

  constructor(script: ReadonlyArray<Script>, readonly scheme: SchemeName = "anthropic") {
    this.#script = [...script]
  }

  encodeRequest(request: Request): string {
    return JSON.stringify({
      model: request.model,
      system: request.systemPrompt,
      tools: request.tools,
      config: request.config,
      items: request.items
    })
  }

  validate(): ReadonlyArray<never> {
    return []
  }

  stream(request: Request, options?: StreamOptions): AsyncIterable<Event> {
    const n = this.requests.length
    this.requests.push(structuredClone(request))
    const step = this.#script[n] ?? this.#script[this.#script.length - 1]
    if (step === undefined) throw new Error("script exhausted")
    const response = typeof step === "function" ? step(request, n) : step
    const signal = options?.signal
    return (async function* () {
      const wait = (ms: number): Promise<void> =>
        new Promise((resolve, reject) => {
          const timer = setTimeout(resolve, ms)
          if (response.ignoreSignal !== true) {
            signal?.addEventListener("abort", () => {
              clearTimeout(timer)
              reject(new LlmCancelled({ message: "cancelled" }))
            }, { once: true })
          }
        })
      for (const [i, event] of response.events.entries()) {
        if (response.stallAfter === i) await wait(1e9)
        if (response.delayMs !== undefined) await wait(response.delayMs)
        if (signal?.aborted && response.ignoreSignal !== true) throw new LlmCancelled({ message: "cancelled" })
        yield event
      }
      if (response.stallAfter === response.events.length) await wait(1e9)
      if (response.fail !== undefined) throw response.fail
    })()
  }
}

/** A complete text response. */
export const textResponse = (text: string, usage?: { inputTokens: number; outputTokens: number }): ScriptedResponse => ({
  events: [
    { type: "status", status: "started" },
    { type: "block_start", index: 0, block: { kind: "text" } },
    ...[...chunks(text)].map((t): Event => ({ type: "block_delta", index: 0, delta: { kind: "text", text: t } })),
    { type: "block_stop", index: 0, stopReason: "end_turn" },
    ...(usage === undefined ? [] : [{ type: "usage", ...usage } as Event]),
    { type: "status", status: "completed", stopReason: "end_turn" }
  ]
})

/** A response made of tool calls (optionally after some text), each block keyed by its own index. */
export const toolCallResponse = (
  calls: ReadonlyArray<{ readonly id: string; readonly name: string; readonly args: string }>,
  text?: string
): ScriptedResponse => {
  const events: Array<Event> = [{ type: "status", status: "started" }]
  let index = 0
  if (text !== undefined) {
    events.push({ type: "block_start", index, block: { kind: "text" } })
    events.push({ type: "block_delta", index, delta: { kind: "text", text } })
    events.push({ type: "block_stop", index })
    index++
  }
  for (const call of calls) {
    events.push({ type: "block_start", index, block: { kind: "tool_use", id: call.id, name: call.name } })
    const half = Math.floor(call.args.length / 2)
    events.push({ type: "block_delta", index, delta: { kind: "input_json", json: call.args.slice(0, half) } })
    events.push({ type: "block_delta", index, delta: { kind: "input_json", json: call.args.slice(half) } })
    events.push({ type: "block_stop", index, stopReason: "tool_use" })
    index++
  }
  events.push({ type: "status", status: "completed", stopReason: "tool_use" })
  return { events }
}

function* chunks(text: string): Iterable<string> {
  for (let i = 0; i < text.length; i += 4) yield text.slice(i, i + 4)
}
