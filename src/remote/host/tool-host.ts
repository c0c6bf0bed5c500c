import { randomBytes } from "node:crypto"
import { readFileSync } from "node:fs"
import { dirname, resolve } from "node:path"
import type { Server } from "node:http"
import type { AddressInfo } from "node:net"
import { createAdaptorServer } from "@hono/node-server"
import type { LlmClient } from "../../llm/client.ts"
import type { LlmClientOptions } from "../../llm/llm-client.ts"
import { auditLine } from "../../plugin-llm/audit.ts"
import type { AuditSink } from "../../plugin-llm/audit.ts"
import { PluginLlmConfigError } from "../../plugin-llm/errors.ts"
import { createPluginRuntime, type LoadedPlugin, type PluginRuntime } from "../../plugin-llm/plugin-runtime.ts"
import { environmentSecrets } from "../../plugin-llm/credentials.ts"
import { SecretRedactor } from "../../redact/secrets.ts"
import type { ToolDefinition } from "../../tool/tool.ts"
import { type RequestDeadlines, boundConnections, deadlineServerOptions } from "../request-deadlines.ts"
import { DEFAULT_HOST_PORT } from "../wire.ts"
import { type HostConfig, type HostConfigInput, HostConfigError, type RequestLogLevel, type RoleConfig, decodeHostConfig, loadHostConfig } from "./config.ts"
import { createHttpApp } from "./http-app.ts"
import { REQUEST_LOG_PREFIX, RequestLog } from "./request-log.ts"
import { roleClient, roleClientOptions } from "./role-client.ts"
import { type BuiltinTool, ToolHostState, oneLine } from "./tool-host-state.ts"

type Env = Readonly<Record<string, string | undefined>>

/** How `startToolHost` finds its config, where it listens and what it builds each role's model client from. */
export interface ToolHostOptions {
  /** The config as an object (decoded with the same schema as the file), or already decoded. */
  readonly config?: HostConfigInput | HostConfig
  /** A config file to read (`llm-worker.yaml`); read only when `config` is not given. */
  readonly configPath?: string
  /** Whether a missing `configPath` is an error (default true when `configPath` is given). */
  readonly configRequired?: boolean
  /** Port; else the config's `server.port`, else MAIN_SERVER_PORT, else 48911. 0 picks a free port. */
  readonly port?: number
  /** Interface to bind; else the config's `server.host` (default 127.0.0.1). Callers are gated to loopback regardless. */
  readonly host?: string
  /** Where provider keys, base URLs, MAIN_SERVER_PORT and the access key are read (default `process.env`). */
  readonly env?: Env
  /** Builds a role's model client instead of the config + environment (embedding, tests). */
  readonly clientFor?: (role: string, config: RoleConfig) => LlmClient
  /** The host's own tools, in every role under the reserved `builtin` source (never changeable over HTTP). */
  readonly builtinTools?: ReadonlyArray<ToolDefinition>
  /**
   * Where operational lines go (roles that cannot chat, evictions, unexpected errors, plugin-LLM audit lines, the
   * request log); stderr by default. Every line is redacted of the host's credentials first.
   */
  readonly log?: (line: string) => void
  /** The request log's level; else the config's `server.request_log` (default `normal`). `llm-worker serve --verbose` / `--quiet` set it. */
  readonly requestLog?: RequestLogLevel
  /** Where `plugins.entries.<id>.module` paths are resolved: the config file's folder, else the working directory. */
  readonly pluginBaseDir?: string
  /** The plugin-LLM audit sink (default: one `llm-worker plugin-llm audit {…}` line per call through `log`). */
  readonly pluginAudit?: AuditSink
}

/** A running tool host (from `startToolHost`): where it listens, its roles, and `close()`. */
export interface ToolHost {
  /** `http://<host>:<port>` as bound. */
  readonly url: string
  /** The port bound (the free one picked when 0 was asked for). */
  readonly port: number
  /** New on every start; every response carries it. */
  readonly instanceId: string
  /** The roles' names, in config order (one `default` role when the config names none). */
  readonly roles: ReadonlyArray<string>
  /** The role chats use when they name none. */
  readonly defaultRole: string
  /** The decoded config, with the plugin-LLM sections (`plugins`, `auxiliary`, `llm`) as they were written. */
  readonly config: HostConfig
  /** The in-process plugins loaded from `plugins.entries.<id>.module`, in config order. */
  readonly plugins: ReadonlyArray<LoadedPlugin>
  /** The line `llm-worker serve` prints when ready. */
  readonly readyLine: string
  /** Stops accepting requests, cancels running turns and closes every connection. */
  close(): Promise<void>
}

