import { randomBytes } from "node:crypto"
import type { PluginLlm } from "../../plugin-llm/plugin-llm.ts"
import { createRemotePluginLlm } from "../../plugin-llm/remote-client.ts"
import { DEFAULT_MAX_JSON_DEPTH } from "../../schema/json-depth.ts"
import { DEFAULT_SIGNATURE_TOLERANCE_SECONDS } from "../signing.ts"
import { BUILTIN_SOURCE, DEFAULT_HOST_PORT, REGISTRANT_TOKEN_PATTERN } from "../wire.ts"
import { makeBackoff, type Backoff, type RetryOptions } from "./backoff.ts"
import { CallbackServer, type CallbackRejection, type ServedTool } from "./callback-server.ts"
import { toolsOf } from "./decorator.ts"
import { HostClient, type HostAnswer } from "./host-client.ts"
import { PluginConfigError, PluginStopped, RegistrationRefused } from "./plugin-error.ts"
import { isRemoteTool, type RemoteTool } from "./remote-tool.ts"
import { stopOnSignals, type ShutdownSignal } from "./shutdown-signals.ts"
import { ToolSecrets } from "./tool-secrets.ts"

/** Where callbacks are served. Loopback only: the host refuses any other callback address anyway. */
export interface CallbackOptions {
  /** `127.0.0.1` (default), `::1` or `localhost`. */
  readonly hostname?: "127.0.0.1" | "::1" | "localhost"
  /** Default 0: a free port. */
  readonly port?: number
  /** Largest callback body accepted; larger ones get 413. Default 4 MiB. */
  readonly maxBodyBytes?: number
  /** Deadline for a callback's headers (at most 10 s of it) and whole body to arrive; past it 408 and the connection is closed. Default 30,000 ms. */
  readonly bodyTimeoutMs?: number
  /** Connections to the callback server open at once; past it a new one is closed as soon as it is accepted. Default 128 (the host opens at most 64). */
  readonly maxConnections?: number
  /** Deepest argument nesting accepted (counted on the text before parsing). Default 64. */
  readonly maxArgumentDepth?: number
}

/** How callbacks' signatures (HMAC-SHA256 with the secret the host issued at registration) are checked. */
export interface SignatureOptions {
  /** Refuse callbacks without a valid signature (401). Default true; turn off only for a host that cannot sign. */
  readonly verify?: boolean
  /** Largest clock difference accepted, and how long a replaced secret stays valid. Default 300 s. */
  readonly toleranceSeconds?: number
  /** Delivery ids remembered against replays; when full, the window narrows (see docs/security.md). Default 200,000. */
  readonly maxRemembered?: number
}

/** When and how gracefully the plugin stops (unregistering its tools) on its own. */
export interface ShutdownOptions {
  /** Signals that stop the plugin (then re-raised when nothing else handles them). Default both; `false`: none. */
  readonly signals?: ReadonlyArray<ShutdownSignal> | false
  /** How long `stop()` spends unregistering and finishing running calls. Default 2,000 ms. */
  readonly deadlineMs?: number
}

