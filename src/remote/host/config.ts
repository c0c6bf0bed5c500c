import { readFile, stat } from "node:fs/promises"
import { parseDocument } from "yaml"
import { DEFAULT_MAX_DOCUMENT_DEPTH, DEFAULT_MAX_JSON_DEPTH, tooDeepMessage, valueDepth } from "../../schema/json-depth.ts"
import { z } from "zod"

/**
 * `llm-worker.yaml`, decoded with a schema: every object is closed (an unknown key is an error naming it, so a
 * misspelt `sytem_prompt` cannot silently do nothing), every value has one type (no "false" read as true), and
 * every limit of the host is a key here with its default. The sections `plugins`, `auxiliary` and `llm` belong
 * to the plugin-LLM layer: accepted and handed over as they are, not validated here.
 */

/** Name of the one role a host has when the config names none. */
export const DEFAULT_ROLE_NAME = "default"
/** Largest config file read, in bytes. */
export const MAX_CONFIG_BYTES = 1024 * 1024

/** Role names are what the seed's clients send (`"小八"`): any printable text, 1-64 characters. */
const roleName = z
  .string()
  .min(1, "a role name must not be empty")
  .max(64, "a role name is at most 64 characters")
  .regex(/^[^\p{C}]+$/u, "a role name must not contain control characters")

/** One role of the host (`roles.<name>` in `llm-worker.yaml`), decoded: a Worker with its own prompt and model. */
export interface RoleConfig {
  /** The role's system prompt (at most 256 KiB); none by default. */
  readonly system_prompt?: string
  /** A built-in provider name (`openai`, `anthropic`, `gemini`, `ollama`, …); else LLM_WORKER_PROVIDER or the first API key set. */
  readonly provider?: string
  /** The model; else LLM_WORKER_MODEL. */
  readonly model?: string
  /** Overrides the provider's base URL (and its environment variable, e.g. OPENAI_BASE_URL). */
  readonly base_url?: string
  /**
   * Keep the role's Worker cache-locked between turns (default false): tool changes then apply at the next turn
   * boundary (one prompt-cache miss), reported as pending until then. See docs/decisions/0047.
   */
  readonly cache_lock: boolean
  /** Model requests per chat turn, 1-256 (default 16). */
  readonly max_turns: number
}

/** The host's `server` section, decoded: where it listens and the bounds of every resource it holds. */
export interface ServerConfig {
  /** Interface to bind (default `127.0.0.1`). Callers are still gated to loopback peers, whatever is bound. */
  readonly host: string
  /** Port, 0-65535; when absent `--port`, then MAIN_SERVER_PORT, then 48911. 0 picks a free port. */
  readonly port?: number
  /** Name of the environment variable holding the access key every request must present (none: no key). */
  readonly access_key_env?: string
  /**
   * Name of the environment variable holding the operator token (at least 16 characters) that
   * `POST /api/commands/<name>` requires in `x-llm-worker-operator-token`. None: commands cannot be run over HTTP.
   */
  readonly operator_token_env?: string
  /** Largest request body, in bytes: 1 KiB-64 MiB, default 1 MiB. */
  readonly max_body_bytes: number
  /** Largest callback response body read, in bytes (1 KiB-64 MiB, default 1 MiB); a larger body is cut off and reported as an error result. */
  readonly max_callback_response_bytes: number
  /** Deepest nesting of a request body's JSON (1-1024, default 64); deeper is a 422, counted on the text before parsing. */
  readonly max_json_depth: number
  /** Deepest nesting of a callback answer's JSON (1-1024, default 256); deeper is an error result, counted before parsing. */
  readonly max_callback_response_depth: number
  /** Consecutive connection failures after which a callback's tool is evicted: 1-10000, default 3. */
  readonly evict_after_connection_failures: number
  /** Tools one role may hold (remote and built-in): 1-4096, default 256. */
  readonly max_tools_per_role: number
  /** Distinct sources (owners) the host keeps at once: 1-65536, default 1024. */
  readonly max_sources: number
  /** Chat turns waiting for a busy role before further ones get 429: 0-1024, default 8. */
  readonly max_queued_chats: number
  /** Seconds from a request's first byte (or its connection's start) to the end of its headers: 0.1-600, default 10; past it 408 and the connection is closed. */
  readonly headers_timeout_seconds: number
  /** Seconds from a request's first byte to the end of its body: 0.1-3600 and at least `headers_timeout_seconds`, default 30; past it 408 and the connection is closed. The answer may take as long as the turn. */
  readonly request_timeout_seconds: number
  /** Connections open at once: 1-65536, default 256; past it a new connection is closed as soon as it is accepted. */
  readonly max_connections: number
  /**
   * The request log on the host's log (stderr for `llm-worker serve`): `normal` (default) one line per request
   * and per tool call, `verbose` adds health checks, roles, sources and error texts, `quiet` none. Never a body
   * or a credential. `llm-worker serve --verbose` / `--quiet` override it.
   */
  readonly request_log: RequestLogLevel
}

