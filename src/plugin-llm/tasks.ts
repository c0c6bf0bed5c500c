import { PluginLlmInputError } from "./errors.ts"

/** What a plugin declares for one of its auxiliary tasks; `defaults` route it until the operator says otherwise. */
export interface AuxiliaryTaskOptions {
  readonly displayName?: string
  readonly description?: string
  readonly defaults?: {
    readonly provider?: string
    readonly model?: string
    /** Seconds. */
    readonly timeout?: number
  }
}

export interface RegisteredTask {
  readonly name: string
  readonly owner: string
  readonly displayName: string
  readonly description: string
  readonly defaults: { readonly provider?: string; readonly model?: string; readonly timeoutMs?: number }
}

/** The host's own auxiliary tasks: usable by a plugin only with `allow_task_override`, never registrable. */
export const DEFAULT_BUILTIN_TASKS: ReadonlyArray<string> = ["vision", "compression", "title_generation", "web_extract", "summary"]

const TASK_NAME = /^[a-z][a-z0-9_.-]{0,63}$/

/** Who owns which task. A name belongs to the first plugin that registers it; built-in names to nobody. */
export class TaskRegistry {
  readonly #tasks = new Map<string, RegisteredTask>()
  readonly builtins: ReadonlySet<string>

  constructor(builtins: ReadonlyArray<string>) {
    this.builtins = new Set(builtins)
  }

  register(owner: string, name: unknown, options: AuxiliaryTaskOptions = {}): RegisteredTask {
    if (typeof name !== "string" || !TASK_NAME.test(name)) {
      throw new PluginLlmInputError({ field: "task", message: `task name must match ${TASK_NAME.source}, got ${JSON.stringify(String(name)).slice(0, 80)}` })
    }
    if (name === "auto") throw new PluginLlmInputError({ field: "task", message: `"auto" is reserved (it means the active provider and model)` })
    if (this.builtins.has(name)) throw new PluginLlmInputError({ field: "task", message: `"${name}" is a built-in task of the host; choose another name` })
    const existing = this.#tasks.get(name)
    if (existing !== undefined && existing.owner !== owner) {
      throw new PluginLlmInputError({ field: "task", message: `task "${name}" is already registered by plugin "${existing.owner}"` })
    }
    const timeout = options.defaults?.timeout
    if (timeout !== undefined && (typeof timeout !== "number" || !Number.isFinite(timeout) || timeout <= 0 || timeout > 86_400)) {
      throw new PluginLlmInputError({ field: "defaults.timeout", message: "a task's default timeout must be a positive number of seconds, at most 86400" })
    }
    const provider = options.defaults?.provider
    const model = options.defaults?.model
    const task: RegisteredTask = Object.freeze({
      name,
      owner,
      displayName: options.displayName ?? name,
      description: options.description ?? "",
      defaults: Object.freeze({
        ...(provider === undefined || provider === "auto" ? {} : { provider }),
        ...(model === undefined || model === "auto" ? {} : { model }),
        ...(timeout === undefined ? {} : { timeoutMs: timeout * 1000 })
      })
    })
    this.#tasks.set(name, task)
    return task
  }

  get(name: string): RegisteredTask | undefined {
    return this.#tasks.get(name)
  }

  list(): ReadonlyArray<RegisteredTask> {
    return [...this.#tasks.values()]
  }
}