/** What `startPlugin` serves, which host it registers with, and the bounds of both sides. */
export interface PluginOptions {
  /** The source tag the tools are registered under and cleared by at shutdown; owned through its registrant token. */
  readonly source: string
  /**
   * The registrant token that claims `source` at the plugin's first registration and is presented on every request
   * after it (32-256 characters of base64url). Default: 32 random bytes, new in each process. Give a stable one (kept
   * secret, e.g. from a file only the plugin can read) when a restarted plugin must win its source back from a
   * process of its own that died without stopping; also the key to `ctx.llm` over HTTP (`createRemotePluginLlm`).
   */
  readonly registrantToken?: string
  /**
   * Tools from `remoteTool(...)`, and objects (or classes, for static methods) with `@llmTool` methods. May be
   * empty: a plugin that only calls `plugin.llm` then claims its source with `POST /api/sources/claim` instead.
   */
  readonly tools: ReadonlyArray<RemoteTool | object>
  /** The host's base URL. Default `http://127.0.0.1:$MAIN_SERVER_PORT` (48911). */
  readonly host?: string | URL
  /** Sent as `x-llm-worker-access-key` when the host requires one. */
  readonly accessKey?: string
  /** Where the callback server listens and what it accepts (loopback, a free port, 4 MiB bodies by default). */
  readonly callback?: CallbackOptions
  /** Signature checking of callbacks (on by default, 300 s tolerance). */
  readonly signatures?: SignatureOptions
  /** Back-off of registration retries while the host is down or starting (100 ms doubling to 5 s by default). */
  readonly retry?: RetryOptions
  /** How often the host's health (and instance id) is checked. Default 1,000 ms. */
  readonly healthIntervalMs?: number
  /** Deadline of each request to the host. Default 5,000 ms. */
  readonly requestTimeoutMs?: number
  /** Signals handled and the deadline of `stop()` (SIGINT and SIGTERM, 2,000 ms by default). */
  readonly shutdown?: ShutdownOptions
  /** Everything worth knowing that is not an error of the caller: registrations, retries, restarts, refusals. */
  readonly onEvent?: (event: PluginEvent) => void
}

/**
 * What `onEvent` is told, by `type`: a tool `registered` (with the roles that took it now, later or refused it),
 * a `registration_failed` attempt (with the next retry's delay unless final), the host `host_unreachable` or
 * `host_restarted` (a new instance id: every tool is registered again), a `callback_rejected` (bad signature,
 * size, arguments; `status` is what the host was answered), and tools `unregistered` at removal or shutdown.
 */
export type PluginEvent =
  | {
      readonly type: "registered"
      readonly tool: string
      readonly instanceId: string | undefined
      readonly affectedRoles: ReadonlyArray<string>
      readonly pendingRoles: ReadonlyArray<string>
      readonly failedRoles: ReadonlyArray<{ readonly role: string; readonly error: string }>
    }
  | {
      readonly type: "registration_failed"
      readonly tool: string
      readonly attempt: number
      readonly status: number
      readonly error: string
      /** When the next attempt is made; absent when the refusal is final. */
      readonly retryInMs?: number
    }
  | { readonly type: "host_unreachable"; readonly error: string }
  | { readonly type: "host_restarted"; readonly previous: string; readonly current: string }
  | { readonly type: "callback_rejected"; readonly tool: string | undefined; readonly status: number; readonly reason: string }
  | { readonly type: "unregistered"; readonly tools: ReadonlyArray<string>; readonly ok: boolean; readonly error?: string }
  /** A plugin without tools claimed its source (at start, and again after a host restart). */
  | { readonly type: "claimed"; readonly instanceId: string | undefined }
  /** A plugin without tools was refused its source's claim (retried unless `retryInMs` is absent). */
  | { readonly type: "claim_failed"; readonly attempt: number; readonly status: number; readonly error: string; readonly retryInMs?: number }

/**
 * Where one tool's registration stands: being sent (or due again after a host restart), `registered`,
 * `refused` by the host for good (a 4xx that retrying cannot fix), or `gave_up` after `retry.maxAttempts`.
 */
export type ToolState = "registering" | "registered" | "refused" | "gave_up"

/** One tool's registration, as `plugin.status()` reports it. */
export interface ToolStatus {
  /** The tool's name. */
  readonly name: string
  /** Where its registration stands. */
  readonly state: ToolState
  /** The host instance the tool is registered with. */
  readonly instanceId: string | undefined
  /** The roles that took the tool at the last registration. */
  readonly affectedRoles: ReadonlyArray<string>
  /** Roles where it applies at their next turn boundary (busy or cache-locked). */
  readonly pendingRoles: ReadonlyArray<string>
  /** Why the last attempt failed; undefined after a success. */
  readonly lastError: string | undefined
}

