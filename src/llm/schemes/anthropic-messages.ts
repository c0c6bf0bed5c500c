import { anchorShapes } from "../shape-anchor.ts"
import { buildToolNameMap } from "../../schema/tool-names.ts"
import type { ToolNameMap } from "../../schema/provider-tools.ts"
import { type CallLedger, FragmentCache, flat, type ItemContext, plainContext } from "../fragment-cache.ts"
import { type HistoryFold, PrefixSnapshots, ResumableContext, resumedPieces, type SealedCalls } from "../prefix-snapshots.ts"
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

/**
 * `jsonBody(block)` for the blocks this module builds, without the general printer: each block kind is made by
 * one object literal above, so its keys and their order are known, and its strings are quoted exactly as
 * `jsonBody` quotes them (`JSON.stringify`). A call's `input` is the arguments' verbatim text (`RawJson`) or `{}`.
 * Images, reasoning and provider blocks (rare, or text already) take `jsonBody`. Every new history item is
 * printed once, so this is on the turn loop's path; the property tests hold the cached bytes, printed here, to
 * the uncached ones, printed whole by `jsonBody` (decision 0085).
 */
const blockJson = (block: Block): string => {
  if (isRaw(block)) return block.text
  // A caller's plain item may hold anything where a string belongs: then the general printer decides.
  switch (block.type) {
    case "text":
      if (typeof block.text === "string") return `{"type":"text","text":${JSON.stringify(block.text)}}`
      break
    case "tool_use": {
      const input = block.input
      if (typeof block.id === "string" && typeof block.name === "string" && typeof input === "object" && input !== null && !Array.isArray(input)) {
        const inputText = isRaw(input as Block) ? (input as RawJson).text : jsonBody(input)
        return `{"type":"tool_use","id":${JSON.stringify(block.id)},"name":${JSON.stringify(block.name)},"input":${inputText}}`
      }
      break
    }
    case "tool_result":
      if (typeof block.tool_use_id === "string" && typeof block.content === "string" && (block.is_error === undefined || block.is_error === true)) {
        const error = block.is_error === true ? ',"is_error":true' : ""
        return `{"type":"tool_result","tool_use_id":${JSON.stringify(block.tool_use_id)},"content":${JSON.stringify(block.content)}${error}}`
      }
      break
  }
  return jsonBody(block)
}

/** One item's blocks as text; warnings are `anthropicMessages`' to report (they name positions). */
const itemBlocks = (context: ItemContext, _: undefined, items: ReadonlyArray<Item>, start: number): ReadonlyArray<BlockText> => {
  const out: Array<BlockText> = []
  itemAppender(context, [], (role, block, isResult = false) => {
    out.push({ role, isResult, text: flat(blockJson(block)), block, markable: markable(block) })
  })(items[start] as Item, start)
  return out
}

/** A scheme's cache of each item's blocks (`fragment-cache.ts`). */
export type AnthropicFragments = FragmentCache<ReadonlyArray<BlockText>>

export const anthropicFragments = (): AnthropicFragments => new FragmentCache<ReadonlyArray<BlockText>>()

interface AnthropicState {
  readonly calls: SealedCalls
  readonly closed: string
  readonly appended: number
  /** The message still open at the end of the prefix: later items of its role join it. */
  readonly role: Role | undefined
  readonly results: ReadonlyArray<string>
  readonly blocks: ReadonlyArray<string>
  /** The block appended last (where a breakpoint would go), and whether it carries one already. */
  readonly last: BlockText | undefined
  readonly lastIsResult: boolean
  readonly lastMarked: boolean
}

/** The marked form of a block, printed the first time a breakpoint lands on it and kept next to it. */
const markedText = (block: BlockText): string => (block.marked ??= flat(jsonBody(marked(block.block))))

/**
 * `anthropicMessages(...).messages` as a fold over each item's cached blocks (`prefix-snapshots.ts`): the merging,
 * the tool results first and the breakpoints are decided here, over the blocks, so only new items are printed. The
 * breakpoint after the locked prefix is put where the fold passes it; the one at the end of the history moves every
 * request, so `text` puts it on the open message's last block without changing the fold.
 */
