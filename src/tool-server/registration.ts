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

export interface RegistrationOptions {
  /**
   * The providers the tools will be sent to. A lint error for one of them (a schema or name it would refuse, a
   * name that collides with another tool's provider spelling) fails the registration; warnings are reported.
   * All four dialects when omitted.
   */
  readonly lintTargets?: ReadonlyArray<LintTarget>
}

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
    throw new RegistrationFailed({ name: undefined, message: `tool factory threw: ${describeThrown(thrown)}`, cause: thrown })
  }
  if (!Array.isArray(produced) || produced.length !== 2) {
    throw new RegistrationFailed({ name: undefined, message: "tool factory must return [ToolMeta, Tool]" })
  }
  const [meta, tool] = produced as [unknown, unknown]
  if (!(meta instanceof ToolMeta)) {
    throw new RegistrationFailed({ name: undefined, message: "tool factory returned something that is not a ToolMeta" })
  }
  if (typeof tool !== "object" || tool === null || typeof (tool as { execute?: unknown }).execute !== "function") {
    throw new RegistrationFailed({ name: meta.name, message: `tool "${meta.name}" has no execute function` })
  }
  const spec: ToolSpec = Object.freeze({ name: meta.name, description: meta.descriptionText, inputSchema: meta.schema })
  const limit = outputCap(meta.maxOutputBytes ?? DEFAULT_TOOL_OUTPUT_BYTES)
  return Object.freeze({ meta, tool: tool as ToolEntry["tool"], spec, limit })
}

const dialectOf = (target: LintTarget): ToolDialect => (target === "gemini-subset" ? "gemini" : target)

/**
 * Two tools must not share a provider spelling (`a.b` and `a_b` both become `a_b` on OpenAI). Checked against
 * the registered set incrementally, so registering tools one by one stays linear.
 */
const checkWireCollisions = (registry: ToolRegistry, batch: ReadonlyArray<ToolEntry>, targets: ReadonlyArray<LintTarget>): void => {
  for (const dialect of new Set(targets.map(dialectOf))) {
    const inBatch = new Map<string, string>()
    for (const { meta } of batch) {
      const wire = wireSpelling(meta.name, dialect)
      const owner = registry.ownerOfWire(wire, dialect) ?? inBatch.get(wire)
      if (owner !== undefined) {
        throw new RegistrationFailed({
          name: meta.name,
          message: `tool "${meta.name}" would be sent to ${dialect} as "${wire}", the same name as tool "${owner}"`
        })
      }
      inBatch.set(wire, meta.name)
    }
  }
}

/**
 * Registers a batch all-or-nothing: every factory runs exactly once, here; any failure (a throwing factory, a
 * duplicate name, a lint error for a target provider) registers nothing. Internal: reachable only through
 * `MutableWorker.registerTool(s)`, never from the package's public surface.
 */
export const registerDefinitions = (
  handle: ToolServerHandle,
  definitions: Iterable<ToolDefinition>,
  options?: RegistrationOptions
): RegistrationReport => {
  const registry = registryOf(handle)
  const targets = options?.lintTargets ?? ALL_TARGETS
  const batch: Array<ToolEntry> = []
  const seen = new Set<string>()
  const warnings: Array<SchemaLint> = []
  for (const definition of definitions) {
    if (typeof definition !== "function") {
      throw new RegistrationFailed({ name: undefined, message: "a tool definition must be a factory function" })
    }
    const entry = instantiate(definition)
    const name = entry.meta.name
    if (registry.entries.has(name) || seen.has(name)) {
      throw new DuplicateName({ name, message: `tool "${name}" is already registered` })
    }
    const findings = lintToolSpec(entry.spec, { targets })
    const errors = findings.filter((finding) => finding.severity === "error")
    if (errors.length > 0) {
      throw new RegistrationFailed({
        name,
        message: errors.map((e) => `${e.provider}: ${e.path === "" ? "" : `${e.path}: `}${e.message}`).join("; "),
        lint: errors
      })
    }
    for (const finding of findings) warnings.push(finding)
    seen.add(name)
    batch.push(entry)
  }
  checkWireCollisions(registry, batch, targets)
  registry.commit(batch)
  return { registered: batch.map((entry) => entry.spec), warnings }
}