/** A running plugin. */
export interface Plugin {
  /** The source tag its tools are registered under (`PluginOptions.source`). */
  readonly source: string
  /** `http://127.0.0.1:<port>`; each tool's callback URL is `<origin>/tools/<name>`. */
  readonly callbackOrigin: string
  /** The host instance last seen, if any. */
  readonly instanceId: string | undefined
  /**
   * Resolves once every tool has been registered (a plugin without tools: once its source is claimed); rejects
   * with `RegistrationRefused` or `PluginStopped`.
   */
  readonly ready: Promise<void>
  /**
   * The token presented to the host on every request (`PluginOptions.registrantToken`, or the one generated for
   * this process). It is the plugin's credential for `ctx.llm` over HTTP: keep it secret.
   */
  readonly registrantToken: string
  /**
   * `ctx.llm` for this plugin: `createRemotePluginLlm` bound to the host, the access key and `registrantToken`.
   * The host answers once the source is claimed (after `ready`), under the plugin id `source`.
   */
  readonly llm: PluginLlm
  /** Each served tool's registration as it stands now (a snapshot). */
  status(): ReadonlyArray<ToolStatus>
  /** Serves and registers one more tool (the seed's imperative `register_llm_tool`). */
  addTool(tool: RemoteTool): void
  /** Stops serving a tool and unregisters it, best-effort. */
  removeTool(name: string): Promise<void>
  /** Unregisters (clears the source), lets running calls finish, closes the server. Idempotent. */
  stop(options?: { readonly deadlineMs?: number }): Promise<void>
}

interface Entry extends ServedTool {
  state: ToolState
  instanceId: string | undefined
  affectedRoles: ReadonlyArray<string>
  pendingRoles: ReadonlyArray<string>
  lastError: string | undefined
  lastStatus: number
}

const nowSeconds = (): number => Math.floor(Date.now() / 1000)

const strings = (value: unknown): ReadonlyArray<string> => (Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : [])

const failedRoles = (value: unknown): ReadonlyArray<{ role: string; error: string }> =>
  Array.isArray(value)
    ? value.flatMap((v: unknown) => {
        if (typeof v !== "object" || v === null) return []
        const { role, error } = v as { role?: unknown; error?: unknown }
        return [{ role: String(role), error: typeof error === "string" ? error.slice(0, 500) : "refused" }]
      })
    : []

/** Answers worth retrying: no answer, or a host that is starting, overloaded or briefly in someone else's hands. */
const transient = (answer: HostAnswer): boolean =>
  answer.status === 0 || answer.status === 408 || answer.status === 409 || answer.status === 425 || answer.status === 429 ||
  answer.status >= 500 || (answer.status === 200 && answer.body?.["ok"] !== true)

const abortableSleep = (ms: number, signal: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    if (signal.aborted) return resolve()
    const timer = setTimeout(done, ms)
    function done() {
      clearTimeout(timer)
      signal.removeEventListener("abort", done)
      resolve()
    }
    signal.addEventListener("abort", done, { once: true })
  })

const positiveInteger = (value: number | undefined, fallback: number, field: string, min = 1): number => {
  const v = value ?? fallback
  if (!Number.isInteger(v) || v < min) throw new PluginConfigError({ field, message: `${field} must be an integer >= ${min}, got ${String(v)}` })
  return v
}