const packageVersion = (): string => {
  try {
    const text = readFileSync(new URL("../../../package.json", import.meta.url), "utf8")
    const version = (JSON.parse(text) as { version?: unknown }).version
    return typeof version === "string" ? version : "0.0.0"
  } catch {
    return "0.0.0"
  }
}

const isDecoded = (config: HostConfigInput | HostConfig): config is HostConfig => typeof (config as HostConfig).defaultRole === "string" && typeof (config as HostConfig).server === "object"

const portFrom = (options: ToolHostOptions, config: HostConfig, env: Env): number => {
  if (options.port !== undefined) return options.port
  if (config.server.port !== undefined) return config.server.port
  const fromEnv = env["MAIN_SERVER_PORT"]?.trim()
  if (fromEnv !== undefined && fromEnv !== "") {
    if (!/^\d{1,5}$/.test(fromEnv) || Number(fromEnv) > 65535) throw new HostConfigError("MAIN_SERVER_PORT", [{ path: "", message: `not a port: ${JSON.stringify(fromEnv.slice(0, 40))}` }])
    return Number(fromEnv)
  }
  return DEFAULT_HOST_PORT
}

const hostDeadlines = (server: HostConfig["server"]): RequestDeadlines => ({
  headersMs: Math.round(server.headers_timeout_seconds * 1000),
  requestMs: Math.round(server.request_timeout_seconds * 1000),
  maxConnections: server.max_connections
})

const builtinOf = (definition: ToolDefinition): BuiltinTool => {
  const [meta] = definition()
  return { name: meta.name, description: meta.descriptionText, parameters: meta.schema, definition }
}

/**
 * A role without a usable provider still gets a lane: its calls fail as provider-unavailable (a `config` hop),
 * which is what its chat answers too (503), instead of the whole host refusing to start.
 */
const laneOptions = (config: HostConfig, role: string, env: Env): LlmClientOptions => {
  const roleConfig = config.roles[role] as RoleConfig
  const found = roleClientOptions(roleConfig, env)
  return found.ok ? found.options : { provider: roleConfig.provider ?? "unconfigured", model: roleConfig.model ?? "unconfigured", env }
}

/**
 * The plugin-LLM layer of the host: the operator's `plugins` / `auxiliary` / `llm` sections decoded, the roles as
 * agents (the default role is the active one), and every enabled in-process plugin imported and registered, its
 * tools added to every role under its id. Any problem is a `HostConfigError`: the host does not start half-configured.
 */
const startPlugins = async (config: HostConfig, env: Env, state: ToolHostState, baseDir: string, source: string, audit: AuditSink, redactor: SecretRedactor): Promise<PluginRuntime> => {
  const agents = Object.fromEntries(Object.keys(config.roles).filter((name) => name !== config.defaultRole).map((name) => [name, laneOptions(config, name, env)]))
  let runtime: PluginRuntime
  try {
    runtime = createPluginRuntime({
      active: laneOptions(config, config.defaultRole, env),
      activeAgent: config.defaultRole,
      agents,
      config: { plugins: config.plugins, auxiliary: config.auxiliary, llm: config.llm },
      baseDir,
      env,
      audit,
      redactor,
      registerTool: (pluginId, definition) => state.addPluginTool(pluginId, definition)
    })
  } catch (thrown) {
    if (thrown instanceof PluginLlmConfigError) throw new HostConfigError(source, thrown.issues)
    throw thrown
  }
  // Every module entry's id is the host's before any plugin loads (a later one's id cannot be taken meanwhile).
  for (const [id, entry] of Object.entries(runtime.llm.config.plugins)) if (entry.module !== undefined) state.reservePlugin(id)
  try {
    await runtime.loadFromConfig()
  } catch (thrown) {
    const message = thrown instanceof Error ? (thrown.message.split("\n")[0] ?? "") : String(thrown)
    const field = (thrown as { field?: unknown } | null)?.field
    throw new HostConfigError(source, [{ path: typeof field === "string" && field.startsWith("plugins") ? field : "plugins", message: message.slice(0, 500) }])
  }
  return runtime
}

/**
 * Starts the tool host: one Worker per role, the HTTP API on `host:port`, plugins' tools dispatched to their
 * callbacks. Resolves once listening; rejects with `HostConfigError` for a bad config (or an access key shorter
 * than 16 characters), or the listen error. This is what `llm-worker serve` runs.
 *
 * @example
 * ```ts
 * import { startToolHost } from "llm-worker/remote"
 *
 * const host = await startToolHost({
 *   port: 0, // a free port
 *   config: { roles: { helper: { provider: "ollama", model: "qwen3:8b", system_prompt: "Be brief." } } }
 * })
 * console.log(host.readyLine) // llm-worker host listening on http://127.0.0.1:<port> (instance …)
 * // plugins register their tools at host.url; POST /api/chat runs a turn of a role
 * await host.close()
 * ```
 */
