/**
 * The neutral conversation history, shaped after the Open Responses item model: tool calls and reasoning are
 * items of their own, not fields hidden inside a message. Every scheme converts these to and from its wire
 * format; nothing provider-specific lives here except the opaque reasoning data a provider needs back.
 */

/** One piece of a message: text the user sent, text or a refusal the model produced, or an image (base64 `data`). */
export type ContentPart =
  | { readonly type: "input_text"; readonly text: string }
  | { readonly type: "output_text"; readonly text: string }
  | { readonly type: "refusal"; readonly text: string }
  | { readonly type: "input_image"; readonly mediaType: string; readonly data: string }
  /** An image the provider fetches itself (an `https` URL); the bytes never pass through this process. */
  | { readonly type: "input_image_url"; readonly url: string }

/** A user or assistant message: its content parts in order. */
export interface MessageItem {
  readonly type: "message"
  readonly role: "user" | "assistant"
  readonly content: ReadonlyArray<ContentPart>
}

/**
 * A tool call the model made. `callId` pairs it with its `FunctionCallOutputItem`; `arguments` is the JSON text the model sent, as sent.
 */
export interface FunctionCallItem {
  readonly type: "function_call"
  readonly callId: string
  readonly name: string
  /** The raw JSON argument text exactly as the model produced it. */
  readonly arguments: string
  /** Gemini attaches a thought signature to function-call parts; it must be sent back unchanged. */
  readonly thoughtSignature?: string
}

/**
 * The result of one tool call, sent back to the model. `isError` marks a failed call (each provider marks it its own way, decision 0009).
 */
export interface FunctionCallOutputItem {
  readonly type: "function_call_output"
  readonly callId: string
  readonly output: string
  readonly isError: boolean
}

/** The opaque data a provider needs to accept its own reasoning back. Only sent to the provider it came from. */
export type ReasoningData =
  | { readonly provider: "anthropic"; readonly signature: string }
  | { readonly provider: "anthropic"; readonly redacted: string }
  | { readonly provider: "openai"; readonly id: string; readonly encryptedContent?: string }
  | { readonly provider: "gemini"; readonly thoughtSignature: string }

/**
 * Reasoning the model did before answering: its visible text, and the opaque `data` its provider needs back to continue from it.
 */
export interface ReasoningItem {
  readonly type: "reasoning"
  /** Visible reasoning text or summary (may be empty when the provider only returns encrypted content). */
  readonly text: string
  readonly data?: ReasoningData
}

/** The wire formats a provider item can come from (Chat Completions has no output kinds this library leaves unmodelled). */
export type ProviderItemScheme = "openai-responses" | "anthropic" | "gemini"

/**
 * Output of a kind this library does not model (decision 0025): a provider-hosted tool's call or result (web
 * search, web fetch, code execution, a server-side MCP call), an OpenAI custom-tool or tool-search call, a Gemini
 * code part. It is kept instead of dropped: `json` is the provider's own object (a Responses output item, an
 * Anthropic content block with its streamed input assembled, a Gemini part) as JSON text, checked for depth and
 * size when it arrived. It goes back verbatim, and only to the scheme it came from, like reasoning data; any
 * other scheme leaves it out with a `ConfigWarning`.
 */
export interface ProviderItem {
  readonly type: "provider_item"
  /** The wire format `json` is written in; the only scheme that sends it back. */
  readonly scheme: ProviderItemScheme
  /** The provider's name for the object (`web_search_call`, `server_tool_use`, `executableCode`, …), for display and filtering. */
  readonly kind: string
  /** The provider's object as compact JSON text; `JSON.parse` it to read it. */
  readonly json: string
}

/**
 * One entry of the neutral conversation history, the same for every provider. Build the common ones with the
 * constructors of the same name (`Item.userText`, `Item.functionCallOutput`…).
 */
export type Item = MessageItem | FunctionCallItem | FunctionCallOutputItem | ReasoningItem | ProviderItem

/**
 * Constructors for history items.
 *
 * @example
 * ```ts
 * const history = [Item.userText("What is 2 + 3?"), Item.functionCall("call_1", "add", '{"a":2,"b":3}'), Item.functionCallOutput("call_1", "5")]
 * ```
 */
export const Item = {
  /** A user message with one text part. */
  userText: (text: string): MessageItem => ({ type: "message", role: "user", content: [{ type: "input_text", text }] }),
  /** An assistant message with one text part. */
  assistantText: (text: string): MessageItem => ({
    type: "message",
    role: "assistant",
    content: [{ type: "output_text", text }]
  }),
  /** A tool call `name(args)` under `callId`; `args` is JSON text. */
  functionCall: (callId: string, name: string, args: string): FunctionCallItem => ({
    type: "function_call",
    callId,
    name,
    arguments: args
  }),
  /** The result of the call `callId`; `isError` marks a failed call. */
  functionCallOutput: (callId: string, output: string, isError = false): FunctionCallOutputItem => ({
    type: "function_call_output",
    callId,
    output,
    isError
  })
} as const
