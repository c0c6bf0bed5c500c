import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { formatIssues } from "../../schema/codec.ts"
import type { DecodeResult } from "../../schema/argument-codec.ts"
import { jsonTextDepth, tooDeepMessage } from "../../schema/json-depth.ts"
import { describeThrown } from "../../tool/describe-thrown.ts"
import { readCappedBody } from "../capped-body.ts"
import { boundConnections, deadlineServerOptions } from "../request-deadlines.ts"
import { DELIVERY_HEADER, INSTANCE_HEADER, SIGNATURE_V2_HEADER, TIMESTAMP_HEADER } from "../wire.ts"
import { failureBody, runToBodyOrPending, serializeBody, type CallbackBody } from "./callback-result.ts"
import type { RemoteCallContext, RemoteTool } from "./remote-tool.ts"
import { ReplayGuard } from "./replay-guard.ts"
import type { ToolSecrets } from "./tool-secrets.ts"

/** A tool as the callback server serves it: the declaration and its current secrets. */
export interface ServedTool {
  readonly tool: RemoteTool
  readonly secrets: ToolSecrets
}

/** Why a callback was refused before its handler ran (reported through `onRejected`). */
export interface CallbackRejection {
  readonly tool: string | undefined
  readonly status: number
  readonly reason: string
}

export interface CallbackServerOptions {
  readonly hostname: string
  readonly port: number
  readonly maxBodyBytes: number
  readonly bodyTimeoutMs: number
  readonly maxConnections: number
  readonly verifySignatures: boolean
  readonly toleranceSeconds: number
  readonly maxReplayEntries: number
  readonly maxArgumentDepth: number
  readonly lookup: (name: string) => ServedTool | undefined
  readonly onRejected: (rejection: CallbackRejection) => void
  /** A verified callback named a host instance other than the last one seen on a callback. */
  readonly onInstance: (instanceId: string) => void
}

/** Every callback URL is `<origin>/tools/<name>`: names are `[A-Za-z0-9_.-]`, so they need no encoding. */
export const CALLBACK_PATH = "/tools/"

const JSON_TYPE = /^application\/json\s*(;|$)/i

const send = (res: ServerResponse, status: number, text: string, close = false): void => {
  if (res.headersSent || res.destroyed) return
  // A flat header list: no header object to build and walk per answer.
  res.writeHead(status, close ? ["content-type", "application/json", "content-length", String(Buffer.byteLength(text)), "connection", "close"] : ["content-type", "application/json", "content-length", String(Buffer.byteLength(text))])
  res.end(text)
}

const refuse = (res: ServerResponse, status: number, error: string, close = false): void =>
  send(res, status, JSON.stringify({ ok: false, error }), close)

const header = (req: IncomingMessage, name: string): string | undefined => {
  const value = req.headers[name]
  return typeof value === "string" ? value : undefined
}

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const kindOf = (value: unknown): string => (value === null ? "null" : Array.isArray(value) ? "array" : typeof value)

/** A call being served: the context its handler gets, and the way to abort that context's signal. */
interface LiveCall {
  readonly context: RemoteCallContext
  abort(reason: unknown): void
}

/**
 * The context's abort signal is made on first read (an AbortController costs microseconds on Node 20): a handler
 * that answers synchronously and never looks at it costs none. An abort before that read is kept and handed to
 * the signal when it is made. `signal` is an own getter, so a spread or a log of the context still has it.
 */
const liveCall = (name: string, callId: string, rawArguments: string, instanceId: string | undefined): LiveCall => {
  let controller: AbortController | undefined
  let aborted = false
  let abortReason: unknown
  const context: RemoteCallContext = {
    name,
    callId,
    rawArguments,
    instanceId,
    get signal() {
      if (controller === undefined) {
        controller = new AbortController()
        if (aborted) controller.abort(abortReason)
      }
      return controller.signal
    }
  }
  const abort = (reason: unknown): void => {
    if (aborted) return
    aborted = true
    abortReason = reason
    controller?.abort(reason)
  }
  return { context, abort }
}

/**
 * The plugin's loopback HTTP server for host callbacks (plain `node:http`: one route, no framework needed).
 * Each callback is bounded in size and time, authenticated (signature, freshness, no replay), decoded by the
 * tool's own codec and answered with exactly one contract body; nothing a caller or a handler does can crash it.
 */
export class CallbackServer {
  private readonly replays: ReplayGuard
  private readonly inFlight = new Set<LiveCall>()
  private accepting = true
  private lastInstance: string | undefined