export const startToolHost = async (options: ToolHostOptions = {}): Promise<ToolHost> => {
  const env = options.env ?? process.env
  const config =
    options.config !== undefined
      ? isDecoded(options.config)
        ? options.config
        : decodeHostConfig(options.config)
      : options.configPath !== undefined
        ? await loadHostConfig(options.configPath, options.configRequired ?? true)
        : decodeHostConfig({})
  const accessKeyEnv = config.server.access_key_env
  const accessKey = accessKeyEnv === undefined ? undefined : env[accessKeyEnv]
  // Every credential the host is configured with; the plugin lane adds the keys of the routes it builds. The log
  // and every HTTP answer pass through it (http-app.ts), whatever a provider or a plugin put in their text.
  const redactor = new SecretRedactor([accessKey, ...environmentSecrets(env, accessKeyEnv === undefined ? [] : [accessKeyEnv])])
  const rawLog = options.log ?? ((line: string) => void process.stderr.write(`${line}\n`))
  const log = (line: string): void => rawLog(redactor.redact(line))
  if (accessKeyEnv !== undefined && (accessKey === undefined || accessKey.length < 16)) {
    throw new HostConfigError("server.access_key_env", [{ path: "server.access_key_env", message: `${accessKeyEnv} must be set to a key of at least 16 characters` }])
  }
  const operatorTokenEnv = config.server.operator_token_env
  const operatorToken = operatorTokenEnv === undefined ? undefined : env[operatorTokenEnv]
  if (operatorTokenEnv !== undefined && (operatorToken === undefined || operatorToken.length < 16)) {
    throw new HostConfigError("server.operator_token_env", [{ path: "server.operator_token_env", message: `${operatorTokenEnv} must be set to a token of at least 16 characters` }])
  }
  redactor.add(operatorToken)
  const instanceId = randomBytes(12).toString("hex")
  const clientFor = (name: string) => {
    const roleConfig = config.roles[name] as RoleConfig
    if (options.clientFor === undefined) return roleClient(roleConfig, env)
    try {
      return { ok: true as const, client: options.clientFor(name, roleConfig) }
    } catch (thrown) {
      return { ok: false as const, problem: thrown instanceof Error ? thrown.message : String(thrown) }
    }
  }
  const requestLog = new RequestLog(options.requestLog ?? config.server.request_log, log)
  const state = new ToolHostState(config, clientFor, instanceId, log, (options.builtinTools ?? []).map(builtinOf), requestLog)
  // Said once, before the first request: a host whose role cannot chat is legitimate (plugins may only register
  // tools), but its operator should not learn it from a 503 on the first chat.
  for (const role of state.roles.values()) {
    if (!role.client.ok) log(`${REQUEST_LOG_PREFIX}role "${role.name}" cannot chat: ${oneLine(role.client.problem)} (tools can still be registered; POST /api/chat answers 503 until it is configured)`)
  }
  const source = options.configPath ?? "config"
  const baseDir = options.pluginBaseDir ?? (options.configPath === undefined ? process.cwd() : dirname(resolve(options.configPath)))
  const runtime = await startPlugins(config, env, state, baseDir, source, options.pluginAudit ?? ((record) => log(auditLine(record))), redactor)
  const host = options.host ?? config.server.host
  const app = createHttpApp({ state, maxBodyBytes: config.server.max_body_bytes, maxJsonDepth: config.server.max_json_depth, accessKey, operatorToken, version: packageVersion(), log, plugins: runtime, redactor, requestLog }, host)
  // Slow or idle clients cannot hold sockets for long, nor many of them: the headers and the whole request must
  // arrive within their deadlines (the answer may take as long as the turn does).
  const deadlines = hostDeadlines(config.server)
  const server = createAdaptorServer({ fetch: app.fetch, serverOptions: deadlineServerOptions(deadlines) }) as Server
  boundConnections(server, deadlines)
  server.keepAliveTimeout = 5_000
  const port = portFrom(options, config, env)
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject)
    server.listen(port, host, () => {
      server.off("error", reject)
      resolve()
    })
  })
  const bound = (server.address() as AddressInfo).port
  const hostLabel = host.includes(":") ? `[${host}]` : host
  const url = `http://${hostLabel}:${bound}`
  let closing: Promise<void> | undefined
  return {
    url,
    port: bound,
    instanceId,
    roles: [...state.roles.keys()],
    defaultRole: state.defaultRole,
    config,
    plugins: runtime.plugins,
    readyLine: `llm-worker host listening on ${url} (instance ${instanceId})`,
    close() {
      closing ??= new Promise<void>((resolve) => {
        for (const role of state.roles.values()) role.cancel()
        server.close(() => resolve())
        server.closeAllConnections()
      })
      return closing
    }
  }
}
