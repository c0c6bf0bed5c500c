import type { StopReason } from "../llm/event.ts"

/**
 * A model's reply described in neutral terms — what it says, thinks and calls, what it costs, how it fails and
 * how fast it arrives — with nothing of any provider's wire format in it. The same script is encoded to each
 * format's genuine SSE (`encodeScriptStep`) by the replay provider, or played in process by `scriptedClient`.
 */

/** One span of the reply, in model order. Each chunk is one streamed delta. */
export type ScriptPart =
  | { readonly type: "text"; readonly chunks: ReadonlyArray<string> }
  | {
      readonly type: "reasoning"
      readonly chunks: ReadonlyArray<string>
      /**
       * The opaque token a provider needs to accept its reasoning back: Anthropic's `signature`, the Responses
       * item's `encrypted_content`, Gemini's `thoughtSignature`. Chat Completions has none; it is left out there.
       */
      readonly signature?: string
    }
  | {
      readonly type: "tool_call"
      /** Sent as the call id where the format has one; absent, each format's decoder makes one up. */
      readonly id?: string
      readonly name: string
      /** The argument JSON text in streamed pieces (Gemini sends it whole, as one object). */
      readonly chunks: ReadonlyArray<string>
    }
  /** Nothing is sent for this long: a pause before the next event (or before the first one, or the end). */
  | { readonly type: "stall"; readonly ms: number }

/** Token counts in the neutral sense (`Usage`): input includes cache reads and writes, output includes reasoning. */
export interface ScriptUsage {
  readonly inputTokens: number
  readonly outputTokens: number
  readonly cacheReadTokens?: number
  readonly cacheWriteTokens?: number
  readonly reasoningTokens?: number
}

/** How the reply ends once its parts are sent. */
export type ScriptEnding =
  /** The provider's terminal event: `[DONE]`, `message_stop`, `response.completed`, a `finishReason`. */
  | { readonly type: "complete" }
  /** An error event in the stream (overloaded, rate limited…), as the provider sends it mid-response. */
  | { readonly type: "error"; readonly code: string; readonly message: string }
  /** The connection stays open and silent: what idle and first-content deadlines are for. */
  | { readonly type: "hang" }
  /** The body ends without a terminal event (`end`), or the connection is dropped (`reset`). */
  | { readonly type: "cut"; readonly how: "end" | "reset" }

/** A streamed reply. */
export interface ScriptedResponse {
  readonly kind: "response"
  readonly parts: ReadonlyArray<ScriptPart>
  readonly tokenUsage?: ScriptUsage
  /** Default `end_turn`, or `tool_use` when the reply calls tools (as every provider reports it then). */
  readonly stopReason?: StopReason
  readonly ending: ScriptEnding
  /** The model name the provider echoes back; default `scripted-model`. */
  readonly responseModel?: string
}

/** A reply refused before any stream: an HTTP status with the provider's error body. */
export interface ScriptedHttpError {
  readonly kind: "http_error"
  readonly status: number
  /** The error message in the provider's body. */
  readonly message: string
  /** The provider's error type or code (`rate_limit_error`, `RESOURCE_EXHAUSTED`…); a default follows the status. */
  readonly code?: string
  /** Sent as `Retry-After` (seconds). */
  readonly retryAfterSeconds?: number
  readonly headers?: Readonly<Record<string, string>>
  /** The whole body as text, instead of the provider's error JSON. */
  readonly body?: string
}

/** One request's answer in a script: a reply built with `reply()`, or an HTTP error from `replyError()`. */
export type ScriptStep = ScriptedResponse | ScriptedHttpError

export const isScriptStep = (value: { readonly kind: string }): value is ScriptStep =>
  value.kind === "response" || value.kind === "http_error"

const chunksOf = (value: string | ReadonlyArray<string>): ReadonlyArray<string> =>
  (typeof value === "string" ? [value] : [...value]).filter((chunk) => chunk !== "")

