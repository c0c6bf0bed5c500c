import { randomBytes } from "node:crypto"
import { makeArgumentCodec } from "../../schema/codec.ts"
import { lintToolSpec, type LintTarget } from "../../schema/lint.ts"
import type { JsonSchema } from "../../schema/json-schema.ts"
import { jsonSchema } from "../../schema/sources/raw.ts"
import { type ToolDialect, wireSpelling } from "../../schema/tool-names.ts"
import { describeThrown } from "../../tool/describe-thrown.ts"
import type { ToolDefinition } from "../../tool/tool.ts"
import { BUILTIN_SOURCE, DEFAULT_SOURCE } from "../wire.ts"
import { checkCallbackUrl } from "./callback-url.ts"
import type { HostConfig } from "./config.ts"
import { type Actor, Ownership } from "./ownership.ts"
import { type RemoteRegistration, remoteToolDefinition } from "./remote-tool.ts"
import { type HostedTool, Role, type RoleToolCall, sourceOf } from "./role.ts"
import type { RoleClient } from "./role-client.ts"
import type { RequestLog } from "./request-log.ts"

/** Every provider a tool may be sent to: a registration is linted against all of them, whatever the roles use. */
const ALL_TARGETS: ReadonlyArray<LintTarget> = ["openai-chat", "openai-responses", "anthropic", "gemini"]
const DIALECTS: ReadonlyArray<ToolDialect> = ["openai-chat", "openai-responses", "anthropic", "gemini"]
const NO_ARGUMENTS: JsonSchema = { type: "object", properties: {}, additionalProperties: false }
/** Evictions kept for the status page and the list. */
const KEPT_EVICTIONS = 100

export interface Issue {
  readonly path: string
  readonly message: string
}

/** What an operation answers: the HTTP status and the JSON body (the instance id is added by the HTTP layer). */
export interface Outcome {
  readonly status: number
  readonly body: Readonly<Record<string, unknown>>
}

export interface RegisterInput {
  readonly name: string
  readonly description?: string | undefined
  readonly parameters?: Readonly<Record<string, unknown>> | undefined
  readonly callback_url: string
  readonly role?: string | null | undefined
  readonly source?: string | undefined
  readonly timeout_seconds?: number | undefined
}

export interface Eviction {
  readonly name: string
  readonly source: string
  readonly callbackHost: string
  readonly roles: ReadonlyArray<string>
  readonly failures: number
  readonly at: string
}

export interface BuiltinTool {
  readonly name: string
  readonly description: string
  readonly parameters: JsonSchema
  readonly definition: ToolDefinition
}

/** Error texts are one readable line (a schema error or a plugin's message may carry newlines). */
export const oneLine = (text: string): string => text.replace(/\s*[\r\n]+\s*/g, " ")

const invalid = (issues: ReadonlyArray<Issue>): Outcome => {
  const lines = issues.map((issue) => ({ path: issue.path, message: oneLine(issue.message) }))
  return { status: 422, body: { ok: false, error: lines.map((issue) => (issue.path === "" ? issue.message : `${issue.path}: ${issue.message}`)).join("; "), issues: lines } }
}

const refused = (status: number, error: string, extra: Readonly<Record<string, unknown>> = {}): Outcome => ({ status, body: { ok: false, error: oneLine(error), ...extra } })

/** `/properties/x/type` → `.properties.x.type`, appended to the field name. */
const pointerPath = (field: string, pointer: string): string =>
  pointer === "" ? field : `${field}${pointer.split("/").slice(1).map((part) => `.${part.replace(/~1/g, "/").replace(/~0/g, "~")}`).join("")}`

interface RoleReport {
  readonly affected: Array<string>
  readonly pending: Array<string>
  readonly failed: Array<{ readonly role: string; readonly error: string }>
}

/**
 * The host's state: its roles, who owns which tools, and every change to them. Each operation runs synchronously
 * from its checks to its last role update, so two requests never interleave inside one (no lock needed on one
 * event loop) and a role sees a change whole or not at all.
 */
