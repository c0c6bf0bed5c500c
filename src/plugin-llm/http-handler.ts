import { REGISTRANT_TOKEN_HEADER } from "../remote/wire.ts"
import { DEFAULT_MAX_JSON_DEPTH, measureValue, tooDeepMessage } from "../schema/json-depth.ts"
import { isPluginLlmError, type PluginLlmError } from "./errors.ts"
import type { AuditRecord, PluginLlmUsage } from "./audit.ts"
import type { PluginRuntime } from "./plugin-runtime.ts"
import type { CompleteResult, StructuredResult } from "./plugin-llm.ts"

/** A request as any HTTP server hands it over: the path without the query, lower-case header names, parsed JSON. */
export interface HandlerRequest {
  readonly method: string
  readonly path: string
  readonly headers: Readonly<Record<string, string | ReadonlyArray<string> | undefined>>
  /** The parsed JSON body (undefined for none). The host bounds its size before parsing. */
  readonly body: unknown
  /** Fires when the client hangs up: the provider call is cancelled. */
  readonly signal?: AbortSignal
}

/** The answer to send: the HTTP status and a JSON body (`ok: true` with the result, or `ok: false` with `error`). */
export interface HandlerResponse {
  /** 200; else 401 (token), 403 (gate), 404, 422 (input, schema), 429 (rate, budget), 499 (cancelled), 500, 502 (provider), 504 (timeout). */
  readonly status: number
  /** The JSON body, with the contract's snake_case keys. */
  readonly body: Readonly<Record<string, unknown>>
}

/** What `createPluginLlmHandler` serves: the host's plugin runtime and how registrant tokens map to plugins. */
export interface PluginLlmHandlerOptions {
  /** Whose `ctx.llm` lanes and commands are served. */
  readonly runtime: PluginRuntime
  /** The plugin id (its source) a registrant token stands for, or undefined for an unknown token. */
  readonly pluginForToken: (token: string) => string | undefined
  /**
   * Deepest nesting of a request body (default 64): a deeper one is a 422 before anything walks it. A server that
   * parses the body counts it on the text before parsing too (the host does); this holds for any other server.
   */
  readonly maxBodyDepth?: number
}

export { REGISTRANT_TOKEN_HEADER }

/** The plugin-LLM routes of the host's HTTP API, to mount in any server. */
export interface PluginLlmHandler {
  /** Whether `method path` is one of its routes (so the server hands it over rather than answering 404). */
  readonly handles: (method: string, path: string) => boolean
  /** Answers one request; never throws (every failure is a `HandlerResponse` with `ok: false`). */
  readonly handle: (request: HandlerRequest) => Promise<HandlerResponse>
}

const SHARED_KEYS = ["provider", "model", "agent_id", "profile", "task", "temperature", "max_tokens", "timeout", "purpose"] as const
const COMPLETE_KEYS = [...SHARED_KEYS, "messages"]
const STRUCTURED_KEYS = [...SHARED_KEYS, "instructions", "input", "json_schema", "json_mode", "schema_name", "system_prompt", "repair"]

const STATUS: Readonly<Record<PluginLlmError["_tag"], number>> = {
  PluginLlmTrustError: 403,
  PluginLlmInputError: 422,
  PluginLlmSchemaError: 422,
  PluginLlmTimeoutError: 504,
  PluginLlmRateLimited: 429,
  PluginLlmProviderUnavailable: 502,
  PluginLlmCancelled: 499,
  PluginLlmBudgetExceeded: 429
}

const fail = (status: number, error: string, extra: Record<string, unknown> = {}): HandlerResponse => ({ status, body: { ok: false, error, ...extra } })

const snake = (key: string): string => key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)

/** camelCase keys to the contract's snake_case, one level of nesting deep where records nest (usage, hops, timeout). */
const snakeKeys = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(snakeKeys)
  if (typeof value !== "object" || value === null) return value
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [snake(k), snakeKeys(v)]))
}

const header = (request: HandlerRequest, name: string): string | undefined => {
  const value = request.headers[name]
  return typeof value === "string" ? value : Array.isArray(value) ? (value[0] as string | undefined) : undefined
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value)

