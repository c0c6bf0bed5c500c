import type { Event } from "./event.ts"
import type { ArgumentTally, ResponseLimits } from "./limits.ts"
import type { LintTarget } from "../schema/lint.ts"
import type { Request } from "./request.ts"

/** One server-sent event as delivered by the SSE parser. */
export interface SseMessage {
  readonly event: string
  readonly data: string
  readonly id?: string
}

/** An option the chosen provider cannot honour; reported by `validate()` instead of being dropped silently. */
export interface ConfigWarning {
  readonly _tag: "ConfigWarning"
  readonly scheme: SchemeName
  readonly setting: string
  readonly message: string
}

/** The four wire formats: OpenAI Chat Completions, OpenAI Responses, Anthropic Messages and Gemini. */
export type SchemeName = "openai-chat" | "openai-responses" | "anthropic" | "gemini"

/**
 * Stateful conversion of one response's SSE messages into neutral events. `push` may return several events;
 * `end` closes every block still open (a truncated stream must not leave a tool call dangling) and reports what
 * was missing.
 */
export interface StreamDecoder {
  /** Decodes one SSE message into the events it completes (possibly none, possibly several). */
  push(message: SseMessage): ReadonlyArray<Event>
  /** Ends the response: closes every block still open and reports what a truncated stream was missing. */
  end(): ReadonlyArray<Event>
  /**
   * Whether `end()` called now would complete the response: it has seen everything a whole response needs,
   * though not necessarily its final marker (Chat after `finish_reason` but before `[DONE]`, Gemini after
   * `finishReason`). A stream that goes quiet in that state is ended rather than failed. Absent: never.
   */
  isComplete?(): boolean
}

/** What the transport tells a decoder for one response. */
export interface DecoderOptions {
  /**
   * The client's size bounds, for what a decoder holds before it becomes an event (argument text before its
   * call's name, a signature streamed in pieces); it throws `LlmLimitExceeded` past them.
   */
  readonly limits?: ResponseLimits
  /**
   * The transport's count of the response's argument text, which what the decoder holds back is checked with
   * (`maxTotalArgumentBytes`). Absent (a decoder used on its own): what it holds back is checked alone.
   */
  readonly argumentTally?: ArgumentTally
}

/**
 * A wire format, with no I/O: neutral request → exact provider JSON text, provider SSE → neutral events.
 * Providers (endpoint, auth, quirks) sit on top of a scheme.
 */
export interface Scheme {
  readonly name: SchemeName
  /**
   * What tool schemas are linted against at registration when they differ from `name` (Gemini's OpenAPI-subset
   * `parameters` is `"gemini-subset"`).
   */
  readonly toolLintTarget?: LintTarget
  /** The request body, byte-identical for the same request. */
  encodeRequest(request: Request): string
  /**
   * A decoder for one response. Pass the request the response answers: wire tool names are mapped back to the
   * neutral names of `request.tools` (a provider may not accept a neutral name as it is, e.g. dots on OpenAI).
   * Without it, tool names are reported as they came over the wire.
   */
  decoder(request?: Request, options?: DecoderOptions): StreamDecoder
  /** The request settings this wire format cannot honour, as warnings (nothing is dropped silently). */
  validate(request: Request): ReadonlyArray<ConfigWarning>
}
