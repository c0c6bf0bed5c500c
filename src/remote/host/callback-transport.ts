import { lookup as dnsLookup, type LookupAddress } from "node:dns"
import type { LookupFunction } from "node:net"
import type { Duplex } from "node:stream"
import { Agent, type Dispatcher } from "undici"
import { quote } from "../../schema/quote.ts"
import { unwatchAbort, watchAbort, type AbortWatch } from "../../tool/abort-watch.ts"
import { isLoopbackAddress } from "./loopback.ts"

/**
 * One POST to a plugin's callback, on undici's dispatcher API (decision 0077; it replaced `node:http`, decision
 * 0050, for a third of the client's cost per call): a connection pool of the host's own, so HTTP(S)_PROXY and
 * NO_PROXY are never consulted; redirects are not followed (undici follows none unless told to); one deadline
 * covers queueing, connect, send, headers and body together; the body read stops at a byte cap.
 */

export interface CallbackRequest {
  readonly url: URL
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
  /** Total deadline for the call, in milliseconds. */
  readonly timeoutMs: number
  /** Largest response body read, in bytes. */
  readonly maxResponseBytes: number
  readonly signal: AbortSignal
}

/** How one callback ended, before it is read as a tool result. */
export type CallbackResponse =
  | { readonly kind: "response"; readonly status: number; readonly location: string | undefined; readonly body: string }
  | { readonly kind: "too_large"; readonly status: number; readonly limit: number }
  | { readonly kind: "timeout"; readonly timeoutMs: number }
  | { readonly kind: "cancelled" }
  /** The plugin could not be reached at all: these count towards eviction. */
  | { readonly kind: "unreachable"; readonly code: string; readonly message: string }
  | { readonly kind: "failed"; readonly message: string }

/** Error codes meaning nothing listens at the callback address (counted for eviction). */
const UNREACHABLE = new Set(["ECONNREFUSED", "EHOSTUNREACH", "ENETUNREACH", "EADDRNOTAVAIL", "ENOTFOUND", "ELOOPBACKONLY"])

/**
 * `localhost` is looked up, but only loopback answers are used: a resolver (or hosts file) mapping it elsewhere
 * cannot turn a checked callback into a request to another machine.
 */
const loopbackLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { ...options, all: true }, (error, addresses: Array<LookupAddress>) => {
    if (error !== null) return callback(error, "", 4)
    const loopback = addresses.filter((entry) => isLoopbackAddress(entry.address))
    if (loopback.length === 0) {
      const refused = Object.assign(new Error(`${hostname} does not resolve to a loopback address`), { code: "ELOOPBACKONLY" })
      return callback(refused, "", 4)
    }
    if ((options as { all?: boolean }).all === true) return (callback as unknown as (e: null, a: Array<LookupAddress>) => void)(null, loopback)
    const first = loopback[0] as LookupAddress
    callback(null, first.address, first.family)
  })
}

/** Connections kept per plugin origin: more parallel calls than this wait for a free one (inside their deadline). */
export const CALLBACK_CONNECTIONS_PER_ORIGIN = 64

// Keep-alive: a plugin answers many calls; a fresh TCP handshake per call would dominate loopback latency. undici
// also reads the plugin's `Keep-Alive: timeout=` hint and drops an idle connection before the plugin would.
// Its own header and body timeouts are off: the per-call deadline below covers both.
const agent = new Agent({ connections: CALLBACK_CONNECTIONS_PER_ORIGIN, headersTimeout: 0, bodyTimeout: 0, connect: { lookup: loopbackLookup } })

const codeOf = (error: unknown): string => {
  const code = (error as { code?: unknown } | null)?.code
  return typeof code === "string" ? code : ""
}

/**
 * A kept-alive connection the plugin closed in the meantime fails at once, before any answer: the call never
 * reached the plugin, so it is sent again once on a new connection. undici reports that as a socket error whose
 * connection had already carried earlier exchanges (bytes read before this request); a fresh connection that
 * fails is not retried (the plugin may have seen the call).
 */
const isStaleConnection = (error: unknown): boolean =>
  codeOf(error) === "UND_ERR_SOCKET" && ((error as { socket?: { bytesRead?: unknown } }).socket?.bytesRead ?? 0) !== 0

const locationOf = (headers: Readonly<Record<string, string | Array<string> | undefined>>): string | undefined => {
  const location = headers["location"]
  return typeof location === "string" ? location : undefined
}

/**
 * One callback exchange as undici's dispatch handler: it settles exactly once — with the answer, at the byte cap,
 * at the deadline, on cancellation or on a transport error — and whatever settles it first aborts the request.
 */