/** Image blocks arrive as JSON: `{type: "image", data: "<base64>", mime_type?}` or `{type: "image", url}`. */
const inputBlocks = (input: unknown): unknown =>
  Array.isArray(input)
    ? input.map((block: unknown) => {
        if (!isRecord(block) || block["type"] !== "image" || !("mime_type" in block)) return block
        const { mime_type, ...rest } = block
        return { ...rest, mimeType: mime_type }
      })
    : input

const callOptions = (body: Record<string, unknown>) => ({
  ...(body["provider"] === undefined ? {} : { provider: body["provider"] as string }),
  ...(body["model"] === undefined ? {} : { model: body["model"] as string }),
  ...(body["agent_id"] === undefined ? {} : { agentId: body["agent_id"] as string }),
  ...(body["profile"] === undefined ? {} : { profile: body["profile"] as string }),
  ...(body["task"] === undefined ? {} : { task: body["task"] as string }),
  ...(body["temperature"] === undefined ? {} : { temperature: body["temperature"] as number }),
  ...(body["max_tokens"] === undefined ? {} : { maxTokens: body["max_tokens"] as number }),
  ...(body["timeout"] === undefined ? {} : { timeout: body["timeout"] as number }),
  ...(body["purpose"] === undefined ? {} : { purpose: body["purpose"] as string })
})

const resultBody = (result: CompleteResult | StructuredResult<unknown>): Record<string, unknown> => ({
  ok: true,
  text: result.text,
  provider: result.provider,
  model: result.model,
  requested_model: result.requestedModel,
  agent_id: result.agentId,
  usage: snakeKeys(result.usage satisfies PluginLlmUsage),
  audit: snakeKeys(result.audit satisfies AuditRecord),
  ...("contentType" in result ? { parsed: result.parsed, content_type: result.contentType, ...(result.issues === undefined ? {} : { issues: result.issues }) } : {})
})

const errorBody = (error: PluginLlmError): HandlerResponse => {
  const extra: Record<string, unknown> = { error_type: error._tag }
  if (error._tag === "PluginLlmTrustError") Object.assign(extra, { plugin_id: error.pluginId, override: error.override, config_key: error.configKey })
  if (error._tag === "PluginLlmBudgetExceeded") Object.assign(extra, { plugin_id: error.pluginId, limit: error.limit })
  if (error._tag === "PluginLlmInputError") extra["issues"] = [{ path: error.field, message: error.message }]
  if (error._tag === "PluginLlmTimeoutError") Object.assign(extra, { timeout_ms: error.timeoutMs, timeout_source: error.source })
  if (error._tag === "PluginLlmRateLimited" || error._tag === "PluginLlmProviderUnavailable") extra["hops"] = error.hops
  return fail(STATUS[error._tag], error.message, extra)
}

/**
 * The plugin-LLM part of the host's HTTP API, independent of any server: `POST /api/llm/complete`,
 * `POST /api/llm/complete-structured` (authenticated by the registrant token: the token's source is the plugin
 * id, so a remote plugin gets the same gate, audit and limits as an in-process one), `POST /api/commands/<name>`
 * and `GET /api/commands`. `handles` says whether a request is one of these; `handle` never throws.
 */
