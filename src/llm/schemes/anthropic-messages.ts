import type { ToolNameMap } from "../../schema/provider-tools.ts"
import { type CallLedger, FragmentCache, flat, type ItemContext, plainContext } from "../fragment-cache.ts"
import type { ContentPart, Item } from "../item.ts"
import { type JsonBodyValue, jsonBody, type RawJson, rawJson } from "../json-body.ts"
import type { ConfigWarning } from "../scheme.ts"
import { quote } from "../../schema/quote.ts"
import { argumentsFallbackReason, argumentsObject } from "./arguments-object.ts"

/** A block this library builds, or a provider item's block spliced in as the provider sent it (decision 0025). */
type Block = { readonly [key: string]: JsonBodyValue } | RawJson
type Role = "user" | "assistant"
/** Adds one block to the message of `role` (a new message when the previous one has the other role). */
type Append = (role: Role, block: Block, isResult?: boolean) => void

const isRaw = (block: Block): block is RawJson => block._tag === "RawJson" && typeof block.text === "string"

const warning = (setting: string, message: string): ConfigWarning => ({ _tag: "ConfigWarning", scheme: "anthropic", setting, message })

/** The API rejects empty text blocks, so empty parts are left out (they carry nothing). */
const contentBlock = (part: ContentPart): Block | undefined => {
  if (part.type === "input_image") {
    return { type: "image", source: { type: "base64", media_type: part.mediaType, data: part.data } }
  }
  if (part.type === "input_image_url") return { type: "image", source: { type: "url", url: part.url } }
  return part.text === "" ? undefined : { type: "text", text: part.text }
}

/**
 * Converts neutral history to Messages API `messages`. Consecutive items of one role share a message (the API
 * wants tool results for one assistant turn in a single user message), and in a user message the tool results
 * come first, as the API requires. Reasoning goes back only when it came from Anthropic; an output whose call is
 * not in the history, which the API would reject, is left out with a warning.
 */
export const anthropicMessages = (
  items: ReadonlyArray<Item>,
  names: ToolNameMap,
  cacheAfterItems = 0
): { readonly messages: ReadonlyArray<JsonBodyValue>; readonly warnings: ReadonlyArray<ConfigWarning> } => {
  const warnings: Array<ConfigWarning> = []
  const turns: Array<{ role: Role; results: Array<Block>; blocks: Array<Block> }> = []
  let last: { readonly list: Array<Block>; readonly index: number } | undefined
  // Whether the block appended last carries a breakpoint already: a provider block's text cannot say so.
  let lastMarked = false

  const append: Append = (role, block, isResult = false) => {
    let turn = turns.at(-1)
    if (turn === undefined || turn.role !== role) {
      turn = { role, results: [], blocks: [] }
      turns.push(turn)
    }
    const list = isResult ? turn.results : turn.blocks
    last = { list, index: list.push(block) - 1 }
    lastMarked = false
  }

  /** Puts a cache breakpoint on the block appended last, unless the API refuses one there (thinking blocks). */
  const markCacheBreakpoint = (): void => {
    const block = last?.list[last.index]
    if (last === undefined || block === undefined || lastMarked || !markable(block)) return
    last.list[last.index] = marked(block)
    lastMarked = true
  }

  const appendItem = itemAppender(plainContext(names), warnings, append)
  items.forEach((item, position) => {
    appendItem(item, position)
    // The end of the stable prefix: everything up to it (tools, system, locked history) is written once.
    if (position === cacheAfterItems - 1) markCacheBreakpoint()
  })
  // And the end of the conversation, which moves every turn: Anthropic reads the longest cached prefix, so each
  // request reuses what the previous one wrote (its documented multi-turn pattern). With the system prompt's that
  // is three of the four breakpoints allowed. The marker sits after the locked prefix, whose bytes never change.
  if (cacheAfterItems > 0) markCacheBreakpoint()

  return {
    messages: turns
      .map((turn) => ({ role: turn.role, content: [...turn.results, ...turn.blocks] }))
      .filter((message) => message.content.length > 0),
    warnings
  }
}

/**
 * Whether a cache breakpoint may go on the block: not twice, and never on thinking (the API refuses it there). A
 * provider block (server tool call or result) may carry one; the callers see that it is marked once only.
 */
const markable = (block: Block): boolean =>
  isRaw(block) || (!("cache_control" in block) && block.type !== "thinking" && block.type !== "redacted_thinking")

const CACHE_CONTROL = '"cache_control":{"type":"ephemeral"}'

/**
 * The block with a breakpoint. A provider block is one JSON object as text (checked when it entered the history,
 * possibly with surrounding whitespace): the marker becomes its last field.
 */
const marked = (block: Block): Block => {
  if (!isRaw(block)) return { ...block, cache_control: { type: "ephemeral" } }
  const text = block.text.trimEnd()
  const open = text.slice(0, -1)
  return rawJson(`${open}${open.trimEnd().endsWith("{") ? "" : ","}${CACHE_CONTROL}}`)
}

/**
 * Appends one item's blocks. Everything it needs besides the item comes from `names` (tool names, and the calls
 * made by earlier items), so the fragment cache can tell where an item's blocks are the same.
 */
