import type { JsonSchema } from "../../schema/json-schema.ts"
import type { ToolDefinition } from "../../tool/tool.ts"
import { type CacheLockedWorker, type MutableWorker, Worker, type RunResult } from "../../worker/worker.ts"
import type { Subscriber } from "../../worker/subscriber.ts"
import { describeThrown } from "../../tool/describe-thrown.ts"
import type { RoleConfig } from "./config.ts"
import type { RemoteRegistration } from "./remote-tool.ts"
import type { RoleClient } from "./role-client.ts"
import { BUILTIN_SOURCE } from "../wire.ts"

/** A tool the host holds for a role: registered over HTTP, one of the host's own (`builtin`), or an in-process plugin's. */
export type HostedTool =
  | { readonly kind: "remote"; readonly registration: RemoteRegistration; readonly definition: ToolDefinition }
  | {
      readonly kind: "plugin"
      /** The plugin id (its manifest name). */
      readonly source: string
      readonly name: string
      readonly description: string
      readonly parameters: JsonSchema
      readonly definition: ToolDefinition
    }
  | {
      readonly kind: "builtin"
      readonly name: string
      readonly description: string
      readonly parameters: JsonSchema
      readonly definition: ToolDefinition
    }

export const sourceOf = (tool: HostedTool): string => (tool.kind === "remote" ? tool.registration.source : tool.kind === "plugin" ? tool.source : BUILTIN_SOURCE)

/** What happened to a change in one role. */
export type ApplyOutcome = { readonly state: "applied" } | { readonly state: "pending" } | { readonly state: "failed"; readonly error: string }

/** One tool call of a turn, as the role saw it end (see `RequestLog.toolCall`). */
export interface RoleToolCall {
  readonly tool: string
  readonly callId: string
  readonly status: string
  /** From the model finishing the call to its result. */
  readonly ms: number
  /** The text the model was given for a failed call. */
  readonly error?: string
}

/** The chat queue of the role is full. */
export class RoleBusy extends Error {
  override readonly name = "RoleBusy"
}

/**
 * One role: a Worker with the role's system prompt and client, and the tool set the host wants it to have
 * (`desired`). The Worker is changed only between turns: while a turn runs, or while the role is cache-locked
 * and no turn boundary has come, a change waits (pending) and is applied at the next boundary — for a locked
 * role by unlock → update → lock, costing one prompt-cache miss (decision 0047).
 */
export class Role {
  readonly desired = new Map<string, HostedTool>()
  #applied = new Map<string, HostedTool>()
  #worker: MutableWorker | CacheLockedWorker | undefined
  #tail: Promise<void> = Promise.resolve()
  #waiting = 0
  #running: AbortController | undefined
  /** When the model finished each call of the running turn, by call id, until its result. */
  readonly #callStarts = new Map<string, number>()
  /** The last failure applying the desired set to the Worker (should not happen: changes are checked first). */
  lastApplyError: string | undefined

  constructor(
    readonly name: string,
    readonly config: RoleConfig,
    readonly client: RoleClient,
    private readonly maxQueued: number,
    onToolCall?: (call: RoleToolCall) => void
  ) {
    if (client.ok) {
      const worker = Worker.create({ client: client.client, maxTurns: config.max_turns, ...(config.system_prompt === undefined ? {} : { systemPrompt: config.system_prompt }) })
      // Only the two tool events: a subscriber for every event would see each streamed text delta too.
      if (onToolCall !== undefined) {
        worker.subscribe({
          onToolCallCompleted: (event) => void this.#callStarts.set(event.call.callId, performance.now()),
          onToolResult: ({ outcome }) => {
            const started = this.#callStarts.get(outcome.callId)
            this.#callStarts.delete(outcome.callId)
            const ms = started === undefined ? 0 : performance.now() - started
            onToolCall({ tool: outcome.name, callId: outcome.callId, status: outcome.status, ms, ...(outcome.isError ? { error: outcome.output } : {}) })
          }
        })
      }
      this.#worker = config.cache_lock ? worker.lock() : worker
    }
  }

  get locked(): boolean {
    return this.#worker?.state === "cache-locked"
  }

  get busy(): boolean {
    return this.#running !== undefined
  }

