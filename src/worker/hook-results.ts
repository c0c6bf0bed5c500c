import type { ToolSpec } from "../llm/request.ts"
import type { HookPoint } from "./hooks.ts"
import { describeSafely, stringSafely } from "./describe-safely.ts"
import { ownItem, ownItems } from "./owned-items.ts"
import { HookFailed } from "./worker-error.ts"

/**
 * A hook's result, read once into a frozen copy holding only the fields its tag defines, each checked. Hooks
 * written in plain JavaScript can return anything: a Proxy, getters that throw, a symbol as a reason, an item
 * that is not an item. Reading such a value later (while building a request, pairing results, formatting a
 * message) would fail far from the hook, as a worker defect. Here every such failure is the hook's `HookFailed`.
 */
export interface OwnedResult {
  readonly _tag: string
}

type Field = (value: unknown, name: string) => unknown

const reason: Field = (value, name) => {
  if (value === undefined) return "(no reason given)"
  if (typeof value !== "string") throw new TypeError(`${name} must be a string`)
  return value
}

const text: Field = (value, name) => {
  if (typeof value !== "string") throw new TypeError(`${name} must be a string`)
  return value
}

const optionalBoolean: Field = (value, name) => {
  if (value !== undefined && typeof value !== "boolean") throw new TypeError(`${name} must be a boolean`)
  return value
}

const context: Field = (value) => {
  if (typeof value !== "object" || value === null) throw new TypeError("context must be an object")
  const c = value as Record<string, unknown>
  const systemPrompt = c["systemPrompt"]
  if (systemPrompt !== undefined && typeof systemPrompt !== "string") throw new TypeError("context.systemPrompt must be a string")
  const tools = c["tools"]
  if (!Array.isArray(tools)) throw new TypeError("context.tools must be an array")
  const config = c["config"]
  if (typeof config !== "object" || config === null) throw new TypeError("context.config must be an object")
  return {
    systemPrompt,
    items: ownItems(c["items"]),
    tools: Object.freeze([...(tools as ReadonlyArray<ToolSpec>)]),
    config: { ...config }
  }
}

const FIELDS: Readonly<Record<string, Readonly<Record<string, Field>>>> = {
  Continue: {},
  Finish: {},
  Cancel: { reason },
  Abort: { reason },
  Skip: { reason },
  Deny: { reason },
  Pause: { reason },
  RewritePrompt: { item: (value) => ownItem(value) },
  RewriteRequest: { context },
  RewriteArguments: { arguments: text },
  RewriteResult: { output: text, isError: optionalBoolean },
  ContinueWith: { items: (value) => ownItems(value) }
}

const tagOf = (produced: unknown): unknown =>
  typeof produced === "object" && produced !== null ? (produced as { _tag?: unknown })._tag : undefined

export const ownResult = (point: HookPoint, produced: unknown, accepted: ReadonlySet<string>): OwnedResult => {
  let tag: unknown
  try {
    tag = tagOf(produced)
  } catch (thrown) {
    throw new HookFailed({ point, message: `${point} hook returned a value whose _tag cannot be read: ${describeSafely(thrown)}`, cause: produced })
  }
  if (typeof tag !== "string" || !accepted.has(tag)) {
    const shown = typeof tag === "string" ? JSON.stringify(stringSafely(tag)) : describeSafely(produced)
    throw new HookFailed({ point, message: `${point} hook returned ${shown}, which is not a ${point} result`, cause: produced })
  }
  const fields = FIELDS[tag] ?? {}
  const out: Record<string, unknown> = { _tag: tag }
  try {
    for (const [name, check] of Object.entries(fields)) {
      const value = check((produced as Record<string, unknown>)[name], name)
      if (value !== undefined) out[name] = value
    }
  } catch (thrown) {
    throw new HookFailed({ point, message: `${point} hook returned an invalid ${tag} result: ${describeSafely(thrown)}`, cause: produced })
  }
  return Object.freeze(out) as unknown as OwnedResult
}
