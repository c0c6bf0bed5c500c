import { PluginLlmInputError } from "./errors.ts"

/** What a plugin declares for one of its auxiliary tasks; `defaults` route it until the operator says otherwise. */
export interface AuxiliaryTaskOptions {
  /** Shown to the operator (default the task's name). */
  readonly displayName?: string
  /** What the task is for, shown to the operator (default empty). */
  readonly description?: string
  /** Routing used until the operator configures `auxiliary.<task>`; `auto` or absent: the active provider and model. */
  readonly defaults?: {
    /** A provider name, or `auto`. */
    readonly provider?: string
    /** A model id, or `auto`. */
    readonly model?: string
    /** The task's call deadline in seconds, in (0, 86400]. */
    readonly timeout?: number
  }
}

/** An auxiliary task as registered: its owner and its defaults normalised (`auto` dropped, the timeout in ms). */
export interface RegisteredTask {
  /** `[a-z][a-z0-9_.-]{0,63}`, unique per host. */
  readonly name: string
  /** The plugin id that registered it. */
  readonly owner: string
  /** Shown to the operator. */
  readonly displayName: string
  /** Shown to the operator; may be empty. */
  readonly description: string
  /** The plugin's routing defaults; `timeoutMs` in milliseconds. */
  readonly defaults: { readonly provider?: string; readonly model?: string; readonly timeoutMs?: number }
}

/** The host's own auxiliary tasks: usable by a plugin only with `allow_task_override`, never registrable. */
export const DEFAULT_BUILTIN_TASKS: ReadonlyArray<string> = ["vision", "compression", "title_generation", "web_extract", "summary"]

const TASK_NAME = /^[a-z][a-z0-9_.-]{0,63}$/

/** Who owns which task. A name belongs to the first plugin that registers it; built-in names to nobody. */
export class TaskRegistry {
  readonly #tasks = new Map<string, RegisteredTask>()
  /** The host's own task names: usable with `allow_task_override`, never registrable by a plugin. */
  readonly builtins: ReadonlySet<string>

  /** A registry that refuses `builtins` (the host's own task names, usually `DEFAULT_BUILTIN_TASKS`) as plugin tasks. */
  constructor(builtins: ReadonlyArray<string>) {
    this.builtins = new Set(builtins)
  }

  /**
   * Registers (or, for its owner, re-registers) a task. Throws `PluginLlmInputError` for a bad name, `auto`, a
   * built-in name, a name another plugin owns, or a default timeout outside (0, 86400] seconds.
   */
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

  /** The task registered under `name`, if any. */
  get(name: string): RegisteredTask | undefined {
    return this.#tasks.get(name)
  }

  /** Every registered task, in registration order. */
  list(): ReadonlyArray<RegisteredTask> {
    return [...this.#tasks.values()]
  }
}