/** How much the host logs per request and per tool call (see `ServerConfig.request_log`). */
export type RequestLogLevel = "quiet" | "normal" | "verbose"

/** The config as written (what `startToolHost({ config })` accepts): every key optional where it has a default. */
export interface HostConfigInput {
  /** Listening address and resource bounds; each key defaults as documented on `ServerConfig`. */
  readonly server?: Partial<ServerConfig>
  /** The roles by name (1-64 printable characters); none: one role named `default`. */
  readonly roles?: Readonly<Record<string, Partial<RoleConfig>>>
  /** The role `POST /api/chat` uses when `role` is null or absent; the first role when not set. */
  readonly default_role?: string
  /** Plugin-LLM section (`llm-worker/plugin-llm`), handed over undecoded. */
  readonly plugins?: unknown
  /** Plugin-LLM section (`llm-worker/plugin-llm`), handed over undecoded. */
  readonly auxiliary?: unknown
  /** Plugin-LLM section (`llm-worker/plugin-llm`), handed over undecoded. */
  readonly llm?: unknown
}

// Each schema `satisfies` the interface it decodes to, so the two cannot drift apart silently.
const RoleConfigSchema = z.strictObject({
  /** The role's system prompt. */
  system_prompt: z.string().max(256 * 1024).optional(),
  /** A built-in provider name (`openai`, `anthropic`, `gemini`, `ollama`, …); else LLM_WORKER_PROVIDER or the first API key set. */
  provider: z.string().min(1).optional(),
  /** The model; else LLM_WORKER_MODEL. */
  model: z.string().min(1).optional(),
  /** Overrides the provider's base URL (and its environment variable, e.g. OPENAI_BASE_URL). */
  base_url: z.string().min(1).optional(),
  /**
   * Keep the role's Worker cache-locked between turns: tool changes then apply at the next turn boundary (one
   * prompt-cache miss), reported as pending until then. See docs/decisions/0047.
   */
  cache_lock: z.boolean().default(false),
  /** Model requests per chat turn. */
  max_turns: z.int().min(1).max(256).default(16)
}) satisfies z.ZodType<RoleConfig, Partial<RoleConfig>>

