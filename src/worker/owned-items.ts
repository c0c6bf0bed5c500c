import { memoOf, stampItem } from "../llm/item-memo.ts"
import type { ContentPart, Item, ReasoningData } from "../llm/item.ts"
import { quote } from "../schema/quote.ts"
import { providerItemJsonProblem } from "../llm/provider-item.ts"

/**
 * Items the worker owns: deep, frozen copies. Everything that enters the history goes through `ownItem`, so a
 * hook or caller holding an item (from `history()`, a hook input, a run result or an event) cannot rewrite the
 * stored history by editing it, and a hostile object (getters, Proxies) is read exactly once, here, where its
 * failure is attributed to whoever supplied it. Items already owned pass through untouched, so a history that
 * is re-owned costs one private-field check per item: an owned item carries the encoders' memo (`item-memo.ts`),
 * which nothing outside this library can add to an object.
 */

/** Something handed to the worker as a history item is not one. A `TypeError`, named for what it is. */
export class InvalidItem extends TypeError {
  declare readonly _tag: "InvalidItem"
  declare readonly name: "InvalidItem"
}
// On the prototype, not as fields: the stack's first line is written while the constructor runs.
Object.defineProperty(InvalidItem.prototype, "name", { value: "InvalidItem", writable: true, configurable: true })
Object.defineProperty(InvalidItem.prototype, "_tag", { value: "InvalidItem", configurable: true })

const fail = (what: string): never => {
  throw new InvalidItem(`not a valid history item: ${what}`)
}

const str = (value: unknown, field: string): string => (typeof value === "string" ? value : fail(`${field} must be a string`))

const optionalStr = (value: unknown, field: string): string | undefined => (value === undefined ? undefined : str(value, field))

const freezeArray = <A>(array: Array<A>): ReadonlyArray<A> => Object.freeze(array)

const part = (value: unknown): ContentPart => {
  if (typeof value !== "object" || value === null) return fail("a content part must be an object")
  const p = value as Record<string, unknown>
  const type = p["type"]
  if (type === "input_text" || type === "output_text" || type === "refusal") {
    return Object.freeze({ type, text: str(p["text"], `${type}.text`) })
  }
  if (type === "input_image") {
    return Object.freeze({ type, mediaType: str(p["mediaType"], "input_image.mediaType"), data: str(p["data"], "input_image.data") })
  }
  if (type === "input_image_url") return Object.freeze({ type, url: str(p["url"], "input_image_url.url") })
  return fail(`unknown content part type ${quote(String(typeof type === "string" ? type : typeof type))}`)
}

const reasoningData = (value: unknown): ReasoningData => {
  if (typeof value !== "object" || value === null) return fail("reasoning data must be an object")
  const d = value as Record<string, unknown>
  const provider = d["provider"]
  if (provider === "anthropic") {
    if (d["signature"] !== undefined) return Object.freeze({ provider, signature: str(d["signature"], "data.signature") })
    return Object.freeze({ provider, redacted: str(d["redacted"], "data.redacted") })
  }
  if (provider === "openai") {
    const encryptedContent = optionalStr(d["encryptedContent"], "data.encryptedContent")
    return Object.freeze({ provider, id: str(d["id"], "data.id"), ...(encryptedContent === undefined ? {} : { encryptedContent }) })
  }
  if (provider === "gemini") return Object.freeze({ provider, thoughtSignature: str(d["thoughtSignature"], "data.thoughtSignature") })
  return fail("unknown reasoning data provider")
}

const copy = (value: unknown): Item => {
  if (typeof value !== "object" || value === null) return fail(`expected an object, got ${value === null ? "null" : typeof value}`)
  const item = value as Record<string, unknown>
  const type = item["type"]
  switch (type) {
    case "message": {
      const role = item["role"]
      if (role !== "user" && role !== "assistant") return fail('a message role must be "user" or "assistant"')
      const content = item["content"]
      if (!Array.isArray(content)) return fail("message content must be an array")
      const parts: Array<ContentPart> = []
      for (let i = 0; i < content.length; i++) parts.push(part(content[i]))
      return { type, role, content: freezeArray(parts) }
    }
    case "function_call": {
      const thoughtSignature = optionalStr(item["thoughtSignature"], "thoughtSignature")
      return {
        type,
        callId: str(item["callId"], "callId"),
        name: str(item["name"], "name"),
        arguments: str(item["arguments"], "arguments"),
        ...(thoughtSignature === undefined ? {} : { thoughtSignature })
      }
    }
    case "function_call_output":
      return { type, callId: str(item["callId"], "callId"), output: str(item["output"], "output"), isError: item["isError"] === true }
    case "reasoning": {
      const data = item["data"]
      return { type, text: str(item["text"], "reasoning text"), ...(data === undefined ? {} : { data: reasoningData(data) }) }
    }
    case "provider_item": {
      const scheme = item["scheme"]
      if (scheme !== "openai-responses" && scheme !== "anthropic" && scheme !== "gemini") return fail("unknown provider item scheme")
      const json = str(item["json"], "provider item json")
      // Encoders splice this text into request bodies unchanged, so it must be one bounded JSON object.
      const problem = providerItemJsonProblem(json)
      if (problem !== undefined) return fail(`provider item ${problem}`)
      return { type, scheme, kind: str(item["kind"], "provider item kind"), json }
    }
    default:
      return fail(`unknown item type ${typeof type === "string" ? quote(type) : typeof type}`)
  }
}

/** A frozen deep copy of `value` (or `value` itself when already owned). Throws `InvalidItem` for non-items. */
export const ownItem = (value: unknown): Item => {
  if (typeof value === "object" && value !== null && memoOf(value) !== undefined) return value as Item
  const item = copy(value)
  // A deep-frozen copy of plain data (every kind copy() makes must stay so): the request encoders may keep its
  // wire text without walking it again, in the memo the stamp gives it.
  stampItem(item)
  return Object.freeze(item)
}

/** `ownItem` over an array-like that plain JavaScript may have handed in. */
export const ownItems = (values: unknown): Array<Item> => {
  if (!Array.isArray(values)) return fail("expected an array of items")
  const items: Array<Item> = []
  for (let i = 0; i < values.length; i++) items.push(ownItem(values[i]))
  return items
}