/** Splits `text` into `pieces` nearly equal parts on code-point boundaries (never inside a surrogate pair). */
const split = (text: string, pieces: number): ReadonlyArray<string> => {
  const points = Array.from(text)
  const n = Math.max(1, Math.min(pieces, points.length))
  const size = Math.ceil(points.length / n)
  const out: Array<string> = []
  for (let at = 0; at < points.length; at += size) out.push(points.slice(at, at + size).join(""))
  return out
}

const checkCount = (name: string, value: number | undefined): void => {
  if (value !== undefined && !(Number.isSafeInteger(value) && value >= 0)) {
    throw new RangeError(`reply().usage: ${name} must be a non-negative integer, got ${String(value)}`)
  }
}

/**
 * An immutable builder of one streamed reply; every method returns a new reply. It is itself a `ScriptedResponse`,
 * so it goes straight into a replay provider's or a scripted client's script.
 *
 * ```ts
 * reply().reasoning("The user wants Paris.", { signature: "sig-1" }).toolCall("get_weather", { city: "Paris" }, { id: "call_1" })
 * reply().text(["Sunny ", "in Paris."]).usage({ inputTokens: 120, outputTokens: 8 })
 * reply().text("Let me").stall(200).error("overloaded_error", "Overloaded")
 * ```
 */
export class ReplyBuilder implements ScriptedResponse {
  readonly kind = "response" as const

  constructor(
    readonly parts: ReadonlyArray<ScriptPart> = [],
    readonly ending: ScriptEnding = { type: "complete" },
    readonly tokenUsage?: ScriptUsage,
    readonly stopReason?: StopReason,
    readonly responseModel?: string
  ) {
    Object.freeze(this)
  }

  private with(changes: {
    readonly parts?: ReadonlyArray<ScriptPart>
    readonly ending?: ScriptEnding
    readonly tokenUsage?: ScriptUsage
    readonly stopReason?: StopReason
    readonly responseModel?: string
  }): ReplyBuilder {
    return new ReplyBuilder(
      changes.parts ?? this.parts,
      changes.ending ?? this.ending,
      changes.tokenUsage ?? this.tokenUsage,
      changes.stopReason ?? this.stopReason,
      changes.responseModel ?? this.responseModel
    )
  }

  /** Answer text, one delta per chunk. Text right after text continues the same block, as on every provider. */
  text(text: string | ReadonlyArray<string>): ReplyBuilder {
    const chunks = chunksOf(text)
    if (chunks.length === 0) return this
    const last = this.parts.at(-1)
    if (last?.type === "text") return this.with({ parts: [...this.parts.slice(0, -1), { type: "text", chunks: [...last.chunks, ...chunks] }] })
    return this.with({ parts: [...this.parts, { type: "text", chunks }] })
  }

  /** Reasoning (thinking) text, with the provider's opaque token to send it back (see `ScriptPart`). */
  reasoning(text: string | ReadonlyArray<string>, options: { readonly signature?: string } = {}): ReplyBuilder {
    const chunks = chunksOf(text)
    if (chunks.length === 0 && options.signature === undefined) return this
    // Reasoning right after reasoning is one block on Chat and Gemini, so it is one part: the later signature wins.
    const last = this.parts.at(-1)
    const merged = last?.type === "reasoning" ? [...last.chunks, ...chunks] : chunks
    const signature = options.signature ?? (last?.type === "reasoning" ? last.signature : undefined)
    const part: ScriptPart = { type: "reasoning", chunks: merged, ...(signature === undefined ? {} : { signature }) }
    return this.with({ parts: last?.type === "reasoning" ? [...this.parts.slice(0, -1), part] : [...this.parts, part] })
  }

  /**
   * A tool call. `args` is the arguments object (sent as JSON) or the argument text exactly as the model writes it
   * (which may be broken JSON, to test the error path; Gemini cannot send that). `chunks` streams it in that many
   * pieces. Several calls in one reply are parallel calls.
   */
  toolCall(name: string, args: unknown = {}, options: { readonly id?: string; readonly chunks?: number } = {}): ReplyBuilder {
    const text = typeof args === "string" ? args : JSON.stringify(args)
    if (text === undefined) throw new TypeError(`reply().toolCall("${name}"): the arguments are not JSON-serialisable`)
    const chunks = text === "" ? [] : split(text, options.chunks ?? 1)
    return this.with({ parts: [...this.parts, { type: "tool_call", name, chunks, ...(options.id === undefined ? {} : { id: options.id }) }] })
  }

