import { createServer } from "node:http"
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import type { SchemeName } from "../llm/scheme.ts"

/**
 * A local stand-in for a provider's HTTP API: a real `node:http` server on 127.0.0.1 that answers one scheme's
 * streaming endpoint by replaying SSE transcripts, misbehaving on request as scripted. Point a real client at
 * `baseUrl` and everything but the model runs for real: HTTP, SSE parsing, decoding, retries, timeouts.
 */

/** What to do with one request. The script's last step repeats for any request beyond it. */
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
      /** Pause before each write, to let idle timers observe a gap or a reader see the text arrive. */
      readonly gapMs?: number
    }
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
  readonly script: ReadonlyArray<ReplayStep>
}

/** The path each scheme's provider posts to, relative to the server root; `baseUrl` is set to match. */
const ROUTES: Readonly<Record<SchemeName, { readonly basePath: string; readonly path: RegExp }>> = {
  "openai-chat": { basePath: "/v1", path: /^\/v1\/chat\/completions$/ },
  "openai-responses": { basePath: "/v1", path: /^\/v1\/responses$/ },
  anthropic: { basePath: "", path: /^\/v1\/messages$/ },
  gemini: { basePath: "", path: /^\/v1beta\/models\/[^/:]+:streamGenerateContent\?alt=sse$/ }
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

const write = (response: ServerResponse, bytes: Uint8Array): Promise<void> =>
  new Promise((resolve) => {
    if (response.destroyed) resolve()
    else response.write(bytes, () => resolve())
  })

const delay = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

/** Byte offset just past the K-th event terminator (a blank line, in any of SSE's three line-ending styles). */
const endOfEvents = (text: string, count: number): number => {
  const terminator = /\r\n\r\n|\n\n|\r\r/g
  let end = 0
  for (let i = 0; i < count; i++) {
    const match = terminator.exec(text)
    if (match === null) return Buffer.byteLength(text)
    end = match.index + match[0].length
  }
  return Buffer.byteLength(text.slice(0, end))
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

const stream = async (response: ServerResponse, step: Extract<ReplayStep, { kind: "stream" }>): Promise<void> => {
  response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" })
  response.flushHeaders()
  const all = Buffer.from(step.transcript, "utf8")
  const stallAt = step.stallAfterEvents === undefined ? undefined : endOfEvents(step.transcript, step.stallAfterEvents)
  const limit = Math.min(all.length, stallAt ?? all.length, step.truncateAtByte ?? all.length)
  for (const piece of pieces(all.subarray(0, limit), step.splitAt ?? [])) {
    if (step.gapMs !== undefined) await delay(step.gapMs)
    await write(response, piece)
  }
  if (stallAt !== undefined && step.truncateAtByte === undefined) return
  if (step.truncateAtByte !== undefined && step.truncateBy === "reset") response.destroy()
  else response.end()
}

/**
 * Starts a replay provider for `scheme` on an ephemeral loopback port. Requests to any other path get a 404, so
 * a client configured for the wrong scheme fails loudly instead of receiving a stream it cannot parse.
 */
export const startReplayProvider = async (options: ReplayProviderOptions): Promise<ReplayProvider> => {
  if (options.script.length === 0) throw new Error("startReplayProvider: the script needs at least one step")
  const route = ROUTES[options.scheme]
  const requests: Array<RecordedRequest> = []
  const server = createServer((request, response) => {
    void (async () => {
      const disconnected = new Promise<void>((resolve) => response.once("close", () => resolve()))
      const body = await readBody(request)
      const path = request.url ?? ""
      requests.push({ method: request.method ?? "", path, headers: request.headers, body, disconnected })
      if (request.method !== "POST" || !route.path.test(path)) {
        response.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ error: `no route for ${request.method} ${path}` }))
        return
      }
      const step = options.script[Math.min(requests.length - 1, options.script.length - 1)]!
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
          await stream(response, step)
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
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}