export class ToolHostState {
  readonly roles: ReadonlyMap<string, Role>
  readonly defaultRole: string
  readonly evictions: Array<Eviction> = []
  readonly #ownership: Ownership
  readonly #config: HostConfig

  constructor(
    config: HostConfig,
    clientFor: (name: string) => RoleClient,
    readonly instanceId: string,
    private readonly log: (line: string) => void,
    builtins: ReadonlyArray<BuiltinTool> = [],
    requestLog?: RequestLog
  ) {
    this.#config = config
    this.#ownership = new Ownership(config.server.max_sources)
    const roles = new Map<string, Role>()
    for (const [name, roleConfig] of Object.entries(config.roles)) {
      const toolLog =
        requestLog?.enabled === true
          ? (call: RoleToolCall): void => {
              const tool = roles.get(name)?.desired.get(call.tool)
              requestLog.toolCall({ ...call, role: name, source: tool === undefined ? undefined : sourceOf(tool) })
            }
          : undefined
      const role = new Role(name, roleConfig, clientFor(name), config.server.max_queued_chats, toolLog)
      for (const builtin of builtins) role.desired.set(builtin.name, { kind: "builtin", ...builtin })
      const applied = role.sync(true)
      if (applied.state === "failed") throw new Error(`built-in tools for role "${name}": ${applied.error}`)
      roles.set(name, role)
    }
    this.roles = roles
    this.defaultRole = config.defaultRole
  }

  /** The ownership of sources, for the plugin-LLM lane: a registrant token stands for its source (the plugin id). */
  sourceOfToken(token: string): string | undefined {
    return this.#ownership.sourceOfToken(token)
  }

  /**
   * Reserves an in-process plugin's id as a source of the host's: no request acts for it, so nobody can register
   * under it and be issued a registrant token that would carry the plugin's LLM grants.
   */
  reservePlugin(pluginId: string): void {
    this.#ownership.reserve(pluginId)
  }

  /**
   * Adds an in-process plugin's tool to every role under the plugin's id as source (at startup, before the host
   * listens). Throws when a role cannot take it: a name another source holds, a provider spelling clash, the size
   * limit — a startup error, never a silently missing tool.
   */
  addPluginTool(pluginId: string, definition: ToolDefinition): void {
    this.reservePlugin(pluginId)
    const [meta] = definition()
    const name = meta.name
    const hosted: HostedTool = { kind: "plugin", source: pluginId, name, description: meta.descriptionText, parameters: meta.schema, definition }
    for (const role of this.roles.values()) {
      const existing = role.desired.get(name)
      if (existing !== undefined) throw new Error(`plugin "${pluginId}": tool "${name}" is already held by source "${sourceOf(existing)}"`)
      const problem = this.#roleProblem(role, name)
      if (problem !== undefined) throw new Error(`plugin "${pluginId}": ${problem}`)
      role.desired.set(name, hosted)
      const applied = role.sync(true)
      if (applied.state === "failed") {
        role.desired.delete(name)
        role.sync(true)
        throw new Error(`plugin "${pluginId}": tool "${name}" for role "${role.name}": ${applied.error}`)
      }
    }
  }

  /** The roles a request targets: all of them for null / absent / "", else the named one (undefined: unknown). */
  targets(role: string | null | undefined): ReadonlyArray<Role> | undefined {
    if (role === null || role === undefined || role === "") return [...this.roles.values()]
    const found = this.roles.get(role)
    return found === undefined ? undefined : [found]
  }

