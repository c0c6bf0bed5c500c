import type { Item } from "../llm/item.ts"

/**
 * The conversation as the GenAI conventions' message JSON (`gen_ai.input.messages` / `gen_ai.output.messages`):
 * `{ role, parts: [{ type: "text" | "reasoning" | "tool_call" | "tool_call_response", … }] }`. Only built when
 * the application opted in to content, since it holds everything the user and the model said.
 */
type Part =
  | { readonly type: "text"; readonly content: string }
  | { readonly type: "reasoning"; readonly content: string }
  | { readonly type: "tool_call"; readonly id: string; readonly name: string; readonly arguments: string }
  | { readonly type: "tool_call_response"; readonly id: string; readonly response: string }
  | { readonly type: "uri"; readonly modality: "image"; readonly uri: string }
  | { readonly type: string }

interface Message {
  readonly role: "user" | "assistant" | "tool"
  readonly parts: Array<Part>
  readonly finish_reason?: string
}

const itemMessage = (item: Item): Message => {
  switch (item.type) {
    case "message":
      return {
        role: item.role,
        parts: item.content.map((part) =>
          part.type === "input_image"
            ? { type: "blob", mime_type: part.mediaType }
            : part.type === "input_image_url"
              ? { type: "uri", modality: "image", uri: part.url }
              : { type: "text", content: part.text }
        )
      }
    case "function_call":
      return { role: "assistant", parts: [{ type: "tool_call", id: item.callId, name: item.name, arguments: item.arguments }] }
    case "function_call_output":
      return { role: "tool", parts: [{ type: "tool_call_response", id: item.callId, response: item.output }] }
    case "reasoning":
      return { role: "assistant", parts: [{ type: "reasoning", content: item.text }] }
    case "provider_item":
      return { role: "assistant", parts: [{ type: item.kind }] }
  }
}

/** Consecutive items of one role become one message, as a provider would see them. */
export const messagesJson = (items: ReadonlyArray<Item>, finishReason?: string): string => {
  const messages: Array<Message> = []
  for (const item of items) {
    const message = itemMessage(item)
    const last = messages.at(-1)
    if (last !== undefined && last.role === message.role) last.parts.push(...message.parts)
    else messages.push({ role: message.role, parts: [...message.parts] })
  }
  if (finishReason !== undefined && messages.length > 0) {
    const last = messages[messages.length - 1] as Message
    messages[messages.length - 1] = { ...last, finish_reason: finishReason }
  }
  return JSON.stringify(messages)
}

export const systemInstructionsJson = (systemPrompt: string): string => JSON.stringify([{ type: "text", content: systemPrompt }])
