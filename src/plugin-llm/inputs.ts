import type { ContentPart, Item, MessageItem } from "../llm/item.ts"
import { PluginLlmInputError } from "./errors.ts"

/** A chat message in the OpenAI shape, as plugins write them. */
export interface ChatMessage {
  readonly role: "system" | "developer" | "user" | "assistant"
  readonly content: string | ReadonlyArray<ChatContentPart>
}

/** One part of a message's content, OpenAI-style: text, or an image by URL (`https:` or `data:`). */
export type ChatContentPart =
  | { readonly type: "text"; readonly text: string }
  | { readonly type: "image_url"; readonly image_url: string | { readonly url: string } }

/** One block of `completeStructured`'s input. */
export type InputBlock =
  | { readonly type: "text"; readonly text: string }
  /** Bytes (or base64 text over HTTP); the mime type is sniffed from the bytes, `mimeType` is only a hint. */
  | { readonly type: "image"; readonly data: Uint8Array | ArrayBuffer | string; readonly mimeType?: string }
  /** An `https` URL the provider fetches, or a `data:` URL. */
  | { readonly type: "image"; readonly url: string }

/** Bounds of one call's input; each a documented limit (docs/security.md). */
export interface InputLimits {
  readonly maxImageBytes: number
  /** Messages or input blocks in one call. */
  readonly maxParts: number
  /** UTF-16 characters of text across the call. */
  readonly maxTextChars: number
}

/** Most messages (`complete`) or input blocks (`completeStructured`) one call may have: 256. */
export const DEFAULT_MAX_PARTS = 256
/** Most text one call may carry, in UTF-16 characters across all its messages or blocks: one million. */
export const DEFAULT_MAX_TEXT_CHARS = 1_000_000
const MAX_URL_CHARS = 4096

const fail = (field: string, message: string): never => {
  throw new PluginLlmInputError({ field, message })
}

