import type { ToolDefinition } from "../tool/tool.ts"
import { PluginLlmInputError } from "./errors.ts"
import type { PluginLlm, PluginLlmHost } from "./plugin-llm.ts"
import type { AuxiliaryTaskOptions, RegisteredTask } from "./tasks.ts"

/** A slash command's handler: the text after `/<name> `, answered with text. */
export type CommandHandler = (args: string) => string | Promise<string>

export interface CommandOptions {
  readonly name: string
  readonly handler: CommandHandler
  readonly description?: string
  /** Shown in help: `/tldr <text>`. */
  readonly argsHint?: string
}

export interface RegisteredCommand {
  readonly name: string
  readonly pluginId: string
  readonly description: string
  readonly argsHint: string
  readonly handler: CommandHandler
}

/** What `register(ctx)` receives. */
export interface PluginContext {
  /** The plugin id: its manifest name. */
  readonly pluginId: string
  /** Adds a tool the agent can call (the core `defineTool` / `Tool.from*` definitions). */
  registerTool(definition: ToolDefinition): void
  registerCommand(options: CommandOptions): void
  registerAuxiliaryTask(name: string, options?: AuxiliaryTaskOptions): RegisteredTask
  readonly llm: PluginLlm
}

/** A plugin module: `export const manifest = { name }` and `export function register(ctx)`. */
export interface PluginModule {
  readonly manifest: { readonly name: string; readonly version?: string; readonly description?: string }
  register(ctx: PluginContext): void | Promise<void>
}

const COMMAND_NAME = /^[a-z0-9][a-z0-9_-]{0,63}$/

/** Commands of every plugin of a host, by name (one owner per name). */
export class CommandRegistry {
  readonly #commands = new Map<string, RegisteredCommand>()

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

  get(name: string): RegisteredCommand | undefined {
    return this.#commands.get(name)
  }

  list(): ReadonlyArray<RegisteredCommand> {
    return [...this.#commands.values()].sort((a, b) => (a.name < b.name ? -1 : 1))
  }

  /** Runs a command; its handler's failure comes back as `ok: false` with one line, not as a throw. */
  async run(name: string, args: string): Promise<{ readonly ok: true; readonly output: string } | { readonly ok: false; readonly error: string; readonly status: 404 | 500 }> {
    const command = this.#commands.get(name)
    if (command === undefined) return { ok: false, status: 404, error: `unknown command: /${name.slice(0, 64)}` }
    try {
      const output = await command.handler(args)
      return { ok: true, output: typeof output === "string" ? output : String(output) }
    } catch (thrown) {
      const tag = typeof thrown === "object" && thrown !== null && "_tag" in thrown ? String((thrown as { _tag: unknown })._tag) : thrown instanceof Error ? thrown.name : "Error"
      const message = thrown instanceof Error ? thrown.message : String(thrown)
      return { ok: false, status: 500, error: `/${name} failed: ${tag}: ${message.split("\n")[0]?.slice(0, 300) ?? ""}` }
    }
  }
}

export interface ContextOptions {
  readonly host: PluginLlmHost
  readonly commands: CommandRegistry
  /** Where the plugin's tools go (the host registers them on its roles); default: kept in `tools`. */
  readonly registerTool?: (pluginId: string, definition: ToolDefinition) => void
}

/** The `ctx` of one plugin, bound to the host's task and command registries and its `ctx.llm`. */
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