  /** Nothing is sent for `ms` milliseconds before whatever comes next (the first event, the next one, or the end). */
  stall(ms: number): ReplyBuilder {
    if (!(Number.isFinite(ms) && ms >= 0)) throw new RangeError(`reply().stall: ms must be a finite non-negative number, got ${String(ms)}`)
    return this.with({ parts: [...this.parts, { type: "stall", ms }] })
  }

  /**
   * The reply's token counts, in the neutral usage model: cache reads and writes are part of `inputTokens`,
   * reasoning is part of `outputTokens`; each format's writer spells them the way its provider does.
   */
  usage(usage: ScriptUsage): ReplyBuilder {
    for (const name of ["inputTokens", "outputTokens", "cacheReadTokens", "cacheWriteTokens", "reasoningTokens"] as const) checkCount(name, usage[name])
    if ((usage.cacheReadTokens ?? 0) + (usage.cacheWriteTokens ?? 0) > usage.inputTokens) {
      throw new RangeError("reply().usage: cache reads and writes are part of inputTokens and cannot exceed it")
    }
    if ((usage.reasoningTokens ?? 0) > usage.outputTokens) throw new RangeError("reply().usage: reasoningTokens are part of outputTokens and cannot exceed it")
    return this.with({ tokenUsage: Object.freeze({ ...usage }) })
  }

  /** The reply's stop reason (default: `tool_use` when it calls tools, else `end_turn`), in the format's spelling. */
  stop(reason: StopReason): ReplyBuilder {
    return this.with({ stopReason: reason })
  }

  /** The model name the provider echoes back in the reply (default `scripted-model`). */
  model(name: string): ReplyBuilder {
    return this.with({ responseModel: name })
  }

  /** Ends the reply with an in-stream provider error instead of its terminal event. */
  error(code: string, message: string): ReplyBuilder {
    return this.with({ ending: { type: "error", code, message } })
  }

  /** Ends the reply by going silent with the connection open. */
  hang(): ReplyBuilder {
    return this.with({ ending: { type: "hang" } })
  }

  /** Ends the reply without its terminal event: the body ends (`end`) or the connection drops (`reset`). */
  cut(how: "end" | "reset" = "end"): ReplyBuilder {
    return this.with({ ending: { type: "cut", how } })
  }
}

/** Starts a streamed reply (see `ReplyBuilder`). */
export const reply = (): ReplyBuilder => new ReplyBuilder()

/**
 * A reply refused with an HTTP status and the provider's own error body: `replyError(429, { retryAfterSeconds: 2 })`,
 * `replyError(400, { message: "max_tokens is too large" })`.
 */
export const replyError = (
  status: number,
  options: Partial<Omit<ScriptedHttpError, "kind" | "status">> = {}
): ScriptedHttpError => {
  if (!(Number.isInteger(status) && status >= 400 && status <= 599)) throw new RangeError(`replyError: status must be an HTTP error status (400–599), got ${String(status)}`)
  return Object.freeze({ kind: "http_error", status, message: options.message ?? defaultMessage(status), ...withoutMessage(options) })
}

const withoutMessage = ({ message: _message, ...rest }: Partial<Omit<ScriptedHttpError, "kind" | "status">>) => rest

const defaultMessage = (status: number): string =>
  status === 429 ? "Rate limit exceeded" : status === 529 || status === 503 ? "The model is overloaded" : status >= 500 ? "Internal server error" : "Invalid request"

/** The stop reason a reply reports: the scripted one, `tool_use` when it calls tools and ends normally, else `end_turn`. */
export const effectiveStopReason = (response: ScriptedResponse): StopReason => {
  const calls = response.parts.some((part) => part.type === "tool_call")
  const reason = response.stopReason ?? "end_turn"
  return reason === "end_turn" && calls ? "tool_use" : reason
}
