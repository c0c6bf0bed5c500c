import type { ToolSpec } from "../llm/request.ts"
import { type LintTarget, type SchemaLint, lintToolSpec } from "../schema/lint.ts"
import { type ToolDialect, wireSpelling } from "../schema/tool-names.ts"
import type { ToolDefinition } from "../tool/tool.ts"
import { describeThrown } from "../tool/tool-constructors.ts"
import { ToolMeta } from "../tool/tool-meta.ts"
import type { ToolServerHandle } from "./tool-server.ts"
import { DEFAULT_TOOL_OUTPUT_BYTES } from "../tool/output-limit.ts"
import { type ToolEntry, type ToolRegistry, outputCap, registryOf } from "./tool-server.ts"
import { DuplicateName, RegistrationFailed } from "./tool-server-error.ts"
import { quote } from "../schema/quote.ts"

export interface RegistrationOptions {
  /**
   * The providers the tools will be sent to. A lint error for one of them (a schema or name it would refuse, a
   * name that collides with another tool's provider spelling) fails the registration; warnings are reported.
   * All four dialects when omitted.
   */
  readonly lintTargets?: ReadonlyArray<LintTarget>
}

/** What a registration did: the definitions it added, and the lint warnings their schemas raised. */
export interface RegistrationReport {
  readonly registered: ReadonlyArray<ToolSpec>
  /** What a target provider would silently degrade (e.g. an OpenAI tool that cannot use strict mode). */
  readonly warnings: ReadonlyArray<SchemaLint>
}

const ALL_TARGETS: ReadonlyArray<LintTarget> = ["openai-chat", "openai-responses", "anthropic", "gemini"]

const instantiate = (definition: ToolDefinition): ToolEntry => {
  let produced: unknown
  try {
    produced = definition()
  } catch (thrown) {
    throw new RegistrationFailed({ toolName: undefined, message: `tool factory threw: ${describeThrown(thrown)}`, cause: thrown })
  }
  if (!Array.isArray(produced) || produced.length !== 2) {
    throw new RegistrationFailed({ toolName: undefined, message: "tool factory must return [ToolMeta, Tool]" })
  }
  const [meta, tool] = produced as [unknown, unknown]
  if (!(meta instanceof ToolMeta)) {
    throw new RegistrationFailed({ toolName: undefined, message: "tool factory returned something that is not a ToolMeta" })
  }
  if (typeof tool !== "object" || tool === null || typeof (tool as { execute?: unknown }).execute !== "function") {
    throw new RegistrationFailed({ toolName: meta.name, message: `tool "${meta.name}" has no execute function` })
  }
  const spec: ToolSpec = Object.freeze({ name: meta.name, description: meta.descriptionText, inputSchema: meta.schema })
  const limit = outputCap(meta.maxOutputBytes ?? DEFAULT_TOOL_OUTPUT_BYTES)
  return Object.freeze({ meta, tool: tool as ToolEntry["tool"], spec, limit })
}

const dialectOf = (target: LintTarget): ToolDialect => (target === "gemini-subset" ? "gemini" : target)

/**
 * Two tools must not share a provider spelling (`a.b` and `a_b` both become `a_b` on OpenAI). Checked against
 * the registered set incrementally, so registering tools one by one stays linear. Names in `leaving` (replaced
 * or removed by the same change) do not count as taken.
 */
const checkWireCollisions = (
  registry: ToolRegistry,
  batch: ReadonlyArray<ToolEntry>,
  targets: ReadonlyArray<LintTarget>,
  leaving: ReadonlySet<string>
): void => {
  for (const dialect of new Set(targets.map(dialectOf))) {
    const inBatch = new Map<string, string>()
    for (const { meta } of batch) {
      const wire = wireSpelling(meta.name, dialect)
      const registered = registry.ownerOfWire(wire, dialect)
      const owner = (registered !== undefined && !leaving.has(registered) ? registered : undefined) ?? inBatch.get(wire)
      if (owner !== undefined) {
        throw new RegistrationFailed({
          toolName: meta.name,
          message: `tool "${meta.name}" would be sent to ${dialect} as "${wire}", the same name as tool "${owner}"`
        })
      }
      inBatch.set(wire, meta.name)
    }
  }
}

