import { createServer } from "node:http"
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import type { SchemeName } from "../llm/scheme.ts"
import { pause } from "./pause.ts"
import { isScriptStep } from "./script.ts"
import type { ScriptStep } from "./script.ts"
import { encodeScriptJson, encodeScriptStep, ScriptEncodingError } from "./wire/index.ts"
import type { EncodedJson, SseFrame } from "./wire/index.ts"

/**
 * A local stand-in for a provider's HTTP API: a real `node:http` server on 127.0.0.1 that answers one scheme's
 * endpoint by replaying SSE transcripts — or, for a neutral step asked without streaming, the provider's JSON
 * body — misbehaving on request as scripted. Point a real client at
 * `baseUrl` and everything but the model runs for real: HTTP, SSE parsing, decoding, retries, timeouts.
 */

/** What to do with one request, in wire terms. The script's last step repeats for any request beyond it. */
export type ReplayStep =
  | {
      readonly kind: "stream"
      /** SSE text exactly as the provider sends it (see `sseText` to build one). */
      readonly transcript: string
      /** Byte offsets at which to split the body into separate writes (each flushed and awaited). */
      readonly splitAt?: ReadonlyArray<number>
      /** Send this many SSE events (blank-line separated), then keep the connection open and silent. */
      readonly stallAfterEvents?: number
      /** Send only the first N bytes, then end the response cleanly (`end`) or drop the connection (`reset`). */
      readonly truncateAtByte?: number
      readonly truncateBy?: "end" | "reset"
      /**
       * Pause before each write, to let idle timers observe a gap or a reader see the text arrive. Without
       * `splitAt` each SSE event is a write of its own, so the pause falls between events.
       */
      readonly gapMs?: number
    }
  /** Writes with a pause before each (what a neutral script's stalls become), then the body ends, hangs or drops. */
  | { readonly kind: "sse"; readonly frames: ReadonlyArray<SseFrame>; readonly close: "end" | "hang" | "reset" }
  | {
      readonly kind: "status"
      readonly status: number
      readonly headers?: Readonly<Record<string, string>>
      readonly body?: string
    }
  /** Accept the request and never answer: no status line, no headers. */
  | { readonly kind: "no_headers" }
  /** Drop the connection without answering. */
  | { readonly kind: "reset" }

/** One request the replay provider received, as it arrived. */
export interface RecordedRequest {
  readonly method: string
  readonly path: string
  readonly headers: IncomingHttpHeaders
  readonly body: string
  /** Settles when the connection closes; a stalled reply closes only if the client hangs up (or on `close()`). */
  readonly disconnected: Promise<void>
}

/** A running replay provider: where to point a client, what it received, and how to stop it. */
export interface ReplayProvider {
  /** What to pass as the client's `baseUrl` for this scheme's providers. */
  readonly baseUrl: string
  /** Every request received, in order (including ones answered with an error). */
  readonly requests: ReadonlyArray<RecordedRequest>
  /** Stops the server and ends every open connection (stalled replies included). */
  close(): Promise<void>
}

/** Which wire format to serve, and the script of replies, one step per request. */
export interface ReplayProviderOptions {
  readonly scheme: SchemeName
  /**
   * One step per request, in order; the last repeats. A step is either neutral — `reply()…` / `replyError(…)`
   * (`ScriptStep`), encoded to `scheme`'s genuine SSE or error body — or in wire terms (`ReplayStep`). A neutral
   * reply to a request that does not ask to stream (`stream` absent or false in the body; Gemini's
   * `:generateContent`) is answered with the provider's JSON response instead (`chat.completion`, `response`,
   * `message`, `GenerateContentResponse`); wire-level steps are sent as they are.
   */
  readonly script: ReadonlyArray<ReplayStep | ScriptStep>
}

/** The path each scheme's provider posts to, relative to the server root; `baseUrl` is set to match. */
const ROUTES: Readonly<Record<SchemeName, { readonly basePath: string; readonly path: RegExp }>> = {
  "openai-chat": { basePath: "/v1", path: /^\/v1\/chat\/completions$/ },
  "openai-responses": { basePath: "/v1", path: /^\/v1\/responses$/ },
  anthropic: { basePath: "", path: /^\/v1\/messages$/ },
  gemini: { basePath: "", path: /^\/v1beta\/models\/[^/:]+:(?:streamGenerateContent\?alt=sse|generateContent)$/ }
}

/**
 * Whether the request asks for a stream: Gemini says so in its path, the others with `stream: true` in the body.
 * A body that is not a JSON object is streamed to, as before non-streamed answers existed.
 */
