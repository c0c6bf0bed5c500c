import { createServer } from "node:http"
import type { IncomingMessage, ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { type HostileScheme, type WireAnswer, answerFrames } from "./wire.ts"

/**
 * The hostile provider: a real `node:http` server on 127.0.0.1 that answers each request with whatever the test
 * scripted for it — a genuine-shaped SSE answer that then misbehaves (never closes, resets, floods keep-alives),
 * a non-stream 200, a huge error body. Every byte crosses a real socket, so the client's HTTP, SSE parsing,
 * decoding, retries and deadlines all run for real. Writes honour back-pressure, so the server itself holds at
 * most a socket buffer of a multi-MiB answer, whatever the client does with it.
 */

export interface HostileRequest {
  /** 0-based position of this request among all the server received. */
  readonly index: number
  readonly path: string
  readonly body: string
  /** Settles when the connection closes (the client hung up, or the reply ended). */
  readonly disconnected: Promise<void>
}

/** One scripted reply: writes the response however it likes. */
export type Reply = (response: ServerResponse, request: HostileRequest) => Promise<void>

export interface HostileProvider {
  /** The base URL for the scheme's built-in provider (what its `*_BASE_URL` variable would hold). */
  readonly baseUrl: string
  readonly requests: ReadonlyArray<HostileRequest>
  close(): Promise<void>
}

/** The path prefix each scheme's provider puts after its base URL (OpenAI's base URL includes `/v1`). */
const BASE_PATH: Readonly<Record<HostileScheme, string>> = {
  "openai-chat": "/v1",
  "openai-responses": "/v1",
  anthropic: "",
  gemini: ""
}

const readBody = (request: IncomingMessage): Promise<string> =>
  new Promise((resolve, reject) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")))
    request.on("error", reject)
  })

/** Writes and waits for the socket to drain when its buffer is full; resolves at once if the peer is gone. */
export const writeAll = (response: ServerResponse, text: string | Uint8Array): Promise<void> =>
  new Promise((resolve) => {
    if (response.destroyed || response.writableEnded) return resolve()
    if (response.write(text)) return resolve()
    const done = (): void => {
      response.off("drain", done)
      response.off("close", done)
      resolve()
    }
    response.on("drain", done)
    response.on("close", done)
  })

const delay = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

export const sseHeaders = (response: ServerResponse): void => {
  // `connection: close`: a reused keep-alive socket can be closed by the server just as the client sends the next
  // request on it (an ECONNRESET that says nothing about the code under test), so every reply gets its own.
  response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "close" })
  response.flushHeaders()
}

/** Batches small frames into writes of about 64 KiB: one syscall per frame would make 1 M pings take minutes. */
export const streamFrames = async (response: ServerResponse, frames: Iterable<string>): Promise<void> => {
  let batch: Array<string> = []
  let size = 0
  for (const frame of frames) {
    if (response.destroyed) return
    batch.push(frame)
    size += frame.length
    if (size >= 64 * 1024) {
      await writeAll(response, batch.join(""))
      batch = []
      size = 0
    }
  }
  if (batch.length > 0) await writeAll(response, batch.join(""))
}

export type AfterAnswer =
  /** End the response normally. */
  | "end"
  /** Keep the connection open and silent after the last frame (a proxy that never closes). */
  | "hold"
  /** Drop the connection after the last frame. */
  | "reset"

/** Streams one answer in `scheme`'s genuine wire format, then does `after`. */
export const answer =
  (scheme: HostileScheme, wire: WireAnswer, after: AfterAnswer = "end"): Reply =>
  async (response) => {
    sseHeaders(response)
    await streamFrames(response, answerFrames(scheme, wire))
    if (after === "end") response.end()
    else if (after === "reset") response.destroy()
  }

/** Sends raw SSE text (frames built by the test), then does `after`. */
export const rawSse =
  (frames: Iterable<string>, after: AfterAnswer = "end"): Reply =>
  async (response) => {
    sseHeaders(response)
    await streamFrames(response, frames)
    if (after === "end") response.end()
    else if (after === "reset") response.destroy()
  }

/** Sends `frame` every `everyMs` until the client hangs up (a keep-alive flood that never brings content). */
export const keepAliveForever =
  (prefix: Iterable<string>, frame: string, everyMs: number): Reply =>
  async (response) => {
    sseHeaders(response)
    await streamFrames(response, prefix)
    while (!response.destroyed && !response.writableEnded) {
      await writeAll(response, frame)
      await delay(everyMs)
    }
  }

/** A plain HTTP answer with any status, content type and body. */
export const plain =
  (status: number, contentType: string, body: string | Uint8Array): Reply =>
  async (response) => {
    response.writeHead(status, { "content-type": contentType, "content-length": Buffer.byteLength(body), connection: "close" })
    response.end(body)
  }

/**
 * Starts the hostile provider. `script[i]` answers the i-th request; the last entry repeats for later ones. Any
 * path is accepted: the test is about what comes back, and the built-in provider picks the path.
 */
export const startHostileProvider = async (scheme: HostileScheme, script: ReadonlyArray<Reply>): Promise<HostileProvider> => {
  if (script.length === 0) throw new Error("startHostileProvider: the script needs at least one reply")
  const requests: Array<HostileRequest> = []
  const server = createServer((request, response) => {
    void (async () => {
      const disconnected = new Promise<void>((resolve) => response.once("close", () => resolve()))
      const body = await readBody(request)
      const recorded: HostileRequest = { index: requests.length, path: request.url ?? "", body, disconnected }
      requests.push(recorded)
      const reply = script[Math.min(recorded.index, script.length - 1)] as Reply
      await reply(response, recorded)
    })().catch(() => response.destroy())
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  return {
    baseUrl: `http://127.0.0.1:${port}${BASE_PATH[scheme]}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}