  #unknownRole(role: string): Outcome {
    return refused(404, `unknown role: ${role}`)
  }

  #actor(named: string | undefined, token: string | undefined, fallback: string, registering = false): Actor {
    return this.#ownership.actor(named, token, fallback, registering)
  }

  /** The refusal an actor got, with `code: "source_claimed"` when a claimed source refused it. */
  #refusal(actor: Extract<Actor, { ok: false }>): Outcome {
    return refused(actor.status, actor.error, actor.code === undefined ? {} : { code: actor.code })
  }

  /** Forgets the token of a source that no role holds a tool of any more (see Ownership). */
  #releaseIfEmpty(source: string): void {
    for (const role of this.roles.values()) for (const tool of role.desired.values()) if (sourceOf(tool) === source) return
    this.#ownership.release(source)
  }

  /** Why a role cannot take this tool besides ownership: its size limit, or a provider spelling clash. */
  #roleProblem(role: Role, name: string): string | undefined {
    if (!role.desired.has(name) && role.desired.size >= this.#config.server.max_tools_per_role) {
      return `role "${role.name}" already holds the maximum of ${this.#config.server.max_tools_per_role} tools`
    }
    for (const dialect of DIALECTS) {
      const wire = wireSpelling(name, dialect)
      for (const other of role.desired.keys()) {
        if (other !== name && wireSpelling(other, dialect) === wire) {
          return `tool "${name}" would be sent to ${dialect} as "${wire}", the same name as tool "${other}"`
        }
      }
    }
    return undefined
  }

  /** Applies `change` to each role, reverting a role whose Worker refused it; collects what happened. */
  #apply(roles: ReadonlyArray<Role>, change: (role: Role) => (() => void) | string): RoleReport {
    const report: RoleReport = { affected: [], pending: [], failed: [] }
    for (const role of roles) {
      const undo = change(role)
      if (typeof undo === "string") {
        report.failed.push({ role: role.name, error: oneLine(undo) })
        continue
      }
      const outcome = role.sync(false)
      if (outcome.state === "failed") {
        undo()
        role.sync(false)
        report.failed.push({ role: role.name, error: oneLine(outcome.error) })
      } else if (outcome.state === "pending") {
        report.pending.push(role.name)
      } else {
        report.affected.push(role.name)
      }
    }
    return report
  }

  register(input: RegisterInput, token: string | undefined): Outcome {
    const url = checkCallbackUrl(input.callback_url)
    if (!url.ok) return invalid([{ path: "callback_url", message: url.reason }])
    const description = input.description ?? ""
    let codec: RemoteRegistration["codec"]
    try {
      // A plugin's schema is not the operator's code: its patterns run on the linear-time engine or are refused.
      codec = makeArgumentCodec(jsonSchema((input.parameters ?? NO_ARGUMENTS) as JsonSchema), { untrustedSchema: true }) as RemoteRegistration["codec"]
    } catch (thrown) {
      return invalid([{ path: "parameters", message: describeThrown(thrown, 500) }])
    }
    const lint = lintToolSpec({ name: input.name, description, inputSchema: codec.jsonSchema }, { targets: ALL_TARGETS }).filter((finding) => finding.severity === "error")
    if (lint.length > 0) {
      return invalid(
        lint.slice(0, 20).map((finding) => ({
          path: finding.path === "" && !finding.message.includes("schema") ? "name" : pointerPath("parameters", finding.path),
          message: `${finding.provider}: ${finding.message}`
        }))
      )
    }
    const roles = this.targets(input.role)
    if (roles === undefined) return this.#unknownRole(input.role as string)
    const actor = this.#actor(input.source, token, DEFAULT_SOURCE, true)
    if (!actor.ok) return this.#refusal(actor)
    if (this.#ownership.full(actor.source)) return refused(429, `the host already has the maximum of ${this.#config.server.max_sources} sources`)
    const conflicts = this.#conflicts(roles, input.name, actor, true)
    if (conflicts !== undefined) return conflicts
    const registration: RemoteRegistration = {
      kind: "remote",
      name: input.name,
      description,
      parameters: (input.parameters ?? NO_ARGUMENTS) as JsonSchema,
      codec,
      callbackUrl: url.url,
      callbackHost: url.hostLabel,
      source: actor.source,
      timeoutSeconds: input.timeout_seconds ?? 30,
      secret: randomBytes(32).toString("hex"),
      stats: { calls: 0, errors: 0, lastError: undefined, consecutiveConnectionFailures: 0 }
    }
    const hosted: HostedTool = {
      kind: "remote",
      registration,
      definition: remoteToolDefinition(registration, {
        instanceId: this.instanceId,
        maxResponseBytes: this.#config.server.max_callback_response_bytes,
        maxResponseDepth: this.#config.server.max_callback_response_depth,
        onConnectionFailure: (evicted, failures) => this.#connectionFailed(evicted, failures)
      })
    }
    const report = this.#apply(roles, (role) => {
      const problem = this.#roleProblem(role, input.name)
      if (problem !== undefined) return problem
      const previous = role.desired.get(input.name)
      role.desired.set(input.name, hosted)
      return () => (previous === undefined ? role.desired.delete(input.name) : role.desired.set(input.name, previous))
    })
    const accepted = report.affected.length + report.pending.length > 0
    const issued = accepted ? this.#ownership.accepted(actor) : undefined
    return {
      status: 200,
      body: {
        ok: accepted,
        registered: input.name,
        affected_roles: report.affected,
        failed_roles: report.failed,
        pending_roles: report.pending,
        ...(accepted
          ? { callback_secret: registration.secret, source: actor.source, owner: this.#ownership.claimed(actor.source) ? "claimed" : "unclaimed" }
          : { error: report.failed.map((f) => `${f.role}: ${f.error}`).join("; ") }),
        ...(issued === undefined ? {} : { registrant_token: issued })
      }
    }
  }

  /**
   * Claims a source without registering a tool: how a plugin that only calls `ctx.llm` over HTTP becomes known
   * (its token then opens `/api/llm/*`). Same rules as a registration's claim; presenting the source's own token
   * again is a no-op. The claim holds until the source is cleared (or, once it has tools, loses its last one).
   */
  claimSource(source: string, token: string | undefined): Outcome {
    if (token === undefined) return refused(401, "present the registrant token that claims the source in x-llm-worker-registrant-token")
    const actor = this.#actor(source, token, source, true)
    if (!actor.ok) return this.#refusal(actor)
    if (this.#ownership.full(actor.source)) return refused(429, `the host already has the maximum of ${this.#config.server.max_sources} sources`)
    if (actor.claiming !== undefined) this.#ownership.accepted(actor)
    else this.#ownership.claim(actor)
    return { status: 200, body: { ok: true, source: actor.source, owner: "claimed" } }
  }

  /** 409 when any targeted role holds `name` for a source the actor may not act for. */
  #conflicts(roles: ReadonlyArray<Role>, name: string, actor: Extract<Actor, { ok: true }>, replacing: boolean): Outcome | undefined {
    for (const role of roles) {
      const existing = role.desired.get(name)
      if (existing === undefined) continue
      const allowed = this.#ownership.mayChange(actor, sourceOf(existing), replacing)
      if (!allowed.ok) return refused(409, `tool "${name}" ${allowed.error}`, { role: role.name, owner: sourceOf(existing) })
    }
    return undefined
  }

  unregister(input: { readonly name: string; readonly role?: string | null | undefined }, token: string | undefined): Outcome {
    const roles = this.targets(input.role)
    if (roles === undefined) return this.#unknownRole(input.role as string)
    const actor = this.#actor(undefined, token, "")
    if (!actor.ok) return this.#refusal(actor)
    const holding = roles.filter((role) => role.desired.has(input.name))
    if (holding.length === 0) return refused(404, `unknown tool: ${input.name}`)
    const conflicts = this.#conflicts(holding, input.name, actor, false)
    if (conflicts !== undefined) return conflicts
    const owners = new Set(holding.map((role) => sourceOf(role.desired.get(input.name) as HostedTool)))
    const report = this.#apply(holding, (role) => {
      const previous = role.desired.get(input.name) as HostedTool
      role.desired.delete(input.name)
      return () => role.desired.set(input.name, previous)
    })
    for (const owner of owners) this.#releaseIfEmpty(owner)
    return {
      status: 200,
      body: { ok: report.failed.length < holding.length, unregistered: input.name, affected_roles: report.affected, pending_roles: report.pending, failed_roles: report.failed }
    }
  }

  clear(input: { readonly role?: string | null | undefined; readonly source: string }, token: string | undefined): Outcome {
    if (input.source === BUILTIN_SOURCE) return refused(403, `source "${BUILTIN_SOURCE}" belongs to the host and cannot be cleared over HTTP`)
    const roles = this.targets(input.role)
    if (roles === undefined) return this.#unknownRole(input.role as string)
    const actor = this.#actor(input.source, token, input.source)
    if (!actor.ok) return this.#refusal(actor)
    const removed = new Set<string>()
    const report = this.#apply(roles, (role) => {
      const taken = [...role.desired].filter(([, tool]) => sourceOf(tool) === actor.source)
      for (const [name] of taken) {
        role.desired.delete(name)
        removed.add(name)
      }
      return () => {
        for (const [name, tool] of taken) role.desired.set(name, tool)
      }
    })
    this.#ownership.claim(actor)
    this.#releaseIfEmpty(actor.source)
    return {
      status: 200,
      body: { ok: true, cleared: [...removed].sort(), source: actor.source, affected_roles: report.affected, pending_roles: report.pending, failed_roles: report.failed }
    }
  }

  /** Removes a registration whose callback keeps refusing connections, from every role that still has it. */
  #connectionFailed(registration: RemoteRegistration, failures: number): void {
    const limit = this.#config.server.evict_after_connection_failures
    if (failures < limit) return
    const holding = [...this.roles.values()].filter((role) => {
      const tool = role.desired.get(registration.name)
      return tool?.kind === "remote" && tool.registration === registration
    })
    if (holding.length === 0) return
    for (const role of holding) {
      role.desired.delete(registration.name)
      role.sync(false)
    }
    this.#releaseIfEmpty(registration.source)
    const eviction: Eviction = {
      name: registration.name,
      source: registration.source,
      callbackHost: registration.callbackHost,
      roles: holding.map((role) => role.name),
      failures,
      at: new Date().toISOString()
    }
    this.evictions.push(eviction)
    if (this.evictions.length > KEPT_EVICTIONS) this.evictions.shift()
    this.log(
      `llm-worker host: evicted tool ${JSON.stringify(registration.name)} (source ${JSON.stringify(registration.source)}) from role(s) ${eviction.roles.map((r) => JSON.stringify(r)).join(", ")}: ${failures} consecutive connection failures to ${registration.callbackHost}`
    )
  }

  /** `GET /api/tools`: each targeted role's tools, sorted by name. */
  list(role: string | undefined): Outcome {
    const roles = this.targets(role)
    if (roles === undefined) return this.#unknownRole(role as string)
    return {
      status: 200,
      body: {
        ok: true,
        roles: Object.fromEntries(roles.map((r) => [r.name, this.toolsOf(r)])),
        evictions: this.evictions.map((e) => ({ name: e.name, source: e.source, callback_host: e.callbackHost, roles: e.roles, failures: e.failures, at: e.at }))
      }
    }
  }

  toolsOf(role: Role): ReadonlyArray<Readonly<Record<string, unknown>>> {
    return [...role.desired.keys()].sort().map((name) => {
      const tool = role.desired.get(name) as HostedTool
      const state = role.inEffect(name) ? "active" : "pending"
      if (tool.kind === "builtin") {
        return { name, description: tool.description, parameters: tool.parameters, source: BUILTIN_SOURCE, timeout_seconds: null, callback_host: null, state }
      }
      if (tool.kind === "plugin") {
        return { name, description: tool.description, parameters: tool.parameters, source: tool.source, owner: "plugin", timeout_seconds: null, callback_host: null, state }
      }
      const r = tool.registration
      return {
        name,
        description: r.description,
        parameters: r.parameters,
        source: r.source,
        owner: this.#ownership.claimed(r.source) ? "claimed" : "unclaimed",
        timeout_seconds: r.timeoutSeconds,
        callback_host: r.callbackHost,
        state,
        calls: r.stats.calls,
        errors: r.stats.errors,
        last_error: r.stats.lastError ?? null
      }
    })
  }
}
