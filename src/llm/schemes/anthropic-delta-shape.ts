import type { AnthropicStreamEvent } from "./anthropic-wire.ts"
import { indexAt, stringLiteral } from "./json-shapes.ts"

const HEAD = '{"type":"content_block_delta","index":'
const DELTA = ',"delta":{"type":"'
const TAIL = "}}"

/** The delta kinds that stream a string, with the key that carries it, as Anthropic writes them. */
const KINDS = [
  { type: "text_delta", key: "text", head: 'text_delta","text":' },
  { type: "input_json_delta", key: "partial_json", head: 'input_json_delta","partial_json":' },
  { type: "thinking_delta", key: "thinking", head: 'thinking_delta","thinking":' }
] as const

/**
 * A `content_block_delta` carrying text, argument JSON or thinking, recognised in the compact form Anthropic
 * sends it in (`{"type":"content_block_delta","index":N,"delta":{"type":"text_delta","text":"…"}}`), as
 * `JSON.parse` would give it; undefined for anything else, which is then parsed in full (see json-shapes.ts).
 */
export const anthropicDeltaShape = (data: string): AnthropicStreamEvent | undefined => {
  if (!data.startsWith(HEAD) || !data.endsWith(TAIL)) return undefined
  const index = indexAt(data, HEAD.length)
  if (index === undefined || !data.startsWith(DELTA, index.end)) return undefined
  const at = index.end + DELTA.length
  for (const kind of KINDS) {
    if (!data.startsWith(kind.head, at)) continue
    const value = stringLiteral(data, at + kind.head.length, data.length - TAIL.length)
    if (value === undefined) return undefined
    const delta =
      kind.type === "text_delta"
        ? { type: kind.type, text: value }
        : kind.type === "input_json_delta"
          ? { type: kind.type, partial_json: value }
          : { type: kind.type, thinking: value }
    return { type: "content_block_delta", index: index.value, delta }
  }
  return undefined
}