const ServerConfigSchema = z.strictObject({
  /** Interface to bind. Callers are still gated to loopback peers, whatever is bound. */
  host: z.string().min(1).default("127.0.0.1"),
  /** Port; `--port`, then MAIN_SERVER_PORT, then 48911 when absent. 0 picks a free port. */
  port: z.int().min(0).max(65535).optional(),
  /** Name of the environment variable holding the access key every request must present (none: no key). */
  access_key_env: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "an environment variable name").optional(),
  /** Name of the environment variable holding the operator token that running a command over HTTP requires (none: commands are off). */
  operator_token_env: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "an environment variable name").optional(),
  /** Largest request body, in bytes. */
  max_body_bytes: z.int().min(1024).max(64 * 1024 * 1024).default(1024 * 1024),
  /** Largest callback response body read, in bytes; a larger body is cut off and reported as an error result. */
  max_callback_response_bytes: z.int().min(1024).max(64 * 1024 * 1024).default(1024 * 1024),
  /** Deepest nesting of a request body's JSON; deeper is a 422 before parsing. */
  max_json_depth: z.int().min(1).max(1024).default(DEFAULT_MAX_JSON_DEPTH),
  /** Deepest nesting of a callback answer's JSON; deeper is an error result before parsing. */
  max_callback_response_depth: z.int().min(1).max(1024).default(DEFAULT_MAX_DOCUMENT_DEPTH),
  /** Consecutive connection failures after which a callback's tool is evicted. */
  evict_after_connection_failures: z.int().min(1).max(10_000).default(3),
  /** Tools one role may hold (remote and built-in). */
  max_tools_per_role: z.int().min(1).max(4096).default(256),
  /** Distinct sources (owners) the host keeps at once. */
  max_sources: z.int().min(1).max(65_536).default(1024),
  /** Chat turns waiting for a busy role before further ones get 429. */
  max_queued_chats: z.int().min(0).max(1024).default(8),
  /** Seconds from a request's first byte (or its connection's start) to the end of its headers. */
  headers_timeout_seconds: z.number().min(0.1).max(600).default(10),
  /** Seconds from a request's first byte to the end of its body (the answer is not bounded by it). */
  request_timeout_seconds: z.number().min(0.1).max(3600).default(30),
  /** Connections open at once; past it a new connection is closed as soon as it is accepted. */
  max_connections: z.int().min(1).max(65_536).default(256),
  /** The request log: one line per request and tool call (`normal`), more detail (`verbose`) or none (`quiet`). */
  request_log: z.enum(["quiet", "normal", "verbose"]).default("normal")
})
  .refine((server) => server.headers_timeout_seconds <= server.request_timeout_seconds, {
    path: ["headers_timeout_seconds"],
    message: "must not be longer than request_timeout_seconds (the headers are part of the request)"
  }) satisfies z.ZodType<ServerConfig, Partial<ServerConfig>>

const HostConfigSchema = z
  .strictObject({
    server: ServerConfigSchema.default(ServerConfigSchema.parse({})),
    roles: z.record(roleName, RoleConfigSchema).optional(),
    /** The role `POST /api/chat` uses when `role` is null or absent; the first role when not set. */
    default_role: roleName.optional(),
    plugins: z.unknown().optional(),
    auxiliary: z.unknown().optional(),
    llm: z.unknown().optional()
  })
  .superRefine((config, context) => {
    const names = Object.keys(config.roles ?? {})
    if (config.default_role !== undefined && !names.includes(config.default_role)) {
      context.addIssue({
        code: "custom",
        path: ["default_role"],
        message: names.length === 0 ? `default_role "${config.default_role}" names a role, but no roles are configured` : `default_role "${config.default_role}" is not one of the roles: ${names.join(", ")}`
      })
    }
  }) satisfies z.ZodType<unknown, HostConfigInput>

/** The decoded config: defaults filled in, at least one role. */
export interface HostConfig {
  readonly server: ServerConfig
  readonly roles: Readonly<Record<string, RoleConfig>>
  /** The role chats use when they name none: `default_role`, else the first role. */
  readonly defaultRole: string
  /** Sections owned by the plugin-LLM layer, handed over undecoded. */
  readonly plugins: unknown
  /** Plugin-LLM section (auxiliary tasks), handed over undecoded. */
  readonly auxiliary: unknown
  /** Plugin-LLM section (providers, routes, credentials), handed over undecoded. */
  readonly llm: unknown
}

/** A config that cannot be used; `issues` name each field (`roles.小八.model`) and what is wrong with it. */
export class HostConfigError extends Error {
  override readonly name = "HostConfigError"
  readonly issues: ReadonlyArray<{ readonly path: string; readonly message: string }>

  constructor(source: string, issues: ReadonlyArray<{ readonly path: string; readonly message: string }>) {
    super(`${source}: ${issues.map((issue) => (issue.path === "" ? issue.message : `${issue.path}: ${issue.message}`)).join("; ")}`)
    this.issues = issues
  }
}

