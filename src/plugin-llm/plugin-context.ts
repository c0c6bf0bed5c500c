import type { ToolDefinition } from "../tool/tool.ts"
import { PluginLlmInputError } from "./errors.ts"
import type { PluginLlm, PluginLlmHost } from "./plugin-llm.ts"
import type { AuxiliaryTaskOptions, RegisteredTask } from "./tasks.ts"

/** What a command's handler gets besides its argument text. */
export interface CommandContext {
  /**
   * Fires when the caller gives up (Ctrl-C in `llm-worker chat`, the HTTP client hanging up): pass it on to
   * `ctx.llm.complete({ signal })` so the model call stops too. The host stops waiting either way.
   */
  readonly signal: AbortSignal
}

/** A slash command's handler: the text after `/<name> `, answered with text. */
export type CommandHandler = (args: string, context: CommandContext) => string | Promise<string>

/** How one run of a command ended: its output, or one line saying why not (404 unknown, 499 cancelled, 500 failed). */
export type CommandOutcome =
  | { readonly ok: true; readonly output: string }
  | { readonly ok: false; readonly error: string; readonly status: 404 | 499 | 500 }

/** A slash command as a plugin registers it (`ctx.registerCommand`). */
export interface CommandOptions {
  /** Typed as `/<name>`: `[a-z0-9][a-z0-9_-]{0,63}`, one plugin per name. */
  readonly name: string
  /** Answers the command's argument text. */
  readonly handler: CommandHandler
  /** Shown in help (default empty). */
  readonly description?: string
  /** Shown in help: `/tldr <text>`. */
  readonly argsHint?: string
}

/** A command as the host holds it: the plugin's options with its owner and the defaults filled in. */
export interface RegisteredCommand {
  /** The command's name (without the slash). */
  readonly name: string
  /** The plugin that registered it. */
  readonly pluginId: string
  /** Shown in help; may be empty. */
  readonly description: string
  /** Shown in help after the name; may be empty. */
  readonly argsHint: string
  /** Answers the command's argument text. */
  readonly handler: CommandHandler
}

/** What `register(ctx)` receives. */
export interface PluginContext {
  /** The plugin id: its manifest name. */
  readonly pluginId: string
  /** Adds a tool the agent can call (the core `defineTool` / `Tool.from*` definitions). */
  registerTool(definition: ToolDefinition): void
  /** Adds a slash command. Throws `PluginLlmInputError` for a bad name or one another plugin holds. */
  registerCommand(options: CommandOptions): void
  /**
   * Declares an auxiliary task the operator can route (`auxiliary.<name>`) and the plugin can call with `task`.
   * Throws `PluginLlmInputError` for a bad or taken name (built-in ones included).
   */
  registerAuxiliaryTask(name: string, options?: AuxiliaryTaskOptions): RegisteredTask
  /** The plugin's lane to the host's models. */
  readonly llm: PluginLlm
}

/** A plugin module: `export const manifest = { name }` and `export function register(ctx)`. */
export interface PluginModule {
  /** `name` is the plugin id (`[a-z0-9][a-z0-9_-]{0,63}`), the key of its `plugins.entries.<id>` config. */
  readonly manifest: { readonly name: string; readonly version?: string; readonly description?: string }
  /** Called once when the plugin is loaded: register tools, commands and tasks on `ctx` here. */
  register(ctx: PluginContext): void | Promise<void>
}

const COMMAND_NAME = /^[a-z0-9][a-z0-9_-]{0,63}$/

/** Commands of every plugin of a host, by name (one owner per name). */
export class CommandRegistry {
  readonly #commands = new Map<string, RegisteredCommand>()

  /** Registers a command for `pluginId`. Throws `PluginLlmInputError` for a bad name or handler, or a taken name. */
  add(pluginId: string, options: CommandOptions): void {
    if (typeof options !== "object" || options === null) throw new PluginLlmInputError({ field: "command", message: "registerCommand takes {name, handler, description?, argsHint?}" })
    const { name, handler } = options
    if (typeof name !== "string" || !COMMAND_NAME.test(name)) {
      throw new PluginLlmInputError({ field: "name", message: `command name must match ${COMMAND_NAME.source}, got ${JSON.stringify(String(name)).slice(0, 80)}` })
    }
    if (typeof handler !== "function") throw new PluginLlmInputError({ field: "handler", message: `command "${name}" needs a handler function` })
    const existing = this.#commands.get(name)
    if (existing !== undefined) throw new PluginLlmInputError({ field: "name", message: `command "/${name}" is already registered by plugin "${existing.pluginId}"` })
    this.#commands.set(name, Object.freeze({ name, pluginId, handler, description: options.description ?? "", argsHint: options.argsHint ?? "" }))
  }