  /** Whether the Worker's tools differ from the desired set (a change is waiting for a turn boundary). */
  get pending(): boolean {
    if (this.#applied.size !== this.desired.size) return true
    for (const [name, tool] of this.desired) if (this.#applied.get(name) !== tool) return true
    return false
  }

  /** Whether the tool of this name is what the Worker has now. */
  inEffect(name: string): boolean {
    return this.#applied.get(name) === this.desired.get(name)
  }

  /**
   * Brings the Worker's tools to the desired set when the role's policy allows it now. `boundary`: between two
   * turns of this role, where a locked Worker may be unlocked and locked again.
   */
  sync(boundary: boolean): ApplyOutcome {
    const worker = this.#worker
    if (!this.pending) return { state: "applied" }
    if (worker === undefined) {
      this.#applied = new Map(this.desired)
      return { state: "applied" }
    }
    if (this.busy || (worker.state === "cache-locked" && !boundary)) return { state: "pending" }
    const add = [...this.desired].filter(([name, tool]) => this.#applied.get(name) !== tool).map(([, tool]) => tool.definition)
    const remove = [...this.#applied.keys()].filter((name) => !this.desired.has(name))
    const mutable = worker.state === "cache-locked" ? worker.unlock() : worker
    try {
      mutable.updateTools({ add, remove, replace: true })
      this.#applied = new Map(this.desired)
      this.lastApplyError = undefined
      return { state: "applied" }
    } catch (thrown) {
      this.lastApplyError = describeThrown(thrown, 500)
      return { state: "failed", error: this.lastApplyError }
    } finally {
      this.#worker = this.#relock(mutable)
    }
  }

  /** A cache-lock role goes back to locked; if the history cannot be locked the role stays Mutable and says why. */
  #relock(worker: MutableWorker): MutableWorker | CacheLockedWorker {
    if (!this.config.cache_lock) return worker
    try {
      return worker.lock()
    } catch (thrown) {
      this.lastApplyError = `could not lock the role again: ${describeThrown(thrown, 300)}`
      return worker
    }
  }

  /** Runs `task` when the role's previous turns are done; refuses with `RoleBusy` when too many wait. */
  async #exclusive<T>(task: () => Promise<T>, force = false): Promise<T> {
    if (!force && this.#waiting >= this.maxQueued && (this.busy || this.#waiting > 0)) {
      throw new RoleBusy(`role "${this.name}" is busy: ${this.#waiting} chat turn(s) are already waiting`)
    }
    const previous = this.#tail
    let release!: () => void
    this.#tail = new Promise<void>((resolve) => (release = resolve))
    this.#waiting++
    try {
      await previous
    } finally {
      this.#waiting--
    }
    try {
      return await task()
    } finally {
      release()
    }
  }

  /** One turn: pending tool changes are applied first (a turn boundary), and again after the turn. */
  chat(message: string, options: { readonly signal: AbortSignal; readonly subscriber?: Subscriber }): Promise<RunResult> {
    return this.#exclusive(async () => {
      const worker = this.#worker
      if (worker === undefined) throw new Error("this role has no model client")
      this.sync(true)
      const controller = new AbortController()
      const onAbort = (): void => controller.abort()
      options.signal.addEventListener("abort", onAbort, { once: true })
      const unsubscribe = options.subscriber === undefined ? undefined : (this.#worker as MutableWorker | CacheLockedWorker).subscribe(options.subscriber)
      this.#running = controller
      try {
        return await (this.#worker as MutableWorker | CacheLockedWorker).run(message, { signal: controller.signal })
      } finally {
        this.#running = undefined
        this.#callStarts.clear()
        unsubscribe?.()
        options.signal.removeEventListener("abort", onAbort)
        this.sync(true)
      }
    })
  }

  /** Cancels a running turn and forgets the conversation (a locked role is re-locked on the empty history). */
  clearConversation(): Promise<void> {
    this.#running?.abort()
    return this.#exclusive(async () => {
      const worker = this.#worker
      if (worker === undefined) return
      const mutable = worker.state === "cache-locked" ? worker.unlock() : worker
      mutable.setHistory([])
      this.#worker = this.#relock(mutable)
    }, true)
  }

  /** Cancels whatever turn is running (host shutdown). */
  cancel(): void {
    this.#running?.abort()
  }

  historyLength(): number {
    return this.#worker?.history().length ?? 0
  }
}
