import { isAbsolute, resolve } from "node:path"
import { pathToFileURL } from "node:url"
import type { ToolDefinition } from "../tool/tool.ts"
import { PluginLlmInputError } from "./errors.ts"
import { asPluginModule, CommandRegistry, createPluginContext, type PluginContext, type PluginModule } from "./plugin-context.ts"
import { createPluginLlm, type PluginLlmHost, type PluginLlmOptions } from "./plugin-llm.ts"

/** `createPluginLlm`'s options, plus where plugin modules are found and where their tools go. */
export interface PluginRuntimeOptions extends PluginLlmOptions {
  /** Where `plugins.entries.<id>.module` paths are resolved from (the config file's folder). */
  readonly baseDir?: string
  /** Receives every tool a plugin registers (the host adds it to its roles). */
  readonly registerTool?: (pluginId: string, definition: ToolDefinition) => void
}

/** A plugin that was loaded and registered: its manifest and the tools it registered. */
export interface LoadedPlugin {
  /** The manifest name. */
  readonly id: string
  /** The manifest's version, when it has one. */
  readonly version?: string
  /** The manifest's description, when it has one. */
  readonly description?: string
  /** The tools it registered (empty when `registerTool` was given: they went there). */
  readonly tools: ReadonlyArray<ToolDefinition>
}

/** Everything in-process plugins need from a host: `ctx.llm`, tasks, commands, and loading from the config. */
export interface PluginRuntime {
  /** The host side of `ctx.llm` every plugin's context uses. */
  readonly llm: PluginLlmHost
  /** Every plugin's slash commands. */
  readonly commands: CommandRegistry
  /** The plugins loaded so far, in load order. */
  readonly plugins: ReadonlyArray<LoadedPlugin>
  /** Registers an already imported module (its id is `manifest.name`). */
  load(module: PluginModule): Promise<LoadedPlugin>
  /** Imports and registers every enabled `plugins.entries.<id>.module`; the manifest name must equal `<id>`. */
  loadFromConfig(): Promise<ReadonlyArray<LoadedPlugin>>
  /** A ctx for a plugin that is not a module (a remote plugin's id, a test). */
  contextFor(pluginId: string): PluginContext
}

/**
 * The in-process plugin host: a `createPluginLlm` host, a command registry, and loading of plugin modules (from
 * the config's `plugins.entries` or already imported). Throws `PluginLlmConfigError` as `createPluginLlm` does.
 *
 * @example
 * ```ts
 * import { createPluginRuntime } from "llm-worker/plugin-llm"
 *
 * const runtime = createPluginRuntime({
 *   active: { provider: "openai", model: "gpt-4.1-mini", apiKey: process.env.OPENAI_API_KEY },
 *   config: { plugins: { entries: { tldr: { module: "plugins/tldr.ts" } } } },
 *   baseDir: "/etc/llm-worker" // where module paths (and api_key_file paths) are resolved
 * })
 * await runtime.loadFromConfig()
 * console.log(await runtime.commands.run("tldr", "a long text …")) // { ok: true, output: "…" }
 * ```
 */
export const createPluginRuntime = (options: PluginRuntimeOptions): PluginRuntime => {
  const llm = createPluginLlm({ ...options, ...(options.configDir === undefined && options.baseDir !== undefined ? { configDir: options.baseDir } : {}) })
  const commands = new CommandRegistry()
  const plugins: Array<LoadedPlugin> = []
  const contextOptions = { host: llm, commands, ...(options.registerTool === undefined ? {} : { registerTool: options.registerTool }) }

  const load = async (module: PluginModule): Promise<LoadedPlugin> => {
    const checked = asPluginModule(module, "plugin")
    const id = checked.manifest.name
    if (plugins.some((p) => p.id === id)) throw new PluginLlmInputError({ field: "manifest.name", message: `plugin "${id}" is already loaded` })
    const ctx = createPluginContext(id, contextOptions)
    await checked.register(ctx)
    const loaded: LoadedPlugin = Object.freeze({
      id,
      ...(checked.manifest.version === undefined ? {} : { version: checked.manifest.version }),
      ...(checked.manifest.description === undefined ? {} : { description: checked.manifest.description }),
      tools: ctx.tools
    })
    plugins.push(loaded)
    return loaded
  }

  return {
    llm,
    commands,
    plugins,
    load,
    contextFor: (pluginId) => createPluginContext(pluginId, contextOptions),
    loadFromConfig: async () => {
      const loaded: Array<LoadedPlugin> = []
      for (const [id, entry] of Object.entries(llm.config.plugins)) {
        if (!entry.enabled || entry.module === undefined) continue
        const path = isAbsolute(entry.module) ? entry.module : resolve(options.baseDir ?? process.cwd(), entry.module)
        const module = asPluginModule(await import(pathToFileURL(path).href), `plugins.entries.${id}.module (${entry.module})`)
        if (module.manifest.name !== id) {
          throw new PluginLlmInputError({ field: `plugins.entries.${id}`, message: `the module at ${entry.module} is plugin "${module.manifest.name}", not "${id}"` })
        }
        loaded.push(await load(module))
      }
      return loaded
    }
  }
}