class AnthropicFold implements HistoryFold<AnthropicState> {
  readonly #context: ResumableContext
  #closed: string
  #appended: number
  #role: Role | undefined
  // The open message's results and blocks are kept apart until it closes (results go first).
  #results: Array<string>
  #blocks: Array<string>
  #last: BlockText | undefined
  #lastIsResult: boolean
  #lastMarked: boolean
  constructor(
    readonly fragments: AnthropicFragments,
    readonly cacheAfterItems: number,
    names: ToolNameMap,
    state?: AnthropicState
  ) {
    this.#context = new ResumableContext(names, state?.calls)
    this.#closed = state?.closed ?? ""
    this.#appended = state === undefined ? 0 : resumedPieces(state.closed, state.appended)
    this.#role = state?.role
    this.#results = state === undefined ? [] : [...state.results]
    this.#blocks = state === undefined ? [] : [...state.blocks]
    this.#last = state?.last
    this.#lastIsResult = state?.lastIsResult ?? false
    this.#lastMarked = state?.lastMarked ?? false
  }
  #close(): void {
    if (this.#role === undefined) return
    const message = openMessage(this.#role, this.#results, this.#blocks)
    this.#closed = this.#closed === "" ? message : `${this.#closed},${message}`
    this.#appended++
    // Fresh arrays rather than `length = 0`: truncating through the length setter is a slow builtin call.
    if (this.#results.length > 0) this.#results = []
    if (this.#blocks.length > 0) this.#blocks = []
  }
  add(items: ReadonlyArray<Item>, position: number): void {
    for (const block of this.fragments.fragment(items, position, position + 1, this.#context, itemBlocks, undefined)) {
      if (block.role !== this.#role) {
        this.#close()
        this.#role = block.role
      }
      ;(block.isResult ? this.#results : this.#blocks).push(block.text)
      this.#last = block
      this.#lastIsResult = block.isResult
      this.#lastMarked = false
    }
    // The end of the stable prefix: everything up to it (tools, system, locked history) is written once.
    if (position === this.cacheAfterItems - 1 && this.#markable()) {
      const list = this.#lastIsResult ? this.#results : this.#blocks
      list[list.length - 1] = markedText(this.#last as BlockText)
      this.#lastMarked = true
    }
  }
  /** Whether a breakpoint may go on the block appended last: it exists, is not marked yet, and allows one. */
  #markable(): boolean {
    return this.#last !== undefined && !this.#lastMarked && this.#last.markable
  }
  capture(): AnthropicState {
    return {
      calls: this.#context.seal(),
      closed: this.#closed,
      appended: this.#appended,
      role: this.#role,
      results: [...this.#results],
      blocks: [...this.#blocks],
      last: this.#last,
      lastIsResult: this.#lastIsResult,
      lastMarked: this.#lastMarked
    }
  }
  text(): string {
    if (this.#role === undefined) return `[${this.#closed}]`
    let results: ReadonlyArray<string> = this.#results
    let blocks: ReadonlyArray<string> = this.#blocks
    // And the end of the conversation, which moves every turn: Anthropic reads the longest cached prefix, so each
    // request reuses what the previous one wrote (see `anthropicMessages`). The open message's last block is the
    // history's last block; it is marked in a copy, so the fold can go on from the unmarked state.
    if (this.cacheAfterItems > 0 && this.#markable()) {
      const copy = [...(this.#lastIsResult ? results : blocks)]
      copy[copy.length - 1] = markedText(this.#last as BlockText)
      if (this.#lastIsResult) results = copy
      else blocks = copy
    }
    const open = openMessage(this.#role, results, blocks)
    return `[${this.#closed === "" ? open : `${this.#closed},${open}`}]`
  }
}

/** A `{ role, content }` message from its blocks' text, tool results first, as `jsonBody` prints it. */
const openMessage = (role: Role, results: ReadonlyArray<string>, blocks: ReadonlyArray<string>): string => {
  const content = results.length === 0 ? blocks.join(",") : blocks.length === 0 ? results.join(",") : `${results.join(",")},${blocks.join(",")}`
  return `${MESSAGE_OPEN[role]}${content}]}`
}

/** A scheme instance's kept folds (`prefix-snapshots.ts`). */
export type AnthropicSnapshots = PrefixSnapshots<AnthropicState>

export const anthropicSnapshots = (): AnthropicSnapshots => new PrefixSnapshots<AnthropicState>()

/**
 * `anthropicMessages(...).messages` as JSON text, resumed from the longest prefix an earlier request folded.
 * Equal byte for byte to printing `anthropicMessages` (a property test holds the two together); warnings come
 * from that function.
 */
export const cachedAnthropicMessages = (
  fragments: AnthropicFragments,
  snapshots: AnthropicSnapshots,
  items: ReadonlyArray<Item>,
  names: ToolNameMap,
  cacheAfterItems = 0
): RawJson =>
  rawJson(
    snapshots.assemble(
      items,
      names,
      cacheAfterItems,
      () => new AnthropicFold(fragments, cacheAfterItems, names),
      (state) => new AnthropicFold(fragments, cacheAfterItems, names, state)
    )
  )

/** How `jsonBody` prints the start of a `{ role, content }` message. */
const MESSAGE_OPEN: Readonly<Record<Role, string>> = { user: '{"role":"user","content":[', assistant: '{"role":"assistant","content":[' }

// A fold is made per request and none is alive between runs: one kept so V8 keeps its shapes (`shape-anchor.ts`).
anchorShapes(new AnthropicFold(anthropicFragments(), 0, buildToolNameMap([], "anthropic")))
