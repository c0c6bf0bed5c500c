import type { PluginRuntime } from "../../plugin-llm/plugin-runtime.ts"
import type { ToolHostState } from "./tool-host-state.ts"

/** Every character that could end a text node or an attribute value is escaped; plugin-supplied text is untrusted. */
export const escapeHtml = (value: unknown): string =>
  String(value ?? "").replace(/[&<>"'`]/g, (char) => `&#${char.charCodeAt(0)};`)

const cell = (value: unknown): string => `<td>${escapeHtml(value)}</td>`

/** Longest text shown in one cell; the list endpoint has the whole value. */
const clip = (text: string, max = 200): string => (text.length > max ? `${text.slice(0, max)}… (${text.length - max} more characters)` : text)

/**
 * The operator's page: per role its model, state and tools, the host's instance id, recent evictions and a link
 * to the OpenAPI document. Server-rendered, no script; everything a plugin or a model wrote is escaped, and the
 * page is sent with a CSP that allows no script at all.
 */
/** The in-process plugins (version, tools, commands, `ctx.llm` calls so far) and every command of the host. */
const pluginsSection = (runtime: PluginRuntime | undefined): string => {
  if (runtime === undefined || runtime.plugins.length === 0) return `<h2>Plugins</h2>\n<p id="plugins">none loaded</p>`
  const commands = runtime.commands.list()
  const rows = runtime.plugins
    .map((plugin) => {
      const usage = runtime.llm.usage(plugin.id)
      const own = commands.filter((c) => c.pluginId === plugin.id).map((c) => `/${c.name}`)
      return `<tr data-plugin="${escapeHtml(plugin.id)}">${cell(plugin.id)}${cell(plugin.version ?? "—")}${cell(clip(plugin.description ?? ""))}${cell(own.join(" ") || "—")}${cell(usage.calls)}${cell(usage.inFlight)}</tr>`
    })
    .join("\n")
  return `<h2>Plugins</h2>
<table id="plugins">
<thead><tr><th>Plugin</th><th>Version</th><th>Description</th><th>Commands</th><th>LLM calls</th><th>In flight</th></tr></thead>
<tbody>
${rows}
</tbody>
</table>`
}

export const renderStatusPage = (state: ToolHostState, plugins?: PluginRuntime): string => {
  const roles = [...state.roles.values()]
    .map((role) => {
      const model = role.client.ok ? `${role.client.client.provider} · ${role.client.client.model}` : `no model: ${role.client.problem}`
      const flags = [role.locked ? "cache-locked" : "mutable", role.busy ? "running a turn" : "idle", role.pending ? "changes pending" : "in sync"]
      const rows = state
        .toolsOf(role)
        .map(
          (tool) =>
            `<tr data-tool="${escapeHtml(tool["name"])}">${cell(tool["name"])}${cell(tool["source"])}${cell(tool["owner"] ?? "host")}${cell(tool["timeout_seconds"] === null ? "—" : `${String(tool["timeout_seconds"])} s`)}${cell(tool["callback_host"] ?? "—")}${cell(tool["calls"] ?? "—")}${cell(tool["errors"] ?? "—")}${cell(clip(String(tool["last_error"] ?? "")))}${cell(tool["state"])}</tr>`
        )
        .join("\n")
      return `<section class="role" data-role="${escapeHtml(role.name)}">
<h2>${escapeHtml(role.name)}${role.name === state.defaultRole ? " <small>(default)</small>" : ""}</h2>
<p class="model">${escapeHtml(model)}</p>
<p class="flags">${escapeHtml(flags.join(" · "))} · ${role.historyLength()} item(s) in the conversation${role.lastApplyError === undefined ? "" : ` · <strong>${escapeHtml(role.lastApplyError)}</strong>`}</p>
<table>
<thead><tr><th>Tool</th><th>Source</th><th>Owner</th><th>Timeout</th><th>Callback host</th><th>Calls</th><th>Errors</th><th>Last error</th><th>State</th></tr></thead>
<tbody>
${rows === "" ? `<tr class="empty"><td colspan="9">no tools</td></tr>` : rows}
</tbody>
</table>
</section>`
    })
    .join("\n")
  const evictions =
    state.evictions.length === 0
      ? "<p>none</p>"
      : `<ul>${state.evictions
          .slice()
          .reverse()
          .map((e) => `<li>${escapeHtml(e.at)}: ${escapeHtml(e.name)} (source ${escapeHtml(e.source)}, ${escapeHtml(e.callbackHost)}) from ${escapeHtml(e.roles.join(", "))} after ${e.failures} connection failures</li>`)
          .join("")}</ul>`
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>llm-worker tool host</title>
<style>
body { font: 14px/1.4 system-ui, sans-serif; margin: 2rem; color: #222; }
table { border-collapse: collapse; margin-bottom: 1rem; }
th, td { border: 1px solid #ccc; padding: 0.25rem 0.5rem; text-align: left; vertical-align: top; }
th { background: #f3f3f3; }
code { background: #f3f3f3; padding: 0 0.25rem; }
</style>
</head>
<body>
<h1>llm-worker tool host</h1>
<p>Instance <code id="instance">${escapeHtml(state.instanceId)}</code> · <a href="/openapi.json">OpenAPI document</a></p>
${roles}
${pluginsSection(plugins)}
<h2>Evictions</h2>
<div id="evictions">${evictions}</div>
</body>
</html>
`
}
