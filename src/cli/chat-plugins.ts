import { dirname, resolve } from "node:path"
import type { LlmClientOptions } from "../llm/llm-client.ts"
import { PluginLlmConfigError } from "../plugin-llm/errors.ts"
import { createPluginRuntime, type PluginRuntime } from "../plugin-llm/plugin-runtime.ts"
import type { ToolDefinition } from "../tool/tool.ts"
import { configError } from "./cli-error.ts"

export interface ChatPlugins {
  readonly runtime: PluginRuntime
  /** Tools the plugins registered, for the chat's Worker. */
  readonly tools: ReadonlyArray<ToolDefinition>
}

/**
 * `llm-worker chat --config <file>`: the plugins of a host config, on the chat's own model. Only the `plugins`,
 * `auxiliary` and `llm` sections are used (the chat has no roles); the file is decoded exactly as `serve` decodes
 * it, so a config that the host refuses is refused here too, with the same one-line message (exit 2).
 */
export const loadChatPlugins = async (path: string, active: LlmClientOptions, env: Readonly<Record<string, string | undefined>>, cwd: string): Promise<ChatPlugins> => {
  // Loaded only with --config: YAML and the config schemas would slow every other chat's start.
  const { HostConfigError, loadHostConfig } = await import("../remote/host/config.ts")
  const file = resolve(cwd, path)
  const tools: Array<ToolDefinition> = []
  try {
    const config = await loadHostConfig(file, true)
    const runtime = createPluginRuntime({
      active,
      activeAgent: "chat",
      config: { plugins: config.plugins, auxiliary: config.auxiliary, llm: config.llm },
      baseDir: dirname(file),
      env,
      registerTool: (_pluginId, definition) => void tools.push(definition)
    })
    await runtime.loadFromConfig()
    return { runtime, tools }
  } catch (thrown) {
    if (thrown instanceof HostConfigError) throw configError(thrown.message)
    if (thrown instanceof PluginLlmConfigError) throw configError(`${path}: ${thrown.message}`)
    const message = thrown instanceof Error ? (thrown.message.split("\n")[0] ?? "") : String(thrown)
    throw configError(`${path}: plugins: ${message.slice(0, 500)}`)
  }
}