  /** The command named `name` (without the slash), if any. */
  get(name: string): RegisteredCommand | undefined {
    return this.#commands.get(name)
  }

  /** Every command, sorted by name (for help and `GET /api/commands`). */
  list(): ReadonlyArray<RegisteredCommand> {
    return [...this.#commands.values()].sort((a, b) => (a.name < b.name ? -1 : 1))
  }

  /**
   * Runs a command; its handler's failure comes back as `ok: false` with one line, not as a throw. When `signal`
   * fires, the handler's own signal fires and the run ends at once with 499, even if the handler ignores it (its
   * late answer is dropped), so a hanging plugin cannot hold its caller.
   */
  async run(name: string, args: string, options: { readonly signal?: AbortSignal } = {}): Promise<CommandOutcome> {
    const command = this.#commands.get(name)
    if (command === undefined) return { ok: false, status: 404, error: `unknown command: /${name.slice(0, 64)}` }
    const cancelled: CommandOutcome = { ok: false, status: 499, error: `/${name} was cancelled` }
    const caller = options.signal
    if (caller?.aborted === true) return cancelled
    // The handler's own controller: the caller's signal is not handed over, so a handler cannot abort its caller.
    const controller = new AbortController()
    const answered = (async (): Promise<CommandOutcome> => {
      try {
        const output = await command.handler(args, { signal: controller.signal })
        return { ok: true, output: typeof output === "string" ? output : String(output) }
      } catch (thrown) {
        if (controller.signal.aborted) return cancelled
        const tag = typeof thrown === "object" && thrown !== null && "_tag" in thrown ? String((thrown as { _tag: unknown })._tag) : thrown instanceof Error ? thrown.name : "Error"
        const message = thrown instanceof Error ? thrown.message : String(thrown)
        return { ok: false, status: 500, error: `/${name} failed: ${tag}: ${message.split("\n")[0]?.slice(0, 300) ?? ""}` }
      }
    })()
    if (caller === undefined) return answered
    let onAbort: (() => void) | undefined
    const stopped = new Promise<CommandOutcome>((resolve) => {
      onAbort = () => {
        controller.abort(caller.reason)
        resolve(cancelled)
      }
      caller.addEventListener("abort", onAbort, { once: true })
    })
    try {
      return await Promise.race([answered, stopped])
    } finally {
      if (onAbort !== undefined) caller.removeEventListener("abort", onAbort)
    }
  }
}

/** What `createPluginContext` binds a plugin's `ctx` to. */
export interface ContextOptions {
  /** Gives the context its `llm` lane and task registry. */
  readonly host: PluginLlmHost
  /** Where the plugin's commands go. */
  readonly commands: CommandRegistry
  /** Where the plugin's tools go (the host registers them on its roles); default: kept in `tools`. */
  readonly registerTool?: (pluginId: string, definition: ToolDefinition) => void
}

/**
 * The `ctx` of one plugin, bound to the host's task and command registries and its `ctx.llm`. Without
 * `registerTool` in the options, the tools it registers are kept in `tools`.
 */
export const createPluginContext = (pluginId: string, options: ContextOptions): PluginContext & { readonly tools: ReadonlyArray<ToolDefinition> } => {
  const tools: Array<ToolDefinition> = []
  return {
    pluginId,
    tools,
    registerTool: (definition) => {
      if (typeof definition !== "function") throw new PluginLlmInputError({ field: "tool", message: "registerTool takes a tool definition (defineTool(...))" })
      if (options.registerTool === undefined) tools.push(definition)
      else options.registerTool(pluginId, definition)
    },
    registerCommand: (command) => options.commands.add(pluginId, command),
    registerAuxiliaryTask: (name, taskOptions) => options.host.tasks.register(pluginId, name, taskOptions),
    llm: options.host.forPlugin(pluginId)
  }
}

/** Checks a loaded module's shape; the plugin id is its manifest name. */
export const asPluginModule = (loaded: unknown, where: string): PluginModule => {
  const candidate = (typeof loaded === "object" && loaded !== null && "default" in loaded && typeof (loaded as { register?: unknown }).register !== "function"
    ? (loaded as { default: unknown }).default
    : loaded) as Partial<PluginModule> | null
  if (typeof candidate !== "object" || candidate === null || typeof candidate.register !== "function") {
    throw new PluginLlmInputError({ field: "module", message: `${where} does not export register(ctx)` })
  }
  const name = candidate.manifest?.name
  if (typeof name !== "string" || !COMMAND_NAME.test(name)) {
    throw new PluginLlmInputError({ field: "manifest.name", message: `${where} needs manifest.name matching ${COMMAND_NAME.source}` })
  }
  return candidate as PluginModule
}
