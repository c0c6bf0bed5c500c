import type { PluginGrants } from "./config.ts"
import { type GatedOverride, PluginLlmInputError, PluginLlmTrustError } from "./errors.ts"
import type { TaskRegistry } from "./tasks.ts"

/** The routing arguments of one call, before the gate. */
export interface RoutingRequest {
  readonly provider?: string
  readonly model?: string
  readonly agentId?: string
  readonly profile?: string
  readonly task?: string
}

/** What the gate let through. `task` is set for a plugin's own task or a granted built-in one. */
export interface GrantedRouting {
  readonly provider?: string
  readonly model?: string
  readonly agentId?: string
  readonly profile?: string
  readonly task?: { readonly name: string; readonly builtin: boolean }
}

const key = (pluginId: string, name: string): string => `plugins.entries.${pluginId}.llm.${name}`

const refuse = (pluginId: string, override: GatedOverride, configKey: string, message: string): never => {
  throw new PluginLlmTrustError({ pluginId, override, configKey, message })
}

/** Literal match against an allowlist: absent = any (once the flag is on), `["*"]` = any, `[]` = none. */
const listed = (list: ReadonlyArray<string> | undefined, value: string): boolean =>
  list === undefined || list.includes("*") || list.includes(value)

const overrideValue = (field: string, value: unknown): string | undefined => {
  if (value === undefined || value === null) return undefined
  if (typeof value !== "string" || value.trim() === "") throw new PluginLlmInputError({ field, message: `${field} must be a non-empty string` })
  return value.trim()
}

/**
 * The closed-by-default trust gate. Every override is granted on its own (a model grant grants no provider);
 * a refusal names the override and the exact config key that would allow it, and happens before any provider
 * is called. Shape arguments (temperature, maxTokens, timeout, prompts, messages, input, schema) never pass
 * through here: they choose neither credentials nor routes.
 */
export const checkGate = (
  pluginId: string,
  grants: PluginGrants,
  request: RoutingRequest,
  context: { readonly tasks: TaskRegistry; readonly agents: ReadonlySet<string>; readonly profiles: ReadonlySet<string> }
): GrantedRouting => {
  const provider = overrideValue("provider", request.provider)
  const model = overrideValue("model", request.model)
  const agentId = overrideValue("agentId", request.agentId)
  const profile = overrideValue("profile", request.profile)
  const taskName = overrideValue("task", request.task)

  if (provider !== undefined) {
    if (!grants.allowProviderOverride) {
      refuse(pluginId, "provider", key(pluginId, "allow_provider_override"), `plugin "${pluginId}" may not choose a provider (asked for "${provider}"); the operator can allow it with ${key(pluginId, "allow_provider_override")}: true`)
    }
    if (!listed(grants.allowedProviders, provider)) {
      refuse(pluginId, "provider", key(pluginId, "allowed_providers"), `provider "${provider}" is not in ${key(pluginId, "allowed_providers")}`)
    }
  }
  if (model !== undefined) {
    if (!grants.allowModelOverride) {
      refuse(pluginId, "model", key(pluginId, "allow_model_override"), `plugin "${pluginId}" may not choose a model (asked for "${model}"); the operator can allow it with ${key(pluginId, "allow_model_override")}: true`)
    }
    if (!listed(grants.allowedModels, model)) {
      refuse(pluginId, "model", key(pluginId, "allowed_models"), `model "${model}" is not in ${key(pluginId, "allowed_models")}`)
    }
  }
  if (agentId !== undefined) {
    if (!grants.allowAgentIdOverride) {
      refuse(pluginId, "agentId", key(pluginId, "allow_agent_id_override"), `plugin "${pluginId}" may not call another agent's model (asked for "${agentId}"); the operator can allow it with ${key(pluginId, "allow_agent_id_override")}: true`)
    }
    if (!context.agents.has(agentId)) throw new PluginLlmInputError({ field: "agentId", message: `unknown agent "${agentId}"; known: ${[...context.agents].join(", ") || "none"}` })
  }
  if (profile !== undefined) {
    if (!grants.allowProfileOverride) {
      refuse(pluginId, "profile", key(pluginId, "allow_profile_override"), `plugin "${pluginId}" may not choose a credential profile (asked for "${profile}"); the operator can allow it with ${key(pluginId, "allow_profile_override")}: true`)
    }
    if (!context.profiles.has(profile)) throw new PluginLlmInputError({ field: "profile", message: `unknown profile "${profile}"; the operator defines profiles under llm.profiles` })
  }
  let task: GrantedRouting["task"]
  if (taskName !== undefined && taskName !== "auto") {
    const registered = context.tasks.get(taskName)
    if (registered !== undefined) {
      if (registered.owner !== pluginId) {
        refuse(pluginId, "task", key(pluginId, "allow_task_override"), `task "${taskName}" belongs to plugin "${registered.owner}"; a plugin may use only its own tasks (allow_task_override covers built-in tasks only)`)
      }
      task = { name: taskName, builtin: false }
    } else if (context.tasks.builtins.has(taskName)) {
      if (!grants.allowTaskOverride) {
        refuse(pluginId, "task", key(pluginId, "allow_task_override"), `task "${taskName}" is a built-in task; the operator can allow it with ${key(pluginId, "allow_task_override")}: true`)
      }
      task = { name: taskName, builtin: true }
    } else {
      throw new PluginLlmInputError({ field: "task", message: `unknown task "${taskName}"; register it with ctx.registerAuxiliaryTask first` })
    }
  }
  return {
    ...(provider === undefined ? {} : { provider }),
    ...(model === undefined ? {} : { model }),
    ...(agentId === undefined ? {} : { agentId }),
    ...(profile === undefined ? {} : { profile }),
    ...(task === undefined ? {} : { task })
  }
}