/** One change to a tool set, applied all-or-nothing. */
export interface ToolChanges {
  /** Tools to add; with `replace`, a tool of the same name already registered is replaced instead of refused. */
  readonly add?: Iterable<ToolDefinition>
  /** Names to remove; a name that is not registered is reported in `notFound`, not an error. */
  readonly remove?: Iterable<string>
  /** Whether `add` may replace registered tools of the same name (default false: `DuplicateName`). */
  readonly replace?: boolean
}

export interface ToolChangeReport extends RegistrationReport {
  /** Names that were registered before this change and are not any more (replaced names are not listed). */
  readonly removed: ReadonlyArray<string>
  /** Names of `add` that replaced a registered tool. */
  readonly replaced: ReadonlyArray<string>
  /** Names of `remove` that were not registered. */
  readonly notFound: ReadonlyArray<string>
}

/**
 * Applies a change set all-or-nothing: every factory runs exactly once, here; any failure (a throwing factory, a
 * duplicate name, a lint error for a target provider, a provider-spelling collision) changes nothing. Internal:
 * reachable only through the Worker's Mutable methods, never from the package's public surface.
 */
export const applyToolChanges = (handle: ToolServerHandle, changes: ToolChanges, options?: RegistrationOptions): ToolChangeReport => {
  const registry = registryOf(handle)
  const targets = options?.lintTargets ?? ALL_TARGETS
  const replace = changes.replace === true
  const removing = new Set<string>()
  const notFound: Array<string> = []
  for (const name of changes.remove ?? []) {
    if (typeof name !== "string") throw new TypeError("a tool name to remove must be a string")
    if (registry.entries.has(name)) removing.add(name)
    else if (!notFound.includes(name)) notFound.push(name)
  }
  const batch: Array<ToolEntry> = []
  const seen = new Set<string>()
  const warnings: Array<SchemaLint> = []
  const replaced: Array<string> = []
  for (const definition of changes.add ?? []) {
    if (typeof definition !== "function") {
      throw new RegistrationFailed({ toolName: undefined, message: "a tool definition must be a factory function" })
    }
    const entry = instantiate(definition)
    const name = entry.meta.name
    const existed = registry.entries.has(name)
    const registered = existed && !removing.has(name)
    if (seen.has(name)) {
      throw new DuplicateName({ toolName: name, message: `tool ${quote(name)} appears twice in this batch; nothing was registered` })
    }
    if (registered && !replace) {
      throw new DuplicateName({ toolName: name, message: `tool ${quote(name)} is already registered` })
    }
    const findings = lintToolSpec(entry.spec, { targets })
    const errors = findings.filter((finding) => finding.severity === "error")
    if (errors.length > 0) {
      throw new RegistrationFailed({
        toolName: name,
        message: errors.map((e) => `${e.provider}: ${e.path === "" ? "" : `${e.path}: `}${e.message}`).join("; "),
        lint: errors
      })
    }
    for (const finding of findings) warnings.push(finding)
    if (existed) replaced.push(name)
    seen.add(name)
    batch.push(entry)
  }
  const leaving = new Set([...removing, ...replaced])
  checkWireCollisions(registry, batch, targets, leaving)
  const removed = [...removing].filter((name) => !seen.has(name))
  if (batch.length > 0 || removing.size > 0) registry.commit(batch, removing)
  return { registered: batch.map((entry) => entry.spec), warnings, removed, replaced, notFound }
}

/**
 * Registers a batch all-or-nothing (`applyToolChanges` with additions only and no replacement). Internal:
 * reachable only through `MutableWorker.registerTool(s)`, never from the package's public surface.
 */
export const registerDefinitions = (
  handle: ToolServerHandle,
  definitions: Iterable<ToolDefinition>,
  options?: RegistrationOptions
): RegistrationReport => {
  const { registered, warnings } = applyToolChanges(handle, { add: definitions }, options)
  return { registered, warnings }
}