export const createPluginLlmHandler = (options: PluginLlmHandlerOptions): PluginLlmHandler => {
  const { runtime } = options
  const handles = (method: string, path: string): boolean =>
    (method === "POST" && (path === "/api/llm/complete" || path === "/api/llm/complete-structured" || path.startsWith("/api/commands/"))) ||
    (method === "GET" && path === "/api/commands")

  const maxBodyDepth = options.maxBodyDepth ?? DEFAULT_MAX_JSON_DEPTH
  const handle = async (request: HandlerRequest): Promise<HandlerResponse> => {
    const { method, path } = request
    if (measureValue(request.body, maxBodyDepth).depth > maxBodyDepth) {
      return fail(422, tooDeepMessage("the body", maxBodyDepth), { issues: [{ path: "", message: tooDeepMessage("the body", maxBodyDepth) }] })
    }
    if (method === "GET" && path === "/api/commands") {
      return { status: 200, body: { ok: true, commands: runtime.commands.list().map((c) => ({ name: c.name, plugin: c.pluginId, description: c.description, args_hint: c.argsHint })) } }
    }
    if (method === "POST" && path.startsWith("/api/commands/")) {
      let name: string
      try {
        name = decodeURIComponent(path.slice("/api/commands/".length))
      } catch {
        return fail(404, "unknown command")
      }
      const body = request.body
      if (body !== undefined && !isRecord(body)) return fail(422, "the body must be a JSON object {\"args\": <text>}", { issues: [{ path: "", message: "expected an object" }] })
      const args = body?.["args"] ?? ""
      if (typeof args !== "string") return fail(422, "args must be text", { issues: [{ path: "args", message: "expected a string" }] })
      const unknown = Object.keys(body ?? {}).filter((k) => k !== "args")
      if (unknown.length > 0) return fail(422, `unknown field ${unknown[0]}`, { issues: unknown.map((k) => ({ path: k, message: "unknown field" })) })
      const outcome = await runtime.commands.run(name, args, request.signal === undefined ? {} : { signal: request.signal })
      return outcome.ok ? { status: 200, body: { ok: true, output: outcome.output } } : fail(outcome.status, outcome.error)
    }
    if (!handles(method, path)) return fail(404, `no route ${method} ${path.slice(0, 100)}`)

    const token = header(request, REGISTRANT_TOKEN_HEADER)
    if (token === undefined || token === "") return fail(401, `present the plugin's registrant token in ${REGISTRANT_TOKEN_HEADER}`)
    const pluginId = options.pluginForToken(token)
    if (pluginId === undefined) return fail(401, "unknown registrant token")
    const body = request.body
    if (!isRecord(body)) return fail(422, "the body must be a JSON object", { issues: [{ path: "", message: "expected an object" }] })
    const structured = path === "/api/llm/complete-structured"
    const known: ReadonlyArray<string> = structured ? STRUCTURED_KEYS : COMPLETE_KEYS
    const unknown = Object.keys(body).filter((k) => !known.includes(k))
    if (unknown.length > 0) {
      return fail(422, `unknown field ${JSON.stringify(unknown[0]).slice(0, 80)}; expected: ${known.join(", ")}`, {
        issues: unknown.slice(0, 20).map((k) => ({ path: k.slice(0, 80), message: "unknown field" }))
      })
    }
    for (const flag of ["json_mode", "repair"]) {
      if (body[flag] !== undefined && typeof body[flag] !== "boolean") {
        return fail(422, `${flag} must be true or false`, { issues: [{ path: flag, message: "expected a boolean" }] })
      }
    }
    // Over HTTP: the plugin's json_schema is untrusted (its patterns on the linear-time engine, or refused).
    const llm = runtime.llm.forPlugin(pluginId, { remote: true })
    try {
      const signal = request.signal === undefined ? {} : { signal: request.signal }
      const result = structured
        ? await llm.completeStructured({
            ...callOptions(body),
            ...signal,
            instructions: body["instructions"] as string,
            input: inputBlocks(body["input"]) as never,
            ...(body["json_schema"] === undefined ? {} : { schema: body["json_schema"] as never }),
            ...(body["json_mode"] === undefined ? {} : { jsonMode: body["json_mode"] === true }),
            ...(body["schema_name"] === undefined ? {} : { schemaName: body["schema_name"] as string }),
            ...(body["system_prompt"] === undefined ? {} : { systemPrompt: body["system_prompt"] as string }),
            ...(body["repair"] === undefined ? {} : { repair: body["repair"] === true })
          })
        : await llm.complete({ ...callOptions(body), ...signal, messages: body["messages"] as never })
      return { status: 200, body: resultBody(result) }
    } catch (thrown) {
      return isPluginLlmError(thrown) ? errorBody(thrown) : fail(500, "internal error")
    }
  }

  return { handles, handle }
}

/** `/<name> <args>` typed in `llm-worker chat`: the command and its argument text, or undefined for a plain message. */
export const parseSlashCommand = (line: string): { readonly name: string; readonly args: string } | undefined => {
  const match = /^\/([a-z0-9][a-z0-9_-]{0,63})(?:\s+([\s\S]*))?$/.exec(line.trim())
  return match === null ? undefined : { name: match[1] as string, args: (match[2] ?? "").trim() }
}