const itemAppender = (names: ItemContext, warnings: Array<ConfigWarning>, append: Append) => {
  const callIds: CallLedger = names.calls
  return appendItem

  function appendItem(item: Item, position: number): void {
    switch (item.type) {
      case "message":
        for (const part of item.content) {
          const block = contentBlock(part)
          if (block !== undefined) append(item.role, block)
        }
        return
      case "function_call": {
        const checked = argumentsObject(item)
        let input: JsonBodyValue = {}
        if (checked.ok) input = checked.value
        else {
          const reason = argumentsFallbackReason(checked.reason)
          warnings.push(warning(`items[${position}].arguments`, `arguments of call ${quote(item.callId)} ${reason}; sent as {}`))
        }
        callIds.set(item.callId, "")
        append("assistant", { type: "tool_use", id: item.callId, name: names.toWire(item.name), input })
        return
      }
      case "function_call_output":
        if (!callIds.has(item.callId)) {
          warnings.push(warning(`items[${position}]`, `output for call ${item.callId}, which no earlier function_call made; omitted`))
          return
        }
        append(
          "user",
          { type: "tool_result", tool_use_id: item.callId, content: item.output, ...(item.isError ? { is_error: true } : {}) },
          true
        )
        return
      case "provider_item":
        // A server tool's call or result goes back as the block it came as; other schemes' items are left out.
        if (item.scheme === "anthropic") append("assistant", rawJson(item.json))
        return
      case "reasoning": {
        const data = item.data
        if (data?.provider !== "anthropic") return
        append(
          "assistant",
          "signature" in data ? { type: "thinking", thinking: item.text, signature: data.signature } : { type: "redacted_thinking", data: data.redacted }
        )
        return
      }
    }
  }
}

/** One block as JSON text, with the marked form (a cache breakpoint on it) printed when first asked for. */
interface BlockText {
  readonly role: Role
  readonly isResult: boolean
  readonly text: string
  readonly block: Block
  readonly markable: boolean
  marked?: string
}

/** One item's blocks as text; warnings are `anthropicMessages`' to report (they name positions). */
const itemBlocks = (context: ItemContext, _: undefined, items: ReadonlyArray<Item>, start: number): ReadonlyArray<BlockText> => {
  const out: Array<BlockText> = []
  itemAppender(context, [], (role, block, isResult = false) => {
    out.push({ role, isResult, text: flat(jsonBody(block)), block, markable: markable(block) })
  })(items[start] as Item, start)
  return out
}

/** A scheme's cache of each item's blocks (`fragment-cache.ts`). */
export type AnthropicFragments = FragmentCache<ReadonlyArray<BlockText>>

export const anthropicFragments = (): AnthropicFragments => new FragmentCache<ReadonlyArray<BlockText>>()

/**
 * `anthropicMessages(...).messages` as JSON text, from each item's cached blocks: the merging, the tool results
 * first and the breakpoints are decided here, over the blocks, so only new items are printed. Equal byte for byte
 * to printing `anthropicMessages` (a property test holds the two together); warnings come from that function.
 */
export const cachedAnthropicMessages = (
  fragments: AnthropicFragments,
  items: ReadonlyArray<Item>,
  names: ToolNameMap,
  cacheAfterItems = 0
): RawJson => {
  const context = plainContext(names)
  // One list of pieces and one join at the end; the open message's results and blocks are kept apart until it
  // closes (results go first), in two arrays reused for every message.
  const pieces: Array<string> = []
  const results: Array<string> = []
  const blocks: Array<string> = []
  let role: Role | undefined
  const close = (): void => {
    if (role === undefined) return
    pieces.push(pieces.length === 0 ? MESSAGE_OPEN[role] : `,${MESSAGE_OPEN[role]}`)
    for (let i = 0; i < results.length; i++) pieces.push(i === 0 ? "" : ",", results[i] as string)
    for (let i = 0; i < blocks.length; i++) pieces.push(i === 0 && results.length === 0 ? "" : ",", blocks[i] as string)
    pieces.push("]}")
    results.length = 0
    blocks.length = 0
  }
  // The block appended last, where it sits, and whether it carries a breakpoint already (no object per block:
  // this runs over every block of every request).
  let lastList: Array<string> | undefined
  let lastIndex = 0
  let lastBlock: BlockText | undefined
  let lastMarked = false

  const markCacheBreakpoint = (): void => {
    if (lastList === undefined || lastBlock === undefined || lastMarked || !lastBlock.markable) return
    lastBlock.marked ??= flat(jsonBody(marked(lastBlock.block)))
    lastList[lastIndex] = lastBlock.marked
    lastMarked = true
  }

  for (let position = 0; position < items.length; position++) {
    for (const block of fragments.fragment(items, position, position + 1, context, itemBlocks, undefined)) {
      if (block.role !== role) {
        close()
        role = block.role
      }
      lastList = block.isResult ? results : blocks
      lastIndex = lastList.push(block.text) - 1
      lastBlock = block
      lastMarked = false
    }
    if (position === cacheAfterItems - 1) markCacheBreakpoint()
  }
  if (cacheAfterItems > 0) markCacheBreakpoint()
  close()
  return rawJson(`[${pieces.join("")}]`)
}

/** How `jsonBody` prints the start of a `{ role, content }` message. */
const MESSAGE_OPEN: Readonly<Record<Role, string>> = { user: '{"role":"user","content":[', assistant: '{"role":"assistant","content":[' }