const wantsStream = (scheme: SchemeName, path: string, body: string): boolean => {
  if (scheme === "gemini") return path.includes(":streamGenerateContent")
  let parsed: unknown
  try {
    parsed = JSON.parse(body)
  } catch {
    return true
  }
  return typeof parsed !== "object" || parsed === null || Array.isArray(parsed) || (parsed as { readonly stream?: unknown }).stream === true
}

/** SSE text from events, for scripting a reply without a recorded file. */
export const sseText = (events: ReadonlyArray<{ readonly event?: string; readonly data: string }>): string =>
  events.map(({ event, data }) => `${event === undefined ? "" : `event: ${event}\n`}data: ${data}\n\n`).join("")

const readBody = (request: IncomingMessage): Promise<string> =>
  new Promise((resolve, reject) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")))
    request.on("error", reject)
  })

/** Resolves once the bytes are handed to the socket, or at once when the connection is gone. */
const write = (response: ServerResponse, bytes: Uint8Array): Promise<void> =>
  new Promise((resolve) => {
    if (response.destroyed || response.writableEnded) resolve()
    else response.write(bytes, () => resolve())
  })

/** Byte offsets just past each event terminator (a blank line, in any of SSE's three line-ending styles). */
const eventEnds = (text: string): ReadonlyArray<number> => {
  const ends: Array<number> = []
  const terminator = /\r\n\r\n|\n\n|\r\r/g
  // Counted from the previous end, not from the start: a transcript of thousands of events stays linear.
  let chars = 0
  let bytes = 0
  for (let match = terminator.exec(text); match !== null; match = terminator.exec(text)) {
    const end = match.index + match[0].length
    bytes += Buffer.byteLength(text.slice(chars, end))
    chars = end
    ends.push(bytes)
  }
  return ends
}

const pieces = (bytes: Uint8Array, splitAt: ReadonlyArray<number>): ReadonlyArray<Uint8Array> => {
  const cuts = [...new Set(splitAt.filter((at) => at > 0 && at < bytes.length))].sort((a, b) => a - b)
  const out: Array<Uint8Array> = []
  let from = 0
  for (const cut of [...cuts, bytes.length]) {
    out.push(bytes.subarray(from, cut))
    from = cut
  }
  return out
}

/** What one streamed reply sends: writes, each after a pause, then how the connection ends. */
interface StreamPlan {
  readonly writes: ReadonlyArray<{ readonly bytes: Uint8Array; readonly delayMs: number }>
  readonly close: "end" | "hang" | "reset"
}

const planTranscript = (step: Extract<ReplayStep, { kind: "stream" }>): StreamPlan => {
  const all = Buffer.from(step.transcript, "utf8")
  const ends = eventEnds(step.transcript)
  const stallAt = step.stallAfterEvents === undefined ? undefined : step.stallAfterEvents <= 0 ? 0 : (ends[step.stallAfterEvents - 1] ?? all.length)
  const limit = Math.min(all.length, stallAt ?? all.length, step.truncateAtByte ?? all.length)
  const body = all.subarray(0, limit)
  // A gap without split points falls between events: one write per event.
  const splitAt = step.splitAt ?? (step.gapMs === undefined ? [] : ends)
  const writes = pieces(body, splitAt).map((bytes) => ({ bytes, delayMs: step.gapMs ?? 0 }))
  const close = stallAt !== undefined && step.truncateAtByte === undefined ? "hang" : step.truncateAtByte !== undefined && step.truncateBy === "reset" ? "reset" : "end"
  return { writes, close }
}

const planFrames = (step: Extract<ReplayStep, { kind: "sse" }>): StreamPlan => ({
  writes: step.frames.map((frame) => ({ bytes: Buffer.from(frame.text, "utf8"), delayMs: frame.delayMs })),
  close: step.close
})

/**
 * Sends a plan. `gone` fires when the client hangs up or the server closes: the remaining writes and pauses are
 * dropped at once, so a cancelled stream leaves no timer or write behind to keep the process alive.
 */
const stream = async (response: ServerResponse, plan: StreamPlan, gone: AbortSignal): Promise<void> => {
  response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" })
  response.flushHeaders()
  for (const { bytes, delayMs } of plan.writes) {
    if (!(await pause(delayMs, gone))) return
    if (bytes.length > 0) await write(response, bytes)
  }
  if (gone.aborted || plan.close === "hang") return
  if (plan.close === "reset") response.destroy()
  else response.end()
}

/**
 * A non-streamed reply: after the scripted stalls, the whole body; a hang never sends a status line, a cut sends
 * half the body and then ends it or drops the connection.
 */
