import { createHash, timingSafeEqual } from "node:crypto"
import type { HttpBindings } from "@hono/node-server"
import { type Context, Hono } from "hono"
import { streamSSE } from "hono/streaming"
import type { z } from "zod"
import { jsonTextDepth, tooDeepMessage } from "../../schema/json-depth.ts"
import { describeThrown } from "../../tool/describe-thrown.ts"
import { isClientGone } from "../client-gone.ts"
import type { Subscriber, WorkerEvent } from "../../worker/subscriber.ts"
import type { ToolOutcome } from "../../worker/tool-outcome.ts"
import { isWorkerError } from "../../worker/worker-error.ts"
import type { RunResult } from "../../worker/worker.ts"
import { ACCESS_KEY_HEADER, INSTANCE_HEADER, OPERATOR_TOKEN_HEADER, REGISTRANT_TOKEN_HEADER } from "../wire.ts"
import { createPluginLlmHandler } from "../../plugin-llm/http-handler.ts"
import type { PluginRuntime } from "../../plugin-llm/plugin-runtime.ts"
import type { SecretRedactor } from "../../redact/secrets.ts"
import { ChatBody, ClaimBody, ClearBody, CommandBody, CompleteBody, CompleteStructuredBody, RegisterBody, UnregisterBody } from "./api-schemas.ts"
import { issuePath } from "./config.ts"
import { isLoopbackAddress } from "./loopback.ts"
import { openApiDocument } from "./openapi.ts"
import { RoleBusy } from "./role.ts"
import { renderStatusPage } from "./status-page.ts"
import type { Issue, Outcome, ToolHostState } from "./tool-host-state.ts"
import type { RequestLog } from "./request-log.ts"

export interface HttpAppOptions {
  readonly state: ToolHostState
  readonly maxBodyBytes: number
  /** Deepest nesting of a request body's JSON, counted on the text before parsing. */
  readonly maxJsonDepth: number
  /** When set, every request must carry it in `x-llm-worker-access-key`. */
  readonly accessKey: string | undefined
  /** What `POST /api/commands/<name>` requires in `x-llm-worker-operator-token`; undefined: commands are refused. */
  readonly operatorToken: string | undefined
  readonly version: string
  readonly log: (line: string) => void
  /** The plugin-LLM lane: in-process plugins' commands, and `ctx.llm` over HTTP for remote plugins. */
  readonly plugins: PluginRuntime
  /** The host's credentials: no answer (JSON, SSE event or page) carries one, whatever produced its text. */
  readonly redactor: SecretRedactor
  /** One line per request (none when quiet). */
  readonly requestLog?: RequestLog
}

/** What a handler tells the request log about its request beyond method, path and status. */
interface RequestNote {
  role?: string
  error?: string
  streamFailure?: number
}

type Env = { Bindings: HttpBindings; Variables: { note: RequestNote | undefined } }

/**
 * The body of a server-sent event stream, passed through unchanged, with `end` told once how it ended: the
 * request log's line for a stream is written when the stream is over, not when its headers were sent.
 */
const observeEnd = (body: ReadableStream<Uint8Array>, end: (how: "ended" | "client gone" | "failed") => void): ReadableStream<Uint8Array> => {
  const reader = body.getReader()
  let told = false
  const tell = (how: "ended" | "client gone" | "failed"): void => {
    if (told) return
    told = true
    end(how)
  }
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await reader.read()
        if (done) {
          tell("ended")
          controller.close()
        } else controller.enqueue(value)
      } catch (thrown) {
        tell("failed")
        controller.error(thrown)
      }
    },
    cancel(reason) {
      tell("client gone")
      return reader.cancel(reason)
    }
  })
}
type Parsed<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly response: Response }

const sha = (text: string): Buffer => createHash("sha256").update(text, "utf8").digest()

/** `Host` names that mean this machine; anything else is a DNS-rebinding attempt from a browser. */
const loopbackHostHeader = (host: string | undefined, bound: string): boolean => {
  if (host === undefined) return true
  const name = host.replace(/:\d+$/, "").toLowerCase()
  return name === "localhost" || name === "[::1]" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(name) || name === bound.toLowerCase()
}

