import type { ToolSpec } from "../llm/request.ts"
import type { ToolDefinition } from "../tool/tool.ts"
import { describeThrown } from "../tool/tool-constructors.ts"
import { ToolMeta } from "../tool/tool-meta.ts"
import type { ToolServerHandle } from "./tool-server.ts"
import { type ToolEntry, registryOf } from "./tool-server.ts"
import { DuplicateName, RegistrationFailed } from "./tool-server-error.ts"

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
  return Object.freeze({ meta, tool: tool as ToolEntry["tool"], spec })
}

/**
 * Registers a batch all-or-nothing: every factory runs exactly once, here; any failure (a throwing factory, a
 * duplicate name within the batch or against the registered set) registers nothing. Internal: reachable only
 * through `MutableWorker.registerTool(s)`.
 */
export const registerDefinitions = (handle: ToolServerHandle, definitions: Iterable<ToolDefinition>): ReadonlyArray<ToolSpec> => {
  const registry = registryOf(handle)
  const batch: Array<ToolEntry> = []
  const seen = new Set<string>()
  for (const definition of definitions) {
    if (typeof definition !== "function") {
      throw new RegistrationFailed({ name: undefined, message: "a tool definition must be a factory function" })
    }
    const entry = instantiate(definition)
    const name = entry.meta.name
    if (registry.entries.has(name) || seen.has(name)) {
      throw new DuplicateName({ name, message: `tool "${name}" is already registered` })
    }
    seen.add(name)
    batch.push(entry)
  }
  registry.commit(batch)
  return batch.map((entry) => entry.spec)
}
