import type { FunctionCallItem, Item } from "../llm/item.ts"
import type { SchemeName } from "../llm/scheme.ts"
import { GENERATED_CALL_ID_PREFIX, isGeneratedCallId } from "../llm/schemes/gemini-decoder.ts"

/**
 * Every call in history has its own id. Providers (or a hostile stand-in) may send a call without an id, two
 * calls under one id, or reuse an id from an earlier turn; paired by id, such calls would share one result
 * (the tool runs twice, the next request carries an id twice and the provider refuses it) or a new call would
 * look answered already. So before a response's calls enter history, each id that is missing, already taken
 * (earlier in the history or earlier in the same response) or not sendable is replaced.
 *
 * The replacement is deterministic — the same history and response always give the same ids, so request bytes
 * stay reproducible — and sendable everywhere: only `[a-zA-Z0-9_-]` (Anthropic's tool_use id pattern, accepted
 * by the OpenAI schemes), at most `MAX_ID_CHARS`; an Anthropic id outside that pattern is replaced too. For Gemini a replacement carries the generated-id prefix of
 * decision 0010, so it is never sent: Gemini pairs such calls by position and name, as for calls it sent
 * without an id. Ids that are unique and sendable are kept byte for byte.
 */

/** Longest id kept as it is; anything longer (a hostile provider's 1 MiB id) is replaced. */
const MAX_ID_CHARS = 128
/** How much of a replaced id survives in its replacement, so logs still show where it came from. */
const KEPT_BASE_CHARS = 40
const SENDABLE = /^[a-zA-Z0-9_-]+$/

/** Ids the provider issued are accepted back by it; only Anthropic documents a pattern a stand-in could break. */
const sendable = (id: string, scheme: SchemeName): boolean =>
  id.length > 0 && id.length <= MAX_ID_CHARS && (scheme !== "anthropic" || SENDABLE.test(id))

/** The ids in use: every call's and every result's (a result whose call was dropped still owns its id). */
export const takenCallIds = (history: ReadonlyArray<Item>): Set<string> => {
  const taken = new Set<string>()
  for (const item of history) if (item.type === "function_call" || item.type === "function_call_output") taken.add(item.callId)
  return taken
}

const replacementBase = (id: string, scheme: SchemeName): string => {
  const safe = id.slice(0, KEPT_BASE_CHARS).replace(/[^a-zA-Z0-9_-]/g, "_")
  const base = safe === "" ? "call" : safe
  if (scheme !== "gemini" || isGeneratedCallId(base)) return base
  return `${GENERATED_CALL_ID_PREFIX}${base}`
}

/** The first free `<base>_<n>`; `taken` is finite, so this ends. */
const freeId = (base: string, taken: ReadonlySet<string>): string => {
  for (let n = 2; ; n++) {
    const candidate = `${base}_${n}`
    if (!taken.has(candidate)) return candidate
  }
}

/**
 * `items` with every function call's id unique against `history` and each other. Returns the same array when
 * nothing changed. `taken` is updated with the ids handed out.
 */
export const uniqueCallIds = (items: ReadonlyArray<Item>, taken: Set<string>, scheme: SchemeName): ReadonlyArray<Item> => {
  let out: Array<Item> | undefined
  items.forEach((item, at) => {
    if (item.type !== "function_call") return
    let id = item.callId
    if (typeof id !== "string" || taken.has(id) || !sendable(id, scheme)) {
      id = freeId(replacementBase(typeof id === "string" ? id : "", scheme), taken)
      out ??= [...items]
      out[at] = { ...item, callId: id } satisfies FunctionCallItem
    }
    taken.add(id)
  })
  return out ?? items
}
