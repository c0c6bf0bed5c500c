import { compactObject } from "./json-shapes.ts"
import type { ShapeStep } from "./json-shapes.ts"
import type { JsonRecord } from "./openai-wire.ts"

/**
 * The events that make up most of an OpenAI stream, recognised in the compact form OpenAI sends them in, as
 * `JSON.parse` would give them; undefined for anything else (another order, another server's fields), which is
 * then parsed in full (see json-shapes.ts, decision 0076).
 */

const constant = (key: string, value: string): ShapeStep => ({ text: `"${key}":${JSON.stringify(value)}`, members: () => ({ [key]: value }) })

const RESPONSES_TEXT: ReadonlyArray<ShapeStep> = [
  constant("type", "response.output_text.delta"),
  { key: "item_id", kind: "string" },
  { key: "output_index", kind: "index" },
  { key: "content_index", kind: "index" },
  { key: "delta", kind: "string" }
]

const RESPONSES_ARGUMENTS: ReadonlyArray<ShapeStep> = [
  constant("type", "response.function_call_arguments.delta"),
  { key: "item_id", kind: "string" },
  { key: "output_index", kind: "index" },
  { key: "delta", kind: "string" }
]

/** `response.output_text.delta` and `response.function_call_arguments.delta`, as OpenAI writes them. */
export const responsesDeltaShape = (data: string): JsonRecord | undefined =>
  compactObject(data, RESPONSES_TEXT) ?? compactObject(data, RESPONSES_ARGUMENTS)

const CHAT_HEAD: ReadonlyArray<ShapeStep> = [
  { key: "id", kind: "string" },
  constant("object", "chat.completion.chunk"),
  { key: "created", kind: "index" },
  { key: "model", kind: "string" },
  { key: "service_tier", kind: "string" },
  { key: "system_fingerprint", kind: "string" }
]

const CHAT_TEXT: ReadonlyArray<ShapeStep> = [
  ...CHAT_HEAD,
  {
    text: '"choices":[{"index":0,"delta":{"content":{}},"logprobs":null,"finish_reason":null}]',
    members: (content) => ({ choices: [{ index: 0, delta: { content }, logprobs: null, finish_reason: null }] })
  }
]

const CHAT_ARGUMENTS = (index: number): ReadonlyArray<ShapeStep> => [
  ...CHAT_HEAD,
  {
    text: `"choices":[{"index":0,"delta":{"tool_calls":[{"index":${index},"function":{"arguments":{}}}]},"logprobs":null,"finish_reason":null}]`,
    members: (args) => ({ choices: [{ index: 0, delta: { tool_calls: [{ index, function: { arguments: args } }] }, logprobs: null, finish_reason: null }] })
  }
]

/** Argument deltas name their call's index in the choices text; shapes for the first few calls are kept ready. */
const CHAT_ARGUMENT_SHAPES = Array.from({ length: 8 }, (_, index) => CHAT_ARGUMENTS(index))
const CALL_INDEX = /"tool_calls":\[\{"index":([0-7]),"function":\{"arguments":/

/** A Chat chunk carrying a content delta or one call's argument delta, as OpenAI writes it. */
export const chatDeltaShape = (data: string): JsonRecord | undefined => {
  const text = compactObject(data, CHAT_TEXT)
  if (text !== undefined) return text
  const call = CALL_INDEX.exec(data)
  if (call === null) return undefined
  return compactObject(data, CHAT_ARGUMENT_SHAPES[Number(call[1])] as ReadonlyArray<ShapeStep>)
}