  private constructor(
    private readonly server: Server,
    private readonly options: CallbackServerOptions,
    readonly origin: string
  ) {
    this.replays = new ReplayGuard(options.toleranceSeconds, options.maxReplayEntries)
  }

  static async start(options: CallbackServerOptions): Promise<CallbackServer> {
    let self: CallbackServer | undefined
    const deadlines = { headersMs: Math.min(options.bodyTimeoutMs, 10_000), requestMs: options.bodyTimeoutMs, maxConnections: options.maxConnections }
    const server = createServer({ maxHeaderSize: 16 * 1024, ...deadlineServerOptions(deadlines) }, (req, res) => {
      self?.handle(req, res)
    })
    boundConnections(server, deadlines)
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject)
      server.listen(options.port, options.hostname, () => {
        server.off("error", reject)
        resolve()
      })
    })
    const address = server.address() as AddressInfo
    const host = address.family === "IPv6" ? `[${address.address}]` : options.hostname === "localhost" ? "localhost" : address.address
    self = new CallbackServer(server, options, `http://${host}:${address.port}`)
    return self
  }

  urlOf(name: string): string {
    return `${this.origin}${CALLBACK_PATH}${name}`
  }

  /**
   * Refuses new callbacks (503), lets those running finish until `deadline` (epoch ms), then aborts them and
   * closes every connection.
   */
  async close(deadline: number): Promise<void> {
    this.accepting = false
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()))
    this.server.closeIdleConnections()
    while (this.inFlight.size > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10))
    for (const call of this.inFlight) call.abort(new Error("the plugin is stopping"))
    this.server.closeAllConnections()
    await closed
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    if (!this.accepting) return this.reject(req, res, undefined, 503, "the plugin is stopping")
    if (req.method !== "POST") {
      res.setHeader("allow", "POST")
      return this.reject(req, res, undefined, 405, "callbacks are POST requests")
    }
    const path = (req.url ?? "").split("?", 1)[0] as string
    const name = path.startsWith(CALLBACK_PATH) ? path.slice(CALLBACK_PATH.length) : ""
    const served = name === "" ? undefined : this.options.lookup(name)
    if (served === undefined) return this.reject(req, res, undefined, 404, `no tool is served at ${JSON.stringify(path.slice(0, 100))}`)
    if (!JSON_TYPE.test(header(req, "content-type") ?? "")) return this.reject(req, res, name, 415, "a callback body must be application/json")
    const declared = Number(header(req, "content-length") ?? "0")
    if (declared > this.options.maxBodyBytes) {
      return this.reject(req, res, name, 413, `callback body of ${declared} bytes exceeds the plugin's limit of ${this.options.maxBodyBytes}`)
    }
    readCappedBody(req, this.options.maxBodyBytes).then(
      (body) => {
        if (body === undefined) this.reject(req, res, name, 413, `callback body exceeds the plugin's limit of ${this.options.maxBodyBytes} bytes`)
        else this.callback(req, res, served, body)
      },
      // A request that broke off has no one left to answer.
      () => undefined
    )
  }

  private reject(req: IncomingMessage, res: ServerResponse, tool: string | undefined, status: number, reason: string): void {
    this.options.onRejected({ tool, status, reason })
    // The rest of an unread body is not worth reading: close the connection after the answer.
    refuse(res, status, reason, !req.complete)
    if (!req.complete) req.resume()
  }

  private callback(req: IncomingMessage, res: ServerResponse, served: ServedTool, body: Buffer): void {
    const { tool } = served
    const nowSeconds = Math.floor(Date.now() / 1000)
    if (this.options.verifySignatures) {
      const delivery = { timestamp: header(req, TIMESTAMP_HEADER), deliveryId: header(req, DELIVERY_HEADER), signature: header(req, SIGNATURE_V2_HEADER) }
      const check = served.secrets.verify(delivery, body, nowSeconds, this.options.toleranceSeconds)
      if (!check.ok) return this.reject(req, res, tool.name, 401, `signature ${check.reason}`)
      // Keyed on the delivery, which the signature covers: a legitimate repeat of a call is another delivery.
      const replay = this.replays.admit(Number(delivery.timestamp), delivery.deliveryId as string, nowSeconds)
      if (replay !== undefined) return this.reject(req, res, tool.name, 401, `signature ${replay}`)
      // Only a verified callback's instance id is worth a look: anyone on loopback can send the header.
      const instance = header(req, INSTANCE_HEADER)
      if (instance !== undefined && instance !== this.lastInstance) {
        this.lastInstance = instance
        this.options.onInstance(instance)
      }
    }
    const text = body.toString("utf8")
    // The envelope adds one level around the arguments; nesting is counted on the text, before any parse.
    if (jsonTextDepth(text, this.options.maxArgumentDepth + 1) > this.options.maxArgumentDepth + 1) {
      return send(res, 200, serializeBody(failureBody(`InvalidArgument: ${tooDeepMessage("arguments", this.options.maxArgumentDepth)}`)))
    }
    let envelope: unknown
    try {
      envelope = JSON.parse(text)
    } catch (thrown) {
      return this.reject(req, res, tool.name, 400, `callback body is not JSON: ${describeThrown(thrown, 200)}`)
    }
    if (!isPlainObject(envelope) || envelope["name"] !== tool.name) {
      return this.reject(req, res, tool.name, 400, `callback body must be an object naming the tool "${tool.name}"`)
    }
    const callId = typeof envelope["call_id"] === "string" ? envelope["call_id"] : ""
    const rawArguments = typeof envelope["raw_arguments"] === "string" ? envelope["raw_arguments"] : ""
    const args = this.argumentsOf(envelope, rawArguments)
    if (typeof args === "string") return send(res, 200, serializeBody(failureBody(`InvalidArgument: ${args}`)))
    const call = liveCall(tool.name, callId, rawArguments, header(req, INSTANCE_HEADER))
    const answer = this.run(served, args, call)
    // Answered synchronously (decode and handler): nothing is left to cancel or to time out.
    if (!(answer instanceof Promise)) return send(res, 200, serializeBody(answer))
    this.inFlight.add(call)
    // The host closing its request (a cancelled call, its own deadline) aborts the handler.
    res.once("close", () => {
      if (!res.writableFinished) call.abort(new Error("the host closed the callback"))
      this.inFlight.delete(call)
    })
    void answer.then((out) => send(res, 200, serializeBody(out)))
  }

  /** The arguments object, or why there is none. `raw_arguments` is the fallback when `arguments` is absent. */
  private argumentsOf(envelope: Record<string, unknown>, rawArguments: string): Record<string, unknown> | string {
    const given = envelope["arguments"]
    if (isPlainObject(given)) return given
    if (given !== undefined && given !== null) return `arguments must be a JSON object, got ${kindOf(given)}`
    if (rawArguments === "") return {}
    // A string inside the envelope: its nesting was not counted with the envelope's.
    if (jsonTextDepth(rawArguments, this.options.maxArgumentDepth) > this.options.maxArgumentDepth) return tooDeepMessage("arguments", this.options.maxArgumentDepth)
    try {
      const parsed: unknown = JSON.parse(rawArguments)
      return isPlainObject(parsed) ? parsed : `arguments must be a JSON object, got ${kindOf(parsed)}`
    } catch (thrown) {
      return `arguments are not valid JSON: ${describeThrown(thrown, 200)}`
    }
  }

  /** The call's body: at once when decoding and the handler are synchronous, else a promise bounded by the tool's deadline. */
  private run(served: ServedTool, args: Record<string, unknown>, call: LiveCall): CallbackBody | Promise<CallbackBody> {
    const { tool } = served
    let decoded: DecodeResult<unknown> | Promise<DecodeResult<unknown>>
    try {
      decoded = tool.codec.decode(args)
    } catch (thrown) {
      return failureBody(`InvalidArgument: ${describeThrown(thrown, 400)}`)
    }
    if (decoded instanceof Promise) {
      return decoded.then(
        (result) => this.runDecoded(tool, result, call),
        (thrown: unknown) => failureBody(`InvalidArgument: ${describeThrown(thrown, 400)}`)
      )
    }
    return this.runDecoded(tool, decoded, call)
  }

  private runDecoded(tool: RemoteTool, decoded: DecodeResult<unknown>, call: LiveCall): CallbackBody | Promise<CallbackBody> {
    if (!decoded.ok) return failureBody(`InvalidArgument: ${formatIssues(decoded)}`)
    const answer = runToBodyOrPending(tool, decoded.value, call.context)
    if (!(answer instanceof Promise)) return answer
    return new Promise<CallbackBody>((resolve) => {
      const timer = setTimeout(() => {
        call.abort(new Error(`tool "${tool.name}" exceeded its ${tool.timeoutSeconds} s deadline`))
        resolve(failureBody(`ToolTimeout: tool "${tool.name}" exceeded its ${tool.timeoutSeconds} s deadline`))
      }, tool.timeoutSeconds * 1000)
      void answer.then((body) => {
        clearTimeout(timer)
        resolve(body)
      })
    })
  }
}