/** Dotted path of a zod issue (`roles.小八.model`). */
export const issuePath = (path: ReadonlyArray<PropertyKey>): string => path.map((key) => String(key)).join(".")

/** zod's issues in one readable line each; an unknown key names itself in the path. */
export const readableIssues = (error: z.ZodError): ReadonlyArray<{ readonly path: string; readonly message: string }> =>
  error.issues.flatMap((issue) =>
    issue.code === "unrecognized_keys"
      ? issue.keys.map((key) => ({ path: issuePath([...issue.path, key]), message: "unknown key" }))
      : [{ path: issuePath(issue.path), message: issue.message }]
  )

/** Decodes an already-parsed config value (from YAML, JSON or code). */
export const decodeHostConfig = (value: unknown, source = "config"): HostConfig => {
  // Before any decoder walks it: a config is a handful of levels deep, whatever it was read from.
  if (valueDepth(value, DEFAULT_MAX_DOCUMENT_DEPTH) > DEFAULT_MAX_DOCUMENT_DEPTH) {
    throw new HostConfigError(source, [{ path: "", message: tooDeepMessage("the config", DEFAULT_MAX_DOCUMENT_DEPTH) }])
  }
  const parsed = HostConfigSchema.safeParse(value ?? {})
  if (!parsed.success) throw new HostConfigError(source, readableIssues(parsed.error))
  const config = parsed.data
  const roles: Record<string, RoleConfig> =
    config.roles === undefined || Object.keys(config.roles).length === 0
      ? { [DEFAULT_ROLE_NAME]: RoleConfigSchema.parse({}) }
      : { ...config.roles }
  return {
    server: config.server,
    roles,
    defaultRole: config.default_role ?? (Object.keys(roles)[0] as string),
    plugins: config.plugins,
    auxiliary: config.auxiliary,
    llm: config.llm
  }
}

/** Decodes YAML text: syntax errors name their line and column; anchors and aliases are bounded. */
export const parseHostConfig = (text: string, source = "llm-worker.yaml"): HostConfig => {
  if (Buffer.byteLength(text, "utf8") > MAX_CONFIG_BYTES) throw new HostConfigError(source, [{ path: "", message: `larger than ${MAX_CONFIG_BYTES} bytes` }])
  const document = parseDocument(text, { uniqueKeys: true, prettyErrors: true })
  if (document.errors.length > 0) {
    throw new HostConfigError(
      source,
      document.errors.slice(0, 5).map((error) => {
        const at = error.linePos?.[0]
        // The library's message repeats the position and quotes the source after it: the first clause is enough.
        // The parser stops where its own recursion runs out and says so in the engine's words; say what it means.
        const message =
          error.code === "RESOURCE_EXHAUSTION"
            ? tooDeepMessage("the config", DEFAULT_MAX_DOCUMENT_DEPTH)
            : (error.message.split("\n")[0] ?? "").replace(/ at line \d+, column \d+:?$/, "")
        return { path: "", message: `${at === undefined ? "" : `line ${at.line}, column ${at.col}: `}${message}` }
      })
    )
  }
  let value: unknown
  try {
    value = document.toJS({ maxAliasCount: 100 })
  } catch (thrown) {
    throw new HostConfigError(source, [{ path: "", message: thrown instanceof Error ? thrown.message : String(thrown) }])
  }
  return decodeHostConfig(value, source)
}

/**
 * Reads and decodes a config file. A missing file is an error only when it was named explicitly (`required`);
 * the default `llm-worker.yaml` may be absent, and then the host has one default role.
 */
export const loadHostConfig = async (path: string, required: boolean): Promise<HostConfig> => {
  const found = await stat(path).catch(() => undefined)
  if (found === undefined) {
    if (required) throw new HostConfigError(path, [{ path: "", message: "no such file" }])
    return decodeHostConfig({}, path)
  }
  if (found.size > MAX_CONFIG_BYTES) throw new HostConfigError(path, [{ path: "", message: `larger than ${MAX_CONFIG_BYTES} bytes` }])
  return parseHostConfig(await readFile(path, "utf8"), path)
}