/** The image formats every provider takes, by their magic bytes. */
export const sniffImageType = (bytes: Uint8Array): string | undefined => {
  const at = (i: number): number => bytes[i] ?? -1
  if (at(0) === 0x89 && at(1) === 0x50 && at(2) === 0x4e && at(3) === 0x47 && at(4) === 0x0d && at(5) === 0x0a && at(6) === 0x1a && at(7) === 0x0a) return "image/png"
  if (at(0) === 0xff && at(1) === 0xd8 && at(2) === 0xff) return "image/jpeg"
  const ascii = (from: number, to: number): string => String.fromCharCode(...bytes.subarray(from, to))
  if (bytes.length >= 6 && (ascii(0, 6) === "GIF87a" || ascii(0, 6) === "GIF89a")) return "image/gif"
  if (bytes.length >= 12 && ascii(0, 4) === "RIFF" && ascii(8, 12) === "WEBP") return "image/webp"
  return undefined
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/

const imageFromBytes = (bytes: Uint8Array, field: string, limits: InputLimits): ContentPart => {
  if (bytes.length === 0) fail(field, "image data is empty")
  if (bytes.length > limits.maxImageBytes) fail(field, `image is ${bytes.length} bytes, over the ${limits.maxImageBytes}-byte limit (llm.max_image_bytes)`)
  const mediaType = sniffImageType(bytes) ?? fail(field, "image data is not PNG, JPEG, GIF or WebP")
  return { type: "input_image", mediaType, data: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64") }
}

const imageFromBase64 = (text: string, field: string, limits: InputLimits): ContentPart => {
  const compact = text.replace(/\s+/g, "")
  if (compact === "") fail(field, "image data is empty")
  // Measured before decoding: an oversized string is refused without allocating its bytes.
  if (Math.floor((compact.length * 3) / 4) > limits.maxImageBytes + 2) {
    fail(field, `image is over the ${limits.maxImageBytes}-byte limit (llm.max_image_bytes)`)
  }
  if (compact.length % 4 !== 0 || !BASE64.test(compact)) fail(field, "image data is not valid base64")
  return imageFromBytes(Buffer.from(compact, "base64"), field, limits)
}

const imageFromUrl = (url: unknown, field: string, limits: InputLimits): ContentPart => {
  if (typeof url !== "string" || url.trim() === "") return fail(field, "image url must be a non-empty string")
  if (url.startsWith("data:")) {
    const match = /^data:([a-z0-9.+/-]*);base64,(.*)$/is.exec(url)
    return match === null ? fail(field, "a data: URL image must be base64 (data:<type>;base64,…)") : imageFromBase64(match[2] as string, field, limits)
  }
  if (url.length > MAX_URL_CHARS) fail(field, `image url is longer than ${MAX_URL_CHARS} characters`)
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return fail(field, "image url is not a valid URL")
  }
  if (parsed.protocol !== "https:") fail(field, `image url must be https (or a data: URL), got ${parsed.protocol.replace(/:$/, "")}`)
  if (parsed.username !== "" || parsed.password !== "") fail(field, "image url must not carry credentials")
  return { type: "input_image_url", url: parsed.href }
}

const textPart = (text: unknown, field: string, budget: { chars: number }, limits: InputLimits): ContentPart => {
  if (typeof text !== "string") return fail(field, "text must be a string")
  budget.chars += text.length
  if (budget.chars > limits.maxTextChars) fail(field, `the call's text is over ${limits.maxTextChars} characters`)
  return { type: "input_text", text }
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value)

/** `completeStructured`'s input blocks as the user message's parts. */
export const inputParts = (input: unknown, limits: InputLimits): { readonly parts: ReadonlyArray<ContentPart>; readonly images: number } => {
  if (!Array.isArray(input)) return fail("input", "input must be a list of blocks ({type: \"text\"} or {type: \"image\"})")
  if (input.length === 0) fail("input", "input has no blocks")
  if (input.length > limits.maxParts) fail("input", `input has more than ${limits.maxParts} blocks`)
  const budget = { chars: 0 }
  let images = 0
  const parts = input.map((block: unknown, i): ContentPart => {
    const field = `input[${i}]`
    if (!isObject(block)) return fail(field, "a block must be an object")
    if (block["type"] === "text") {
      if (typeof block["text"] === "string" && block["text"].trim() === "") fail(`${field}.text`, "text block is empty")
      return textPart(block["text"], `${field}.text`, budget, limits)
    }
    if (block["type"] === "image") {
      images++
      const data = block["data"]
      if (data !== undefined && block["url"] !== undefined) fail(field, "an image block has either data or url, not both")
      if (data instanceof Uint8Array) return imageFromBytes(data, `${field}.data`, limits)
      if (data instanceof ArrayBuffer) return imageFromBytes(new Uint8Array(data), `${field}.data`, limits)
      if (typeof data === "string") return imageFromBase64(data, `${field}.data`, limits)
      if (data !== undefined && data !== null) fail(`${field}.data`, "image data must be bytes or base64 text")
      if (block["url"] === undefined) fail(field, "image block has neither data nor url")
      return imageFromUrl(block["url"], `${field}.url`, limits)
    }
    return fail(`${field}.type`, `unknown block type ${JSON.stringify(String(block["type"])).slice(0, 60)}; expected "text" or "image"`)
  })
  return { parts, images }
}

const ROLES = new Set(["system", "developer", "user", "assistant"])

/**
 * OpenAI-shaped messages as a system prompt and neutral items: system and developer messages join the system
 * prompt (in order); user messages may carry images; assistant messages are text (few-shot examples).
 */
export const chatItems = (
  messages: unknown,
  limits: InputLimits
): { readonly systemPrompt?: string; readonly items: ReadonlyArray<Item>; readonly images: number } => {
  if (!Array.isArray(messages)) return fail("messages", "messages must be a list of {role, content}")
  if (messages.length === 0) fail("messages", "messages is empty")
  if (messages.length > limits.maxParts) fail("messages", `more than ${limits.maxParts} messages`)
  const budget = { chars: 0 }
  const system: Array<string> = []
  const items: Array<MessageItem> = []
  let images = 0
  messages.forEach((message: unknown, i) => {
    const field = `messages[${i}]`
    if (!isObject(message)) return fail(field, "a message must be an object")
    const role = message["role"]
    if (typeof role !== "string" || !ROLES.has(role)) return fail(`${field}.role`, `role must be system, developer, user or assistant, got ${JSON.stringify(String(role)).slice(0, 40)}`)
    const content = message["content"]
    const parts: Array<ContentPart> = []
    if (typeof content === "string") parts.push(textPart(content, `${field}.content`, budget, limits))
    else if (Array.isArray(content)) {
      content.forEach((part: unknown, j) => {
        const at = `${field}.content[${j}]`
        if (!isObject(part)) return fail(at, "a content part must be an object")
        if (part["type"] === "text") return parts.push(textPart(part["text"], `${at}.text`, budget, limits))
        if (part["type"] === "image_url") {
          if (role !== "user") fail(at, "only user messages can carry images")
          images++
          const ref = part["image_url"]
          return parts.push(imageFromUrl(isObject(ref) ? ref["url"] : ref, `${at}.image_url`, limits))
        }
        return fail(`${at}.type`, `unknown content part type ${JSON.stringify(String(part["type"])).slice(0, 60)}`)
      })
    } else return fail(`${field}.content`, "content must be a string or a list of parts")
    if (role === "system" || role === "developer") {
      system.push(parts.map((p) => (p.type === "input_text" ? p.text : "")).join(""))
      return
    }
    items.push(
      role === "user"
        ? { type: "message", role: "user", content: parts }
        : { type: "message", role: "assistant", content: parts.map((p) => ({ type: "output_text" as const, text: p.type === "input_text" ? p.text : "" })) }
    )
  })
  if (items.length === 0) fail("messages", "messages has no user or assistant message")
  const prompt = system.filter((s) => s !== "").join("\n\n")
  return { ...(prompt === "" ? {} : { systemPrompt: prompt }), items, images }
}
