import type { ToolNameMap } from "../../schema/provider-tools.ts"
import type { ContentPart, Item } from "../item.ts"
import { type JsonBodyValue, type RawJson, rawJson } from "../json-body.ts"
import type { ConfigWarning } from "../scheme.ts"
import { quote } from "../../schema/quote.ts"
import { argumentsFallbackReason, argumentsObject } from "./arguments-object.ts"

/** A block this library builds, or a provider item's block spliced in as the provider sent it (decision 0025). */
type Block = { readonly [key: string]: JsonBodyValue } | RawJson
type Role = "user" | "assistant"

const isRaw = (block: Block): block is RawJson => block._tag === "RawJson" && typeof block.text === "string"

const warning = (setting: string, message: string): ConfigWarning => ({ _tag: "ConfigWarning", scheme: "anthropic", setting, message })

/** The API rejects empty text blocks, so empty parts are left out (they carry nothing). */
const contentBlock = (part: ContentPart): Block | undefined => {
  if (part.type === "input_image") {
    return { type: "image", source: { type: "base64", media_type: part.mediaType, data: part.data } }
  }
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
  const callIds = new Set<string>()
  let last: { readonly list: Array<Block>; readonly index: number } | undefined

  const append = (role: Role, block: Block, isResult = false): void => {
    let turn = turns.at(-1)
    if (turn === undefined || turn.role !== role) {
      turn = { role, results: [], blocks: [] }
      turns.push(turn)
    }
    const list = isResult ? turn.results : turn.blocks
    last = { list, index: list.push(block) - 1 }
  }

  /** Puts a cache breakpoint on the block appended last, unless the API refuses one there (thinking blocks). */
  const markCacheBreakpoint = (): void => {
    const block = last?.list[last.index]
    if (last === undefined || block === undefined) return
    if (isRaw(block)) {
      // A provider block is a non-empty object text; the marker is appended as its last field.
      last.list[last.index] = rawJson(`${block.text.slice(0, -1)},"cache_control":{"type":"ephemeral"}}`)
      return
    }
    if ("cache_control" in block) return
    if (block.type === "thinking" || block.type === "redacted_thinking") return
    last.list[last.index] = { ...block, cache_control: { type: "ephemeral" } }
  }

  items.forEach((item, position) => {
    appendItem(item, position)
    // The end of the stable prefix: everything up to it (tools, system, locked history) is written once.
    if (position === cacheAfterItems - 1) markCacheBreakpoint()
  })
  // And the end of the conversation, which moves every turn: Anthropic reads the longest cached prefix, so each
  // request reuses what the previous one wrote (its documented multi-turn pattern). With the system prompt's that
  // is three of the four breakpoints allowed. The marker sits after the locked prefix, whose bytes never change.
  if (cacheAfterItems > 0) markCacheBreakpoint()

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
        callIds.add(item.callId)
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

  return {
    messages: turns
      .map((turn) => ({ role: turn.role, content: [...turn.results, ...turn.blocks] }))
      .filter((message) => message.content.length > 0),
    warnings
  }
}
