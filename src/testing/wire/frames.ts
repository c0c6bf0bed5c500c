import type { ScriptedResponse, ScriptPart, ScriptUsage } from "../script.ts"

/** One write of an encoded reply: SSE text, sent after waiting `delayMs` (a scripted stall). */
export interface SseFrame {
  readonly text: string
  readonly delayMs: number
}

/** A reply as bytes on the wire: the frames in order, then how the connection ends. */
export interface EncodedStream {
  readonly kind: "sse"
  readonly frames: ReadonlyArray<SseFrame>
  /** `end`: the body ends after the frames; `hang`: it stays open and silent; `reset`: the connection drops. */
  readonly close: "end" | "hang" | "reset"
}

/**
 * A non-streamed reply: the provider's JSON body, sent whole after `delayMs` (the script's stalls added up). A
 * reply that hangs never answers; one that is cut sends half the body, then ends it (`end`) or drops it (`reset`).
 */
export interface EncodedJson {
  readonly kind: "json"
  readonly body: string
  readonly delayMs: number
  readonly close: "end" | "hang" | "reset" | "cut"
}

/** A refused request: status, headers and the provider's error body. */
export interface EncodedHttpError {
  readonly kind: "status"
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
}

export type ContentPart = Exclude<ScriptPart, { readonly type: "stall" }>

/**
 * What one wire format contributes: the events that open a reply, each content part's events, and the events
 * that end it (terminal or error). Each returns SSE event texts; the driver spreads the scripted stalls over them.
 */
export interface FormatWriter {
  open(): ReadonlyArray<string>
  /**
   * `unfinished`: the reply breaks off inside this part (it is the last one and the reply ends in an error, a
   * hang or a cut), so its closing events are not sent, as when a real stream fails mid-block.
   */
  part(part: ContentPart, position: number, unfinished: boolean): ReadonlyArray<string>
  complete(): ReadonlyArray<string>
  error(code: string, message: string): ReadonlyArray<string>
}

export type WriterFactory = (response: ScriptedResponse, context: { readonly ordinal: number }) => FormatWriter

/** `event: <type>` + `data: <json>` (Anthropic, Responses). */
export const namedEvent = (type: string, data: unknown): string => `event: ${type}\ndata: ${JSON.stringify(data)}\n\n`

/** `data: <json>` with the given line ending (Chat uses `\n`; Gemini's servers use `\r\n`). */
export const dataEvent = (data: unknown, newline = "\n"): string => `data: ${typeof data === "string" ? data : JSON.stringify(data)}${newline}${newline}`

/**
 * The usage a reply reports. Every provider reports usage on every reply (and `@ai-sdk/anthropic` refuses a
 * `message_start` without it), so a script that names none reports zero input and zero output tokens.
 */
export const reportedUsage = (response: ScriptedResponse): ScriptUsage => response.tokenUsage ?? NO_USAGE

const NO_USAGE: ScriptUsage = Object.freeze({ inputTokens: 0, outputTokens: 0 })

/** The usage counts a format reports apart from each other: neutral input minus the cache, output minus reasoning. */
export const uncachedInput = (usage: ScriptUsage): number => usage.inputTokens - (usage.cacheReadTokens ?? 0) - (usage.cacheWriteTokens ?? 0)

/**
 * Runs a writer over a reply: the opening events wait for any stall scripted before the first part, each part's
 * first event carries the stalls before it, and a stall at the end delays the ending.
 */
export const writeResponse = (response: ScriptedResponse, writer: FormatWriter): EncodedStream => {
  const frames: Array<SseFrame> = []
  let pending = 0
  const push = (texts: ReadonlyArray<string>) => {
    texts.forEach((text, i) => frames.push({ text, delayMs: i === 0 ? pending : 0 }))
    if (texts.length > 0) pending = 0
  }
  let opened = false
  let position = 0
  const contentParts = response.parts.filter((part) => part.type !== "stall").length
  const breaksOff = response.ending.type !== "complete"
  for (const part of response.parts) {
    if (part.type === "stall") {
      pending += part.ms
      continue
    }
    if (!opened) {
      opened = true
      push(writer.open())
    }
    push(writer.part(part, position, breaksOff && position === contentParts - 1))
    position++
  }
  if (!opened) push(writer.open())
  const ending = response.ending
  switch (ending.type) {
    case "complete":
      push(writer.complete())
      break
    case "error":
      push(writer.error(ending.code, ending.message))
      break
    case "hang":
    case "cut":
      break
  }
  // A stall after the last event: the connection stays quiet that long before it ends.
  if (pending > 0) frames.push({ text: "", delayMs: pending })
  const close = ending.type === "hang" ? "hang" : ending.type === "cut" && ending.how === "reset" ? "reset" : "end"
  return { kind: "sse", frames, close }
}

/**
 * `{ [name]: counts }` with only the counts the script gives, or nothing: a count the script leaves out is not
 * reported as 0, so the decoded usage says exactly what the script said.
 */
export const details = (name: string, counts: Readonly<Record<string, number | undefined>>): Record<string, Record<string, number>> => {
  const present = Object.entries(counts).filter((entry): entry is [string, number] => entry[1] !== undefined)
  return present.length === 0 ? {} : { [name]: Object.fromEntries(present) }
}
