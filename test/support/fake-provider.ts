import { readdirSync, readFileSync } from "node:fs"
import { createServer } from "node:http"
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import type { SchemeName } from "../../src/llm/scheme.ts"

/**
 * A local stand-in for a provider's HTTP API: a real `node:http` server on 127.0.0.1 that answers each scheme's
 * streaming endpoint by replaying a recorded SSE transcript, misbehaving on request as scripted. The transcripts
 * are genuine wire formats (test/fixtures/sse/<scheme>/*.sse); only the network and timing are simulated.
 */

/** What to do with one request. The script's last reply repeats for any request beyond it. */
export type FakeReply =
  | {
      readonly kind: "stream"
      /** SSE text as a provider sends it (see `loadTranscript`). */
      readonly transcript: string
      /** Byte offsets at which to split the body into separate writes (each flushed and awaited). */
      readonly splitAt?: ReadonlyArray<number>
      /** Send this many SSE events (blank-line separated), then keep the connection open and silent. */
      readonly stallAfterEvents?: number
      /** Send only the first N bytes, then end the response cleanly (`end`) or drop the connection (`reset`). */
      readonly truncateAtByte?: number
      readonly truncateBy?: "end" | "reset"
      /** Pause between writes, to let timers observe an idle gap. */
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

export interface RecordedRequest {
  readonly method: string
  readonly path: string
  readonly headers: IncomingHttpHeaders
  readonly body: string
  /** Settles when the connection closes; a stalled reply closes only if the client hangs up (or on `close()`). */
  readonly disconnected: Promise<void>
}

export interface FakeProvider {
  /** What to pass as the client's `baseUrl` for this scheme's providers. */
  readonly baseUrl: string
  /** Every request received, in order (including ones answered with an error). */
  readonly requests: ReadonlyArray<RecordedRequest>
  close(): Promise<void>
}

export interface FakeProviderOptions {
  readonly scheme: SchemeName
  readonly script: ReadonlyArray<FakeReply>
}

/** The path each scheme's provider posts to, relative to the server root; `baseUrl` is set to match. */
const ROUTES: Readonly<Record<SchemeName, { readonly basePath: string; readonly path: RegExp }>> = {
  "openai-chat": { basePath: "/v1", path: /^\/v1\/chat\/completions$/ },
  "openai-responses": { basePath: "/v1", path: /^\/v1\/responses$/ },
  anthropic: { basePath: "", path: /^\/v1\/messages$/ },
  gemini: { basePath: "", path: /^\/v1beta\/models\/[^/:]+:streamGenerateContent\?alt=sse$/ }
}

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), "..", "fixtures", "sse")

/** The recorded transcripts available for a scheme, by file name without `.sse`. */
export const listTranscripts = (scheme: SchemeName): ReadonlyArray<string> => {
  try {
    return readdirSync(join(FIXTURES, scheme))
      .filter((file) => file.endsWith(".sse"))
      .map((file) => file.slice(0, -".sse".length))
      .sort()
  } catch {
    return []
  }
}

export const loadTranscript = (scheme: SchemeName, name: string): string => readFileSync(join(FIXTURES, scheme, `${name}.sse`), "utf8")

/** A simple SSE response, for scripting without a fixture file. */
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

const stream = async (response: ServerResponse, reply: Extract<FakeReply, { kind: "stream" }>): Promise<void> => {
  response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" })
  response.flushHeaders()
  const all = Buffer.from(reply.transcript, "utf8")
  const stallAt = reply.stallAfterEvents === undefined ? undefined : endOfEvents(reply.transcript, reply.stallAfterEvents)
  const limit = Math.min(all.length, stallAt ?? all.length, reply.truncateAtByte ?? all.length)
  for (const piece of pieces(all.subarray(0, limit), reply.splitAt ?? [])) {
    if (reply.gapMs !== undefined) await delay(reply.gapMs)
    await write(response, piece)
  }
  if (stallAt !== undefined && reply.truncateAtByte === undefined) return
  if (reply.truncateAtByte !== undefined && reply.truncateBy === "reset") response.destroy()
  else response.end()
}

/** Starts a fake provider for `scheme` on an ephemeral loopback port. */
export const startFakeProvider = async (options: FakeProviderOptions): Promise<FakeProvider> => {
  if (options.script.length === 0) throw new Error("startFakeProvider: the script needs at least one reply")
  const route = ROUTES[options.scheme]
  const requests: Array<RecordedRequest> = []
  const server = createServer((request, response) => {
    void (async () => {
      const disconnected = new Promise<void>((resolve) => response.once("close", () => resolve()))
      const body = await readBody(request)
      const path = request.url ?? ""
      requests.push({ method: request.method ?? "", path, headers: request.headers, body, disconnected })
      if (request.method !== "POST" || !route.path.test(path)) {
        response.writeHead(404, { "content-type": "application/json" }).end(`{"error":"no route for ${request.method} ${path}"}`)
        return
      }
      const reply = options.script[Math.min(requests.length - 1, options.script.length - 1)]!
      switch (reply.kind) {
        case "status":
          response.writeHead(reply.status, { "content-type": "application/json", ...reply.headers }).end(reply.body ?? "")
          return
        case "no_headers":
          return
        case "reset":
          request.socket.destroy()
          return
        case "stream":
          await stream(response, reply)
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