class Exchange implements Dispatcher.DispatchHandler {
  private readonly options: Dispatcher.DispatchOptions
  private controller: Dispatcher.DispatchController | undefined
  private settled = false
  private retried = false
  /** Any answer began, informational ones included: the plugin has seen the call, so it is never sent again. */
  private answered = false
  private status = 0
  private location: string | undefined
  private chunks: Array<Buffer> = []
  private size = 0
  private timer: NodeJS.Timeout | undefined
  private watch: AbortWatch | undefined

  constructor(
    private readonly call: CallbackRequest,
    private readonly resolve: (response: CallbackResponse) => void
  ) {
    const headers: Array<string> = ["content-type", "application/json"]
    for (const name in call.headers) headers.push(name, call.headers[name] as string)
    const { url } = call
    this.options = { origin: url.origin, path: `${url.pathname}${url.search}`, method: "POST", headers, body: call.body }
  }

  start(): void {
    this.timer = setTimeout(() => this.settle({ kind: "timeout", timeoutMs: this.call.timeoutMs }), this.call.timeoutMs)
    // The run's signal is shared by every call of a batch: one shared watcher, not one listener per call.
    this.watch = watchAbort(this.call.signal, () => this.settle({ kind: "cancelled" }))
    this.send()
  }

  private send(): void {
    try {
      agent.dispatch(this.options, this)
    } catch (error) {
      this.settle(this.failure(error))
    }
  }

  private settle(response: CallbackResponse): void {
    if (this.settled) return
    this.settled = true
    clearTimeout(this.timer)
    if (this.watch !== undefined) unwatchAbort(this.watch)
    this.chunks = []
    // Closing the connection is what tells the plugin the call is over (its handler's signal aborts).
    if (response.kind !== "response") this.controller?.abort(new Error(`callback ${response.kind}`))
    this.resolve(response)
  }

  private failure(error: unknown): CallbackResponse {
    const code = codeOf(error)
    const message = error instanceof Error ? error.message : String(error)
    if (UNREACHABLE.has(code)) return { kind: "unreachable", code, message }
    return { kind: "failed", message: code === "" ? message : `${code}: ${message}` }
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    // Settled while it waited for a connection (deadline, cancellation): it is never sent.
    if (this.settled) return controller.abort(new Error("callback already settled"))
    this.controller = controller
  }

  onRequestUpgrade(_controller: Dispatcher.DispatchController, statusCode: number, _headers: unknown, socket: Duplex): void {
    socket.destroy()
    this.settle({ kind: "failed", message: `the plugin answered HTTP ${statusCode} (a protocol upgrade)` })
  }

  onResponseStart(_controller: Dispatcher.DispatchController, statusCode: number, headers: Readonly<Record<string, string | Array<string> | undefined>>): void {
    this.answered = true
    // 1xx answers are informational; the final one follows.
    if (statusCode < 200) return
    this.status = statusCode
    if (statusCode >= 300 && statusCode < 400) this.location = locationOf(headers)
  }

  onResponseData(_controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.settled) return
    this.size += chunk.length
    // The rest is not worth reading: the connection goes, and the call is an error result saying why.
    if (this.size > this.call.maxResponseBytes) return this.settle({ kind: "too_large", status: this.status, limit: this.call.maxResponseBytes })
    this.chunks.push(chunk)
  }

  onResponseEnd(): void {
    if (this.settled) return
    const { chunks } = this
    const body = chunks.length === 1 ? (chunks[0] as Buffer).toString("utf8") : Buffer.concat(chunks).toString("utf8")
    this.settle({ kind: "response", status: this.status, location: this.location, body })
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    if (this.settled) return
    if (!this.answered && !this.retried && isStaleConnection(error)) {
      this.retried = true
      this.controller = undefined
      return this.send()
    }
    this.settle(this.failure(error))
  }
}

/** Sends one callback. Never rejects: every way it can end is a `CallbackResponse`. */
export const sendCallback = (call: CallbackRequest): Promise<CallbackResponse> => {
  if (call.signal.aborted) return Promise.resolve({ kind: "cancelled" })
  return new Promise((resolve) => new Exchange(call, resolve).start())
}

/** A short, readable line for each way a callback can fail (the model reads it as the tool's error). */
export const describeCallbackFailure = (target: string, response: Exclude<CallbackResponse, { kind: "response" }>): string => {
  switch (response.kind) {
    case "timeout":
      return `callback to ${target} timed out after ${response.timeoutMs / 1000} s`
    case "cancelled":
      return `callback to ${target} cancelled`
    case "unreachable":
      return response.code === "ECONNREFUSED"
        ? `callback to ${target} failed: connection refused (is the plugin running?)`
        : `callback to ${target} failed: ${response.code} ${quote(response.message)}`
    case "too_large":
      return `callback to ${target} answered with a body larger than ${response.limit} bytes; it was cut off there and not used`
    case "failed":
      return `callback to ${target} failed: ${quote(response.message, 200)}`
  }
}
