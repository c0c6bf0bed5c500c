/**
 * The neutral conversation history, shaped after the Open Responses item model: tool calls and reasoning are
 * items of their own, not fields hidden inside a message. Every scheme converts these to and from its wire
 * format; nothing provider-specific lives here except the opaque reasoning data a provider needs back.
 */

export type ContentPart =
  | { readonly type: "input_text"; readonly text: string }
  | { readonly type: "output_text"; readonly text: string }
  | { readonly type: "refusal"; readonly text: string }
  | { readonly type: "input_image"; readonly mediaType: string; readonly data: string }

export interface MessageItem {
  readonly type: "message"
  readonly role: "user" | "assistant"
  readonly content: ReadonlyArray<ContentPart>
}

export interface FunctionCallItem {
  readonly type: "function_call"
  readonly callId: string
  readonly name: string
  /** The raw JSON argument text exactly as the model produced it. */
  readonly arguments: string
  /** Gemini attaches a thought signature to function-call parts; it must be sent back unchanged. */
  readonly thoughtSignature?: string
}

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

export interface ReasoningItem {
  readonly type: "reasoning"
  /** Visible reasoning text or summary (may be empty when the provider only returns encrypted content). */
  readonly text: string
  readonly data?: ReasoningData
}

export type Item = MessageItem | FunctionCallItem | FunctionCallOutputItem | ReasoningItem

export const Item = {
  userText: (text: string): MessageItem => ({ type: "message", role: "user", content: [{ type: "input_text", text }] }),
  assistantText: (text: string): MessageItem => ({
    type: "message",
    role: "assistant",
    content: [{ type: "output_text", text }]
  }),
  functionCall: (callId: string, name: string, args: string): FunctionCallItem => ({
    type: "function_call",
    callId,
    name,
    arguments: args
  }),
  functionCallOutput: (callId: string, output: string, isError = false): FunctionCallOutputItem => ({
    type: "function_call_output",
    callId,
    output,
    isError
  })
} as const