const sendJson = async (response: ServerResponse, reply: EncodedJson, gone: AbortSignal): Promise<void> => {
  if (!(await pause(reply.delayMs, gone)) || reply.close === "hang") return
  const bytes = Buffer.from(reply.body, "utf8")
  response.writeHead(200, { "content-type": "application/json" })
  if (reply.close === "end") {
    response.end(bytes)
    return
  }
  await write(response, bytes.subarray(0, Math.floor(bytes.length / 2)))
  if (reply.close === "reset") response.destroy()
  else response.end()
}

/** Neutral steps encoded once, at start, in the scheme's wire format (their position numbers their made-up ids). */
const wireStep = (scheme: SchemeName, step: ReplayStep | ScriptStep, ordinal: number): ReplayStep => {
  if (!isScriptStep(step)) return step
  const encoded = encodeScriptStep(scheme, step, ordinal)
  return encoded.kind === "sse" ? encoded : { kind: "status", status: encoded.status, headers: encoded.headers, body: encoded.body }
}

/**
 * A neutral step as a non-streamed answer. What the JSON body cannot say (argument text that is not a JSON object,
 * where the provider sends an object) is answered with a 500 naming it, since the script is only known to be
 * unsayable once a request asks for JSON.
 */
const jsonStep = (scheme: SchemeName, step: ScriptStep, ordinal: number): ReplayStep | EncodedJson => {
  try {
    const encoded = encodeScriptJson(scheme, step, ordinal)
    return encoded.kind === "json" ? encoded : { kind: "status", status: encoded.status, headers: encoded.headers, body: encoded.body }
  } catch (error) {
    if (!(error instanceof ScriptEncodingError)) throw error
    return { kind: "status", status: 500, body: JSON.stringify({ error: { message: error.message, type: "script_encoding_error" } }) }
  }
}

/**
 * Starts a replay provider for `scheme` on an ephemeral loopback port. Requests to any other path get a 404, so
 * a client configured for the wrong scheme fails loudly instead of receiving a stream it cannot parse.
 * `close()` ends every reply in progress (stalled ones included) and every connection, so nothing of the server
 * keeps the process alive afterwards.
 */
export const startReplayProvider = async (options: ReplayProviderOptions): Promise<ReplayProvider> => {
  if (options.script.length === 0) throw new Error("startReplayProvider: the script needs at least one step")
  const route = ROUTES[options.scheme]
  const script = options.script.map((step, ordinal) => ({ wire: wireStep(options.scheme, step, ordinal), neutral: isScriptStep(step) ? step : undefined, ordinal }))
  const requests: Array<RecordedRequest> = []
  const inProgress = new Set<AbortController>()
  const server = createServer((request, response) => {
    // One signal per reply: the client hung up, or the server is closing.
    const gone = replyGone(response, inProgress)
    void (async () => {
      const disconnected = new Promise<void>((resolve) => response.once("close", () => resolve()))
      const body = await readBody(request)
      const path = request.url ?? ""
      requests.push({ method: request.method ?? "", path, headers: request.headers, body, disconnected })
      if (request.method !== "POST" || !route.path.test(path)) {
        response.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ error: `no route for ${request.method} ${path}` }))
        return
      }
      const planned = script[Math.min(requests.length - 1, script.length - 1)]!
      const step = planned.neutral === undefined || wantsStream(options.scheme, path, body) ? planned.wire : jsonStep(options.scheme, planned.neutral, planned.ordinal)
      switch (step.kind) {
        case "status":
          response.writeHead(step.status, { "content-type": "application/json", ...step.headers }).end(step.body ?? "")
          return
        case "no_headers":
          return
        case "reset":
          request.socket.destroy()
          return
        case "stream":
          await stream(response, planTranscript(step), gone)
          return
        case "sse":
          await stream(response, planFrames(step), gone)
          return
        case "json":
          await sendJson(response, step, gone)
      }
    })().catch(() => response.destroy())
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  return {
    baseUrl: `http://127.0.0.1:${port}${route.basePath}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        for (const reply of inProgress) reply.abort()
        server.close(() => resolve())
        server.closeAllConnections()
      })
  }
}

/**
 * A signal per reply that fires when its connection closes or the server closes. Replies in progress are kept in
 * a set rather than listening on one shared signal, so a hundred concurrent replies add no listeners to it.
 */
const replyGone = (response: ServerResponse, inProgress: Set<AbortController>): AbortSignal => {
  const controller = new AbortController()
  inProgress.add(controller)
  response.once("close", () => {
    inProgress.delete(controller)
    controller.abort()
  })
  return controller.signal
}
