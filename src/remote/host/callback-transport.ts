import { lookup as dnsLookup, type LookupAddress } from "node:dns"
import { Agent as HttpAgent, request as httpRequest } from "node:http"
import { Agent as HttpsAgent, request as httpsRequest } from "node:https"
import type { LookupFunction } from "node:net"
import { quote } from "../../schema/quote.ts"
import { whenAborted } from "../../tool/abort-watch.ts"
import { readCappedBody } from "../capped-body.ts"
import { isLoopbackAddress } from "./loopback.ts"

/**
 * One POST to a plugin's callback, on node:http directly: no `fetch` dispatcher and no proxy agent, so
 * HTTP(S)_PROXY and NO_PROXY never route a callback elsewhere; redirects are not followed; one deadline covers
 * connect, send, headers and body together; the body read stops at a byte cap.
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

// Keep-alive: a plugin answers many calls; a fresh TCP handshake per call would dominate loopback latency.
const httpAgent = new HttpAgent({ keepAlive: true, maxSockets: 64, maxFreeSockets: 16, lookup: loopbackLookup } as ConstructorParameters<typeof HttpAgent>[0])
const httpsAgent = new HttpsAgent({ keepAlive: true, maxSockets: 64, maxFreeSockets: 16, lookup: loopbackLookup } as ConstructorParameters<typeof HttpsAgent>[0])

const codeOf = (error: unknown): string => {
  const code = (error as { code?: unknown } | null)?.code
  return typeof code === "string" ? code : ""
}

const attempt = (call: CallbackRequest, deadline: AbortSignal, retryable: { value: boolean }): Promise<CallbackResponse> =>
  new Promise((resolve) => {
    const https = call.url.protocol === "https:"
    const options = {
      method: "POST",
      agent: https ? httpsAgent : httpAgent,
      headers: { ...call.headers, "content-type": "application/json", "content-length": String(Buffer.byteLength(call.body)) },
      signal: deadline
    }
    let answered = false
    const request = (https ? httpsRequest : httpRequest)(call.url, options, (response) => {
      answered = true
      retryable.value = false
      const status = response.statusCode ?? 0
      const location = typeof response.headers.location === "string" ? response.headers.location : undefined
      readCappedBody(response, call.maxResponseBytes).then(
        (body) => {
          if (body !== undefined) return resolve({ kind: "response", status, location, body: body.toString("utf8") })
          // The rest is not worth reading: the connection goes, and the call is an error result saying why.
          response.destroy()
          resolve({ kind: "too_large", status, limit: call.maxResponseBytes })
        },
        (error: unknown) => resolve(failure(error))
      )
    })
    const failure = (error: unknown): CallbackResponse => {
      if (call.signal.aborted) return { kind: "cancelled" }
      if (deadline.aborted) return { kind: "timeout", timeoutMs: call.timeoutMs }
      const code = codeOf(error)
      const message = error instanceof Error ? error.message : String(error)
      if (UNREACHABLE.has(code)) return { kind: "unreachable", code, message }
      return { kind: "failed", message: code === "" ? message : `${code}: ${message}` }
    }
    request.on("error", (error) => {
      // Once the response has begun, its own stream reports how the body ended.
      if (answered) return
      // A kept-alive socket the plugin closed in the meantime fails at once with ECONNRESET: the call never
      // reached the plugin, so it is sent again once on a new connection (what Node's docs advise).
      if (retryable.value && request.reusedSocket && codeOf(error) === "ECONNRESET" && !deadline.aborted) {
        retryable.value = false
        resolve(attempt(call, deadline, retryable))
        return
      }
      resolve(failure(error))
    })
    request.end(call.body)
  })

/** Sends one callback. Never rejects: every way it can end is a `CallbackResponse`. */
export const sendCallback = async (call: CallbackRequest): Promise<CallbackResponse> => {
  if (call.signal.aborted) return { kind: "cancelled" }
  const controller = new AbortController()
  const timer = setTimeout(() => controller.abort(), call.timeoutMs)
  // The run's signal is shared by every call of a batch: one shared watcher, not one listener per call.
  const unwatch = whenAborted(call.signal, () => controller.abort())
  try {
    return await attempt(call, controller.signal, { value: true })
  } finally {
    clearTimeout(timer)
    unwatch()
  }
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