const hostUrl = (given: string | URL | undefined): URL => {
  const text = given === undefined ? `http://127.0.0.1:${process.env["MAIN_SERVER_PORT"] ?? DEFAULT_HOST_PORT}` : String(given)
  let url: URL
  try {
    url = new URL(text)
  } catch {
    throw new PluginConfigError({ field: "host", message: `host is not a URL: ${JSON.stringify(text.slice(0, 200))}` })
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new PluginConfigError({ field: "host", message: `host must be http or https, got ${url.protocol}` })
  if (url.username !== "" || url.password !== "") throw new PluginConfigError({ field: "host", message: "host must not carry credentials (use accessKey)" })
  return url
}

/** Tools from the mixed list `startPlugin` takes, checked for duplicate names. */
const collectTools = (given: ReadonlyArray<RemoteTool | object>): Array<RemoteTool> => {
  if (!Array.isArray(given)) throw new PluginConfigError({ field: "tools", message: "tools must be an array" })
  const tools: Array<RemoteTool> = []
  for (const item of given as ReadonlyArray<unknown>) {
    if (isRemoteTool(item)) tools.push(item)
    else if ((typeof item === "object" && item !== null) || typeof item === "function") {
      const found = toolsOf(item as object)
      if (found.length === 0) throw new PluginConfigError({ field: "tools", message: "an object in tools has no @llmTool methods (was it constructed?)" })
      tools.push(...found)
    } else throw new PluginConfigError({ field: "tools", message: `tools must hold remote tools or objects, got ${item === null ? "null" : typeof item}` })
  }
  const names = new Set<string>()
  for (const tool of tools) {
    if (names.has(tool.name)) throw new PluginConfigError({ field: "tools", message: `two tools are named "${tool.name}"` })
    names.add(tool.name)
  }
  return tools
}

/**
 * Starts a plugin: serves its tools' callbacks on a loopback port and registers them with the host — retrying
 * until the host is up, and again by itself whenever the host restarts (a new instance id). Returns once the
 * callback server listens; `ready` says when the host has every tool.
 *
 * Rejects with `PluginConfigError` for options it cannot use (a bad source, a non-loopback callback hostname, two
 * tools of one name) or the callback server's listen error.
 *
 * @example
 * ```ts
 * import { remoteTool, startPlugin } from "llm-worker/remote/plugin"
 * import { z } from "zod"
 *
 * const weather = remoteTool({
 *   name: "get_weather",
 *   description: "Weather for a city",
 *   parameters: z.object({ city: z.string() }),
 *   execute: ({ city }) => ({ city, temp_c: 22 })
 * })
 * const plugin = await startPlugin({ source: "plugin:weather", tools: [weather], host: "http://127.0.0.1:48911" })
 * await plugin.ready // every tool registered
 * // … SIGINT / SIGTERM or plugin.stop() unregisters and closes
 * ```
 */
export const startPlugin = async (options: PluginOptions): Promise<Plugin> => {
  const source = options.source
  if (typeof source !== "string" || source === "" || source.length > 200) {
    throw new PluginConfigError({ field: "source", message: "source must be a string of 1 to 200 characters" })
  }
  if (source === BUILTIN_SOURCE) throw new PluginConfigError({ field: "source", message: `source "${BUILTIN_SOURCE}" is reserved for the host's own tools` })
  const token = options.registrantToken ?? randomBytes(32).toString("base64url")
  if (typeof token !== "string" || !REGISTRANT_TOKEN_PATTERN.test(token)) {
    throw new PluginConfigError({ field: "registrantToken", message: "registrantToken must be 32-256 characters of A-Z, a-z, 0-9, _ and -" })
  }
  const tools = collectTools(options.tools)
  const host = hostUrl(options.host)
  const hostname = options.callback?.hostname ?? "127.0.0.1"
  if (hostname !== "127.0.0.1" && hostname !== "::1" && hostname !== "localhost") {
    throw new PluginConfigError({ field: "callback.hostname", message: `callbacks are served on loopback only (127.0.0.1, ::1, localhost), got ${String(hostname)}` })
  }
  const backoff = makeBackoff(options.retry)
  const runtime = new PluginRuntime(options, source, token, host, backoff, tools)
  await runtime.listen(hostname)
  return runtime.plugin()
}

class PluginRuntime {
  private readonly entries = new Map<string, Entry>()
  private readonly client: HostClient
  private readonly stopController = new AbortController()
  private readonly toleranceSeconds: number
  private readonly healthIntervalMs: number
  private readonly deadlineMs: number
  private server: CallbackServer | undefined
  private instance: string | undefined
  /**
   * A token an older host issued (one that does not take the plugin's own): presented instead of the plugin's
   * until that host restarts.
   */
  private issued: string | undefined
  /** A registration was accepted by the current host instance: the source is claimed (or issued) there. */
  private claimed = false
  /** A plugin without tools: where its source's claim stands. */
  private claimState: "idle" | "claiming" | "claimed" | "refused" | "gave_up" = "idle"
  private claimError: string | undefined
  private claimStatus = 0
  private syncing: Promise<void> | undefined
  private again = false
  private hostDown = false
  private healthTimer: NodeJS.Timeout | undefined
  private healthInFlight = false
  /** A registration was sent: the host may hold a tool even if its answer never arrived. */
  private contacted = false
  private stopping: Promise<void> | undefined
  private undoSignals: () => void = () => undefined
  private settleReady: { resolve: () => void; reject: (e: unknown) => void; done: boolean }
  readonly ready: Promise<void>

  constructor(
    private readonly options: PluginOptions,
    readonly source: string,
    private readonly ownToken: string,
    host: URL,
    private readonly backoff: Backoff,
    tools: ReadonlyArray<RemoteTool>
  ) {
    this.toleranceSeconds = options.signatures?.toleranceSeconds ?? DEFAULT_SIGNATURE_TOLERANCE_SECONDS
    if (!(this.toleranceSeconds > 0)) throw new PluginConfigError({ field: "signatures.toleranceSeconds", message: "toleranceSeconds must be > 0" })
    this.healthIntervalMs = positiveInteger(options.healthIntervalMs, 1000, "healthIntervalMs", 10)
    this.deadlineMs = positiveInteger(options.shutdown?.deadlineMs, 2000, "shutdown.deadlineMs", 0)
    this.client = new HostClient(host, {
      accessKey: options.accessKey,
      requestTimeoutMs: positiveInteger(options.requestTimeoutMs, 5000, "requestTimeoutMs"),
      onInstance: (id) => this.seeInstance(id)
    })
    for (const tool of tools) this.entries.set(tool.name, this.entryOf(tool))
    let settle!: { resolve: () => void; reject: (e: unknown) => void; done: boolean }
    this.ready = new Promise<void>((resolve, reject) => {
      settle = { resolve, reject, done: false }
    })
    this.settleReady = settle
    // Observed here so a caller who never awaits `ready` gets no unhandled rejection.
    this.ready.catch(() => undefined)
  }

  async listen(hostname: "127.0.0.1" | "::1" | "localhost"): Promise<void> {
    const callback = this.options.callback ?? {}
    const signatures = this.options.signatures ?? {}
    this.server = await CallbackServer.start({
      hostname,
      port: positiveInteger(callback.port, 0, "callback.port", 0),
      maxBodyBytes: positiveInteger(callback.maxBodyBytes, 4 * 1024 * 1024, "callback.maxBodyBytes"),
      bodyTimeoutMs: positiveInteger(callback.bodyTimeoutMs, 30_000, "callback.bodyTimeoutMs"),
      maxArgumentDepth: positiveInteger(callback.maxArgumentDepth, DEFAULT_MAX_JSON_DEPTH, "callback.maxArgumentDepth"),
      maxConnections: positiveInteger(callback.maxConnections, 128, "callback.maxConnections"),
      verifySignatures: signatures.verify ?? true,
      toleranceSeconds: this.toleranceSeconds,
      maxReplayEntries: positiveInteger(signatures.maxRemembered, 200_000, "signatures.maxRemembered"),
      lookup: (name) => this.entries.get(name),
      onRejected: (rejection: CallbackRejection) => this.emit({ type: "callback_rejected", ...rejection }),
      // A callback is not the host's own answer: a different id there is confirmed by asking the host.
      onInstance: (id) => {
        if (id !== this.instance) this.checkHealthNow()
      }
    })
    const signals = this.options.shutdown?.signals ?? ["SIGINT", "SIGTERM"]
    if (signals !== false) this.undoSignals = stopOnSignals(signals, () => this.stop())
    this.requestSync()
    this.scheduleHealth()
  }

  plugin(): Plugin {
    const self = this
    return {
      source: this.source,
      callbackOrigin: (this.server as CallbackServer).origin,
      get instanceId() {
        return self.instance
      },
      ready: this.ready,
      registrantToken: this.ownToken,
      llm: createRemotePluginLlm({
        baseUrl: this.client.url,
        registrantToken: this.ownToken,
        ...(this.options.accessKey === undefined ? {} : { accessKey: this.options.accessKey })
      }),
      status: () => [...this.entries.values()].map((e) => ({ name: e.tool.name, state: e.state, instanceId: e.instanceId, affectedRoles: e.affectedRoles, pendingRoles: e.pendingRoles, lastError: e.lastError })),
      addTool: (tool) => this.addTool(tool),
      removeTool: (name) => this.removeTool(name),
      stop: (options) => this.stop(options?.deadlineMs)
    }
  }

  private entryOf(tool: RemoteTool): Entry {
    return { tool, secrets: new ToolSecrets(), state: "registering", instanceId: undefined, affectedRoles: [], pendingRoles: [], lastError: undefined, lastStatus: 0 }
  }

  private emit(event: PluginEvent): void {
    try {
      this.options.onEvent?.(event)
    } catch {
      // A listener's mistake must not stop registration or a callback.
    }
  }

  /** Every answer (and callback) names the host instance; a new one means a restart with an empty registry. */
  private seeInstance(id: string): void {
    if (this.instance === id) return
    const previous = this.instance
    this.instance = id
    if (previous === undefined) return
    this.issued = undefined
    this.claimed = false
    for (const entry of this.entries.values()) if (entry.instanceId !== id) entry.state = "registering"
    this.emit({ type: "host_restarted", previous, current: id })
    this.requestSync()
  }

  private requestSync(): void {
    if (this.stopping !== undefined) return
    if (this.syncing !== undefined) {
      this.again = true
      return
    }
    this.syncing = this.syncLoop().finally(() => {
      this.syncing = undefined
      // A request that arrived after the loop's last check (between its final await and here) is not lost.
      if (this.again) this.requestSync()
    })
  }

  private async syncLoop(): Promise<void> {
    do {
      this.again = false
      if (this.entries.size === 0 && !this.claimed) await this.claimWithRetry()
      const due = [...this.entries.values()].filter((e) => e.state === "registering")
      // The first registration claims the source; the others follow, so an older host that issues tokens instead of
      // taking the plugin's own sees no registration race the source's claim.
      if (!this.claimed && due.length > 1) {
        await this.registerWithRetry(due[0] as Entry)
        await Promise.all(due.slice(1).map((e) => this.registerWithRetry(e)))
      } else await Promise.all(due.map((e) => this.registerWithRetry(e)))
      this.checkReady()
    } while (this.again && this.stopping === undefined)
  }

  private checkReady(): void {
    if (this.settleReady.done) return
    const states = [...this.entries.values()]
    if (states.length === 0) {
      if (this.claimState === "refused" || this.claimState === "gave_up") {
        this.settleReady.done = true
        this.settleReady.reject(new RegistrationRefused({ tool: "", status: this.claimStatus, message: `the claim of source "${this.source}" was refused: ${this.claimError ?? "no answer"}` }))
      } else if (this.claimed) {
        this.settleReady.done = true
        this.settleReady.resolve()
      }
      return
    }
    const refused = states.find((e) => e.state === "refused" || e.state === "gave_up")
    if (refused !== undefined) {
      this.settleReady.done = true
      this.settleReady.reject(new RegistrationRefused({ tool: refused.tool.name, status: refused.lastStatus, message: refused.lastError ?? `tool "${refused.tool.name}" was refused` }))
    } else if (states.every((e) => e.state === "registered")) {
      this.settleReady.done = true
      this.settleReady.resolve()
    }
  }

  private async registerWithRetry(entry: Entry): Promise<void> {
    const { tool } = entry
    const signal = this.stopController.signal
    for (let attempt = 1; !signal.aborted && this.entries.get(tool.name) === entry; attempt++) {
      this.contacted = true
      const answer = await this.client.post(
        "/api/tools/register",
        { name: tool.name, description: tool.description, parameters: tool.parameters, callback_url: (this.server as CallbackServer).urlOf(tool.name), role: tool.role, source: this.source, timeout_seconds: tool.timeoutSeconds },
        this.token,
        signal
      )
      if (signal.aborted) return
      const body = answer.body
      if (answer.status === 200 && body?.["ok"] === true) {
        const secret = body["callback_secret"]
        if (typeof secret === "string" && secret !== "") entry.secrets.rotate(secret, nowSeconds(), this.toleranceSeconds)
        const issued = body["registrant_token"]
        if (typeof issued === "string" && issued !== "") this.issued = issued
        if (answer.instanceId === undefined || answer.instanceId === this.instance) this.claimed = true
        entry.instanceId = answer.instanceId
        entry.affectedRoles = strings(body["affected_roles"])
        entry.pendingRoles = strings(body["pending_roles"])
        entry.lastError = undefined
        // A restart noticed while this request was out leaves the tool due again.
        entry.state = answer.instanceId !== undefined && answer.instanceId !== this.instance ? "registering" : "registered"
        if (entry.state === "registering") this.again = true
        this.emit({ type: "registered", tool: tool.name, instanceId: answer.instanceId, affectedRoles: entry.affectedRoles, pendingRoles: entry.pendingRoles, failedRoles: failedRoles(body["failed_roles"]) })
        return
      }
      const error = answer.error ?? (body?.["ok"] === false ? `no role accepted the tool: ${JSON.stringify(failedRoles(body["failed_roles"])).slice(0, 300)}` : `HTTP ${answer.status}`)
      entry.lastError = error
      entry.lastStatus = answer.status
      if (!transient(answer)) {
        entry.state = "refused"
        this.emit({ type: "registration_failed", tool: tool.name, attempt, status: answer.status, error })
        return
      }
      if (attempt >= this.backoff.maxAttempts) {
        entry.state = "gave_up"
        this.emit({ type: "registration_failed", tool: tool.name, attempt, status: answer.status, error })
        return
      }
      const retryInMs = this.backoff.delayMs(attempt)
      this.emit({ type: "registration_failed", tool: tool.name, attempt, status: answer.status, error, retryInMs })
      await abortableSleep(retryInMs, signal)
    }
  }

  /**
   * A plugin without tools makes itself known by claiming its source, so its token opens `/api/llm/*`. Retried
   * like a registration (a 409 may be a process of its own that is still stopping).
   */
  private async claimWithRetry(): Promise<void> {
    const signal = this.stopController.signal
    this.claimState = "claiming"
    for (let attempt = 1; !signal.aborted && this.entries.size === 0; attempt++) {
      this.contacted = true
      const answer = await this.client.post("/api/sources/claim", { source: this.source }, this.ownToken, signal)
      if (signal.aborted) return
      if (answer.status === 200 && answer.body?.["ok"] === true) {
        this.claimState = "claimed"
        if (answer.instanceId === undefined || answer.instanceId === this.instance) this.claimed = true
        else this.again = true
        this.emit({ type: "claimed", instanceId: answer.instanceId })
        return
      }
      const error = answer.error ?? `HTTP ${answer.status}`
      this.claimError = error
      this.claimStatus = answer.status
      if (!transient(answer) || attempt >= this.backoff.maxAttempts) {
        this.claimState = transient(answer) ? "gave_up" : "refused"
        this.emit({ type: "claim_failed", attempt, status: answer.status, error })
        return
      }
      const retryInMs = this.backoff.delayMs(attempt)
      this.emit({ type: "claim_failed", attempt, status: answer.status, error, retryInMs })
      await abortableSleep(retryInMs, signal)
    }
  }

  /** The token presented on every request: the plugin's own, unless an older host issued one. */
  private get token(): string {
    return this.issued ?? this.ownToken
  }

  private scheduleHealth(): void {
    if (this.stopping !== undefined) return
    this.healthTimer = setTimeout(() => void this.checkHealth(), this.healthIntervalMs)
    this.healthTimer.unref()
  }

  private checkHealthNow(): void {
    if (this.healthInFlight || this.stopping !== undefined) return
    clearTimeout(this.healthTimer)
    void this.checkHealth()
  }

  private async checkHealth(): Promise<void> {
    this.healthInFlight = true
    const answer = await this.client.get("/api/health", this.stopController.signal)
    if (answer.status === 0 && !this.stopController.signal.aborted) {
      if (!this.hostDown) this.emit({ type: "host_unreachable", error: answer.error ?? "no answer" })
      this.hostDown = true
    } else if (answer.status !== 0) this.hostDown = false
    // Tools that gave up are tried again once the host answers.
    if (answer.status === 200) {
      let due = this.entries.size === 0 && this.claimState === "gave_up"
      for (const entry of this.entries.values()) {
        if (entry.state !== "gave_up") continue
        entry.state = "registering"
        due = true
      }
      if (due) this.requestSync()
    }
    this.healthInFlight = false
    this.scheduleHealth()
  }

  private addTool(tool: RemoteTool): void {
    if (!isRemoteTool(tool)) throw new PluginConfigError({ field: "tools", message: "addTool takes a remote tool (use toolsOf(object) for decorated methods)" })
    if (this.stopping !== undefined) throw new PluginStopped({ message: "the plugin is stopping" })
    if (this.entries.has(tool.name)) throw new PluginConfigError({ field: "tools", message: `a tool named "${tool.name}" is already served` })
    this.entries.set(tool.name, this.entryOf(tool))
    this.requestSync()
  }

  private async removeTool(name: string): Promise<void> {
    const entry = this.entries.get(name)
    if (entry === undefined) return
    this.entries.delete(name)
    const answer = await this.client.post("/api/tools/unregister", { name, role: entry.tool.role }, this.token)
    this.emit({ type: "unregistered", tools: [name], ok: answer.status === 200, ...(answer.error === undefined ? {} : { error: answer.error }) })
    // The host forgets a source with its last tool: a plugin left without tools claims it again for `llm`.
    if (this.entries.size === 0) {
      this.claimed = false
      this.requestSync()
    }
  }

  stop(deadlineMs: number = this.deadlineMs): Promise<void> {
    this.stopping ??= this.shutdown(deadlineMs)
    return this.stopping
  }

  private async shutdown(deadlineMs: number): Promise<void> {
    const deadline = Date.now() + deadlineMs
    this.stopController.abort()
    clearTimeout(this.healthTimer)
    this.undoSignals()
    if (!this.settleReady.done) {
      this.settleReady.done = true
      this.settleReady.reject(new PluginStopped({ message: "the plugin stopped before every tool was registered" }))
    }
    const registered = [...this.entries.values()].filter((e) => e.instanceId !== undefined)
    if (registered.length > 0 || this.contacted) await this.unregisterAll(registered, deadline)
    await this.server?.close(deadline)
  }

  /** One round trip clears the whole source (the seed's shutdown); tool by tool when the host refuses that. */
  private async unregisterAll(registered: ReadonlyArray<Entry>, deadline: number): Promise<void> {
    const names = (registered.length > 0 ? registered : [...this.entries.values()]).map((e) => e.tool.name)
    const remaining = (): AbortSignal => AbortSignal.timeout(Math.max(1, deadline - Date.now()))
    const cleared = await this.client.post("/api/tools/clear", { role: null, source: this.source }, this.token, remaining())
    if (cleared.status === 200) {
      this.emit({ type: "unregistered", tools: names, ok: true })
      return
    }
    if (cleared.status === 0) {
      this.emit({ type: "unregistered", tools: names, ok: false, error: cleared.error ?? "no answer" })
      return
    }
    const answers = await Promise.all(registered.map((e) => this.client.post("/api/tools/unregister", { name: e.tool.name, role: e.tool.role }, this.token, remaining())))
    const failed = answers.find((a) => a.status !== 200)
    this.emit({ type: "unregistered", tools: names, ok: failed === undefined, ...(failed?.error === undefined ? {} : { error: failed.error }) })
  }
}
