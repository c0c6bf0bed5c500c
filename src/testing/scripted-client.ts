import type { LlmClient, StreamOptions } from "../llm/client.ts"
import type { Event } from "../llm/event.ts"
import { LlmCancelled, LlmHttpError, LlmNetworkError, LlmProviderError } from "../llm/llm-error.ts"
import type { Request } from "../llm/request.ts"
import type { Scheme, SchemeName } from "../llm/scheme.ts"
import { anthropicScheme } from "../llm/schemes/anthropic.ts"
import { geminiScheme } from "../llm/schemes/gemini.ts"
import { openAiChatScheme } from "../llm/schemes/openai-chat.ts"
import { openAiResponsesScheme } from "../llm/schemes/openai-responses.ts"
import { providerErrorOf } from "../llm/raw-error.ts"
import { createSseParser } from "../llm/sse.ts"
import { pause } from "./pause.ts"
import type { ScriptStep } from "./script.ts"
import { encodeScriptStep } from "./wire/index.ts"

const SCHEMES: Readonly<Record<SchemeName, Scheme>> = {
  "openai-chat": openAiChatScheme,
  "openai-responses": openAiResponsesScheme,
  anthropic: anthropicScheme,
  gemini: geminiScheme
}

/** Options of `scriptedClient`: the script it plays and the wire format it plays it in. */
export interface ScriptedClientOptions {
  /** One step per request, in order; the last repeats (like the replay provider's script). */
  readonly script: ReadonlyArray<ScriptStep>
  /**
   * The wire format played in process: replies are encoded to it and read back by its real decoder, and
   * `encodeRequest` is its real encoder (the Worker's cache lock checks those bytes). Default `openai-chat`.
   */
  readonly scheme?: SchemeName
  /** Reported as `client.provider`; default `scripted`. */
  readonly provider?: string
  /** Reported as `client.model`; default `scripted-model`. */
  readonly model?: string
}

/** A request the scripted client was given, with the body the real client would have sent for it. */
export interface ScriptedCall {
  readonly request: Request
  readonly body: string
}

export interface ScriptedClient extends LlmClient {
  /** Every request, in order, including ones answered with an error. */
  readonly calls: ReadonlyArray<ScriptedCall>
}

const cancelled = () => new LlmCancelled({ message: "The request was cancelled" })

/**
 * An `LlmClient` that plays a neutral script in process — no HTTP, no port — for unit tests of agents, hooks and
 * tools. Each reply is encoded to the chosen wire format and read back by that format's real decoder, so the
 * events are the ones the real client would yield; the scripted stalls are real pauses, and the signal cancels at
 * any point (`LlmCancelled`). What the HTTP transport adds is not modelled: no retries (an HTTP error step throws
 * `LlmHttpError` at once), no deadlines (a `hang()` waits for the signal), no size limits.
 *
 * ```ts
 * const client = scriptedClient({ script: [reply().toolCall("get_weather", { city: "Paris" }), reply().text("Sunny.")] })
 * const worker = Worker.create({ client })
 * ```
 */
export const scriptedClient = (options: ScriptedClientOptions): ScriptedClient => {
  if (options.script.length === 0) throw new Error("scriptedClient: the script needs at least one step")
  const schemeName = options.scheme ?? "openai-chat"
  const scheme = SCHEMES[schemeName]
  const calls: Array<ScriptedCall> = []

  async function* play(request: Request, streamOptions: StreamOptions | undefined): AsyncGenerator<Event, void, undefined> {
    const signal = streamOptions?.signal
    const body = streamOptions?.body ?? scheme.encodeRequest(request)
    const ordinal = calls.length
    calls.push(Object.freeze({ request, body }))
    if (signal?.aborted) throw cancelled()
    const step = options.script[Math.min(ordinal, options.script.length - 1)]!
    const encoded = encodeScriptStep(schemeName, step, ordinal)
    if (encoded.kind === "status") {
      throw new LlmHttpError({ status: encoded.status, body: encoded.body, message: `HTTP ${encoded.status} from the scripted client (step ${ordinal + 1})` })
    }
    const decoder = scheme.decoder(request)
    const sse = createSseParser()
    let providerError: LlmProviderError | undefined
    let finished = false
    for (const frame of encoded.frames) {
      if (frame.delayMs > 0 && !(await pause(frame.delayMs, signal))) throw cancelled()
      for (const message of sse.feed(frame.text)) {
        for (const event of decoder.push(message)) {
          if (signal?.aborted) throw cancelled()
          if (event.type === "error") providerError ??= providerErrorOf(event)
          if (event.type === "status" && event.status !== "started") finished = true
          yield event
        }
      }
      if (finished) break
    }
    if (encoded.close === "hang" && !finished) {
      // Silent until cancelled, like a server holding the connection open (the longest timer Node allows, again).
      while (await pause(2 ** 31 - 1, signal));
      throw cancelled()
    }
    // A decoder may complete the response from `end()` (Gemini after `finishReason`, a Chat stream without [DONE]).
    for (const event of decoder.end()) {
      if (event.type === "status" && event.status === "completed") finished = true
      yield event
    }
    if (providerError !== undefined) throw providerError
    if (!finished) throw new LlmNetworkError({ message: "The stream ended before the provider's terminal event" })
  }

  return {
    scheme: schemeName,
    ...(scheme.toolLintTarget === undefined ? {} : { toolLintTarget: scheme.toolLintTarget }),
    provider: options.provider ?? "scripted",
    model: options.model ?? "scripted-model",
    calls,
    encodeRequest: (request) => scheme.encodeRequest(request),
    validate: (request) => scheme.validate(request),
    stream: (request, streamOptions) => play(request, streamOptions)
  }
}