/** A browser page from another origin (`Origin` header) must not drive the host; loopback origins may (the status page). */
const loopbackOrigin = (origin: string | undefined): boolean => {
  if (origin === undefined) return true
  try {
    const { hostname } = new URL(origin)
    return hostname === "localhost" || hostname === "[::1]" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname)
  } catch {
    return false
  }
}

const eventJson = (event: WorkerEvent): string =>
  JSON.stringify(event, (_key, value: unknown) =>
    value instanceof Error ? { name: value.name, _tag: (value as { _tag?: unknown })._tag, message: value.message } : value
  )

/** The answer's text: what the assistant said after the last tool result of the run. */
const answerText = (result: RunResult): string => {
  const texts: Array<string> = []
  for (const item of result.items) {
    if (item.type === "function_call_output") texts.length = 0
    if (item.type === "message" && item.role === "assistant") {
      for (const part of item.content) if (part.type === "output_text") texts.push(part.text)
    }
  }
  return texts.join("")
}

const usageOf = (result: RunResult): Record<string, number> =>
  Object.fromEntries(Object.entries(result.usage).filter((entry): entry is [string, number] => typeof entry[1] === "number"))

/** The host's HTTP API on Hono; `fetch` is served by @hono/node-server (see tool-host.ts). */
export const createHttpApp = (options: HttpAppOptions, boundHost: string): Hono<Env> => {
  const { state } = options
  const instance = state.instanceId
  const accessKeyHash = options.accessKey === undefined ? undefined : sha(options.accessKey)
  const operatorTokenHash = options.operatorToken === undefined ? undefined : sha(options.operatorToken)
  const app = new Hono<Env>()

  // The HTTP boundary: every answer's text passes the redactor here, once. Only known secrets are replaced (by
  // value, in every spelling): a model's answer quoting some URL is not the host's to rewrite.
  const { redactor } = options
  const sendJson = (c: Context<Env>, body: unknown, status: number): Response => {
    const note = c.get("note")
    const error = (body as { error?: unknown } | null)?.error
    if (note !== undefined && typeof error === "string") note.error = redactor.redactSecrets(error)
    return c.body(redactor.redactSecrets(JSON.stringify(body)), status as 200, { "content-type": "application/json" })
  }
  const reply = (c: Context<Env>, outcome: Outcome): Response => sendJson(c, { ...outcome.body, instance_id: instance }, outcome.status)
  const fail = (c: Context<Env>, status: number, error: string, extra: Readonly<Record<string, unknown>> = {}): Response =>
    reply(c, { status, body: { ok: false, error, ...extra } })
  const invalid = (c: Context<Env>, issues: ReadonlyArray<Issue>): Response =>
    fail(c, 422, issues.map((i) => (i.path === "" ? i.message : `${i.path}: ${i.message}`)).join("; "), { issues })

  /** Reads the body as JSON whatever its content type (never as a form), within the size and depth bounds. */
  const readJson = async <S extends z.ZodType>(c: Context<Env>, schema: S): Promise<Parsed<z.output<S>>> => {
    const declared = Number(c.req.header("content-length") ?? "0")
    if (declared > options.maxBodyBytes) return { ok: false, response: fail(c, 413, `body larger than ${options.maxBodyBytes} bytes`) }
    const chunks: Array<Uint8Array> = []
    let size = 0
    const body = c.req.raw.body
    if (body !== null) {
      const reader = body.getReader()
      for (;;) {
        let read: Awaited<ReturnType<typeof reader.read>>
        try {
          read = await reader.read()
        } catch {
          // A body stream fails only when its connection does (a hang-up, a reset, the request deadline): the
          // client is gone, there is nothing to log and no one to answer.
          return { ok: false, response: fail(c, 400, "the request ended before its body did") }
        }
        const { done, value } = read
        if (done) break
        size += value.byteLength
        if (size > options.maxBodyBytes) {
          await reader.cancel().catch(() => undefined)
          return { ok: false, response: fail(c, 413, `body larger than ${options.maxBodyBytes} bytes`) }
        }
        chunks.push(value)
      }
    }
    let text: string
    try {
      text = new TextDecoder("utf-8", { fatal: true }).decode(Buffer.concat(chunks))
    } catch {
      return { ok: false, response: invalid(c, [{ path: "", message: "body is not valid UTF-8" }]) }
    }
    if (text.trim() === "") return { ok: false, response: invalid(c, [{ path: "", message: "body is empty; send a JSON object" }]) }
    if (jsonTextDepth(text, options.maxJsonDepth) > options.maxJsonDepth) {
      return { ok: false, response: invalid(c, [{ path: "", message: tooDeepMessage("body", options.maxJsonDepth) }]) }
    }
    let value: unknown
    try {
      value = JSON.parse(text)
    } catch {
      return { ok: false, response: invalid(c, [{ path: "", message: "body is not JSON (forms are not accepted; send a JSON object)" }]) }
    }
    if (typeof value !== "object" || value === null || Array.isArray(value)) {
      return { ok: false, response: invalid(c, [{ path: "", message: "body must be a JSON object" }]) }
    }
    const parsed = schema.safeParse(value)
    if (!parsed.success) {
      const issues = parsed.error.issues.flatMap((issue) =>
        issue.code === "unrecognized_keys"
          ? issue.keys.map((key) => ({ path: issuePath([...issue.path, key]), message: "unknown field" }))
          : [{ path: issuePath(issue.path), message: issue.message }]
      )
      return { ok: false, response: invalid(c, issues) }
    }
    return { ok: true, value: parsed.data }
  }

  const token = (c: Context<Env>): string | undefined => {
    const value = c.req.header(REGISTRANT_TOKEN_HEADER)
    return value === undefined || value === "" ? undefined : value
  }

  // First, so that refusals by the gates below are logged too. Nothing of a body is read here: its declared size.
  const requestLog = options.requestLog
  if (requestLog?.enabled === true) {
    app.use(async (c, next) => {
      const started = performance.now()
      const note: RequestNote = {}
      c.set("note", note)
      await next()
      const declared = Number(c.req.header("content-length") ?? "")
      const status = c.res.status
      const record = (stream?: "ended" | "client gone" | "failed"): void =>
        requestLog.request({
          method: c.req.method,
          path: new URL(c.req.url).pathname,
          status,
          ms: performance.now() - started,
          role: note.role,
          error: note.error,
          streamFailure: note.streamFailure,
          bytesIn: Number.isSafeInteger(declared) ? declared : undefined,
          clientGone: c.req.raw.signal.aborted,
          stream
        })
      const body = c.res.body
      if (body !== null && (c.res.headers.get("content-type") ?? "").startsWith("text/event-stream")) c.res = new Response(observeEnd(body, record), c.res)
      else record()
    })
  }

  app.use(async (c, next) => {
    c.header(INSTANCE_HEADER, instance)
    c.header("cache-control", "no-store")
    c.header("x-content-type-options", "nosniff")
    // The gate reads the socket, never a header: X-Forwarded-For and friends are the caller's own words.
    if (!isLoopbackAddress(c.env.incoming.socket.remoteAddress)) return fail(c, 403, "only loopback callers are accepted")
    if (!loopbackHostHeader(c.req.header("host"), boundHost)) return fail(c, 403, "Host header does not name this machine")
    if (!loopbackOrigin(c.req.header("origin"))) return fail(c, 403, "requests from web pages of other origins are refused")
    if (accessKeyHash !== undefined) {
      const presented = c.req.header(ACCESS_KEY_HEADER)
      if (presented === undefined || !timingSafeEqual(sha(presented), accessKeyHash)) return fail(c, 403, `missing or wrong ${ACCESS_KEY_HEADER}`)
    }
    await next()
  })

  app.post("/api/tools/register", async (c) => {
    const body = await readJson(c, RegisterBody)
    if (!body.ok) return body.response
    const v = body.value
    return reply(
      c,
      state.register(
        {
          name: v.name,
          description: v.description ?? undefined,
          parameters: v.parameters ?? undefined,
          callback_url: v.callback_url,
          role: v.role,
          source: v.source ?? undefined,
          timeout_seconds: v.timeout_seconds ?? undefined
        },
        token(c)
      )
    )
  })

  app.post("/api/tools/unregister", async (c) => {
    const body = await readJson(c, UnregisterBody)
    return body.ok ? reply(c, state.unregister(body.value, token(c))) : body.response
  })

  app.post("/api/tools/clear", async (c) => {
    const body = await readJson(c, ClearBody)
    return body.ok ? reply(c, state.clear(body.value, token(c))) : body.response
  })

  app.post("/api/sources/claim", async (c) => {
    const body = await readJson(c, ClaimBody)
    return body.ok ? reply(c, state.claimSource(body.value.source, token(c))) : body.response
  })

  app.get("/api/tools", (c) => reply(c, state.list(c.req.query("role"))))

  app.get("/api/health", (c) => {
    const withoutModel = [...state.roles.values()].flatMap((role) => (role.client.ok ? [] : [{ role: role.name, problem: role.client.problem }]))
    return reply(c, { status: 200, body: { ok: true, roles: [...state.roles.keys()], roles_without_model: withoutModel } })
  })

  app.post("/api/chat", async (c) => {
    const body = await readJson(c, ChatBody)
    if (!body.ok) return body.response
    const name = body.value.role ?? state.defaultRole
    const role = state.roles.get(name === "" ? state.defaultRole : name)
    if (role === undefined) return fail(c, 404, `unknown role: ${name}`)
    const note = c.get("note")
    if (note !== undefined) note.role = role.name
    if (!role.client.ok) return fail(c, 503, `role "${role.name}" has no model: ${role.client.problem}`)
    const outcomes: Array<ToolOutcome> = []
    const collect: Subscriber = { onToolResult: (event) => void outcomes.push(event.outcome) }
    const answer = (result: RunResult) => ({
      ok: true,
      role: role.name,
      text: answerText(result),
      tool_calls: outcomes.map((o) => ({ name: o.name, call_id: o.callId, status: o.status, output: o.output })),
      usage: usageOf(result),
      instance_id: instance
    })
    const failure = (thrown: unknown): { status: number; body: Record<string, unknown> } => {
      if (thrown instanceof RoleBusy) return { status: 429, body: { ok: false, error: thrown.message } }
      if (isWorkerError(thrown)) return { status: 502, body: { ok: false, error: `${thrown._tag}: ${thrown.message}` } }
      options.log(`llm-worker host: chat failed unexpectedly: ${describeThrown(thrown, 2000)}`)
      return { status: 500, body: { ok: false, error: "internal error" } }
    }
    if ((c.req.header("accept") ?? "").includes("text/event-stream")) {
      return streamSSE(c, async (stream) => {
        const controller = new AbortController()
        stream.onAbort(() => controller.abort())
        const signal = AbortSignal.any([controller.signal, c.req.raw.signal])
        const writes: Array<Promise<void>> = []
        // The stream's side of the HTTP boundary: each event's text is redacted like every JSON answer.
        const send = (event: string, data: string): Promise<void> => stream.writeSSE({ event, data: redactor.redactSecrets(data) })
        const forward: Subscriber = {
          onEvent: (event) => {
            if (event.type === "tool_result") outcomes.push(event.outcome)
            writes.push(send(event.type, eventJson(event)))
          }
        }
        try {
          const result = await role.chat(body.value.message, { signal, subscriber: forward })
          await Promise.all(writes)
          await send("result", JSON.stringify(answer(result)))
        } catch (thrown) {
          await Promise.all(writes).catch(() => undefined)
          const { status, body: errorBody } = failure(thrown)
          if (note !== undefined) {
            note.streamFailure = status
            if (typeof errorBody["error"] === "string") note.error = redactor.redactSecrets(errorBody["error"])
          }
          await send("failure", JSON.stringify({ ...errorBody, status, instance_id: instance }))
        }
      })
    }
    try {
      const result = await role.chat(body.value.message, { signal: c.req.raw.signal, subscriber: collect })
      return sendJson(c, answer(result), 200)
    } catch (thrown) {
      const { status, body: errorBody } = failure(thrown)
      return reply(c, { status, body: errorBody })
    }
  })

  app.delete("/api/chat", async (c) => {
    const name = c.req.query("role") ?? state.defaultRole
    const role = state.roles.get(name === "" ? state.defaultRole : name)
    if (role === undefined) return fail(c, 404, `unknown role: ${name}`)
    await role.clearConversation()
    return reply(c, { status: 200, body: { ok: true, role: role.name, cleared: true } })
  })

  // The plugin-LLM lane, behind the same gates as everything above (loopback socket, Host, Origin, access key,
  // body size and depth). Remote plugins authenticate with the registrant token the host issued to their source:
  // that source is the plugin id the trust gate, budgets and audit see.
  const lane = createPluginLlmHandler({ runtime: options.plugins, pluginForToken: (t) => state.sourceOfToken(t), maxBodyDepth: options.maxJsonDepth })
  const toLane = async (c: Context<Env>, body: unknown, presented?: string): Promise<Response> => {
    const answer = await lane.handle({
      method: c.req.method,
      path: new URL(c.req.url).pathname,
      headers: presented === undefined ? {} : { [REGISTRANT_TOKEN_HEADER]: presented },
      body,
      signal: c.req.raw.signal
    })
    return reply(c, answer)
  }

  app.get("/api/commands", (c) => toLane(c, undefined))

  app.post("/api/commands/:name", async (c) => {
    // A command runs an in-process plugin with the host's privileges and on that plugin's LLM budget: only the
    // operator may, and that is settled before the body is read. Plugins (remote ones hold the access key) may not.
    if (operatorTokenHash === undefined) return fail(c, 403, "commands cannot be run over HTTP: the host has no operator token (server.operator_token_env)")
    const presented = c.req.header(OPERATOR_TOKEN_HEADER)
    if (presented === undefined || presented === "") return fail(c, 401, `present the operator token in ${OPERATOR_TOKEN_HEADER}`)
    if (!timingSafeEqual(sha(presented), operatorTokenHash)) return fail(c, 401, "wrong operator token")
    const body = await readJson(c, CommandBody)
    return body.ok ? toLane(c, body.value) : body.response
  })

  for (const [path, schema] of [["/api/llm/complete", CompleteBody], ["/api/llm/complete-structured", CompleteStructuredBody]] as const) {
    app.post(path, async (c) => {
      // Who is asking is settled before the body is read: a caller without a valid token learns nothing more.
      const presented = token(c)
      if (presented === undefined) return fail(c, 401, `present the plugin's registrant token in ${REGISTRANT_TOKEN_HEADER}`)
      if (state.sourceOfToken(presented) === undefined) return fail(c, 401, "unknown registrant token")
      const body = await readJson(c, schema)
      return body.ok ? toLane(c, body.value, presented) : body.response
    })
  }

  app.get("/", (c) => {
    c.header("content-security-policy", "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
    return c.html(redactor.redactSecrets(renderStatusPage(state, options.plugins)))
  })

  const document = openApiDocument(options.version)
  app.get("/openapi.json", (c) => c.json(document))

  app.notFound((c) => fail(c, 404, `no such endpoint: ${c.req.method} ${new URL(c.req.url).pathname.slice(0, 200)}`))
  app.onError((error, c) => {
    // A client that went away while its request was being served is not an error of the host.
    if (isClientGone(error) && c.env.incoming.destroyed) return fail(c, 400, "the client went away")
    options.log(`llm-worker host: unexpected error: ${describeThrown(error, 2000)}`)
    return fail(c, 500, "internal error")
  })
  return app
}
