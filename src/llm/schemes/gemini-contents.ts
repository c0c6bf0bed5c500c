import { anchorShapes } from "../shape-anchor.ts"
import { buildToolNameMap } from "../../schema/tool-names.ts"
import type { ToolNameMap } from "../../schema/provider-tools.ts"
import { type CallLedger, FragmentCache, flat, type ItemContext, plainContext } from "../fragment-cache.ts"
import { type HistoryFold, PrefixSnapshots, ResumableContext, resumedPieces, type SealedCalls } from "../prefix-snapshots.ts"
import type { ContentPart, Item } from "../item.ts"
import { type JsonBodyValue, jsonBody, type RawJson, rawJson } from "../json-body.ts"
import type { ConfigWarning } from "../scheme.ts"
import { isGeneratedCallId } from "./gemini-decoder.ts"
import { quote } from "../../schema/quote.ts"
import { argumentsFallbackReason, argumentsObject } from "./arguments-object.ts"

/** A part this library builds, or a provider item's part spliced in as Gemini sent it (decision 0025). */
type Part = { readonly [key: string]: JsonBodyValue | undefined } | RawJson
type Role = "user" | "model"
/** Adds one part to the content of `role` (a new content when the previous one has the other role). */
type Append = (role: Role, part: Part) => void

const warning = (setting: string, message: string): ConfigWarning => ({ _tag: "ConfigWarning", scheme: "gemini", setting, message })

const contentPart = (part: ContentPart): Part | undefined => {
  if (part.type === "input_image") return { inlineData: { mimeType: part.mediaType, data: part.data } }
  if (part.type === "input_image_url") return { fileData: { fileUri: part.url } }
  return part.text === "" ? undefined : { text: part.text }
}

/** Gemini's own call ids go back on the call and its response; ids this library made up never do. */
const wireId = (callId: string): string | undefined => (isGeneratedCallId(callId) ? undefined : callId)

/**
 * Converts neutral history to Gemini `contents`. Consecutive items of one role share a content (Gemini wants all
 * responses to one turn's calls together). A function response needs the function's name, which Gemini's
 * format does not link by id alone: it is taken from the latest earlier call with the same id; an output with
 * no such call is left out with a warning. Errors go back as `response.error`, results as `response.output`,
 * the two keys Gemini documents. Thought signatures go back on the part they came with.
 */
export const geminiContents = (
  items: ReadonlyArray<Item>,
  names: ToolNameMap
): { readonly contents: ReadonlyArray<JsonBodyValue>; readonly warnings: ReadonlyArray<ConfigWarning> } => {
  const warnings: Array<ConfigWarning> = []
  const contents: Array<{ role: Role; parts: Array<Part> }> = []

  const append: Append = (role, part) => {
    const last = contents.at(-1)
    if (last !== undefined && last.role === role) last.parts.push(part)
    else contents.push({ role, parts: [part] })
  }

  items.forEach(itemAppender(plainContext(names), warnings, append))
  return { contents, warnings }
}

/**
 * Appends one item's parts. Everything it needs besides the item comes from `names` (tool names, and the names of
 * the calls earlier items made), so the fragment cache can tell where an item's parts are the same.
 */
const itemAppender = (names: ItemContext, warnings: Array<ConfigWarning>, append: Append) => {
  const callNames: CallLedger = names.calls
  return (item: Item, position: number): void => {
    switch (item.type) {
      case "message":
        for (const content of item.content) {
          const part = contentPart(content)
          if (part !== undefined) append(item.role === "user" ? "user" : "model", part)
        }
        return
      case "function_call": {
        const checked = argumentsObject(item)
        let args: JsonBodyValue = {}
        if (checked.ok) args = checked.value
        else {
          const reason = argumentsFallbackReason(checked.reason)
          warnings.push(warning(`items[${position}].arguments`, `arguments of call ${quote(item.callId)} ${reason}; sent as {}`))
        }
        const name = names.toWire(item.name)
        callNames.set(item.callId, name)
        append("model", { functionCall: { id: wireId(item.callId), name, args }, thoughtSignature: item.thoughtSignature })
        return
      }
      case "function_call_output": {
        const name = callNames.get(item.callId)
        if (name === undefined) {
          warnings.push(warning(`items[${position}]`, `output for call ${item.callId}, which no earlier function_call made; omitted`))
          return
        }
        const response = item.isError ? { error: item.output } : { output: item.output }
        append("user", { functionResponse: { id: wireId(item.callId), name, response } })
        return
      }
      case "provider_item":
        // Code, its result or a server call's response goes back as the model part it came as.
        if (item.scheme === "gemini") append("model", rawJson(item.json))
        return
      case "reasoning": {
        const data = item.data
        if (data?.provider !== "gemini") return
        // A signature that came on an empty text part goes back the same way; thought text is marked as thought.
        append(
          "model",
          item.text === ""
            ? { text: "", thoughtSignature: data.thoughtSignature }
            : { text: item.text, thought: true, thoughtSignature: data.thoughtSignature }
        )
        return
      }
    }
  }
}

/** One part as JSON text, with the role of the content it goes in. */
interface PartText {
  readonly role: Role
  readonly text: string
}

/** One item's parts as text; warnings are `geminiContents`' to report (they name positions). */
const itemParts = (context: ItemContext, _: undefined, items: ReadonlyArray<Item>, start: number): ReadonlyArray<PartText> => {
  const out: Array<PartText> = []
  itemAppender(context, [], (role, part) => void out.push({ role, text: flat(jsonBody(part)) }))(items[start] as Item, start)
  return out
}

/** A scheme's cache of each item's parts (`fragment-cache.ts`). */
export type GeminiFragments = FragmentCache<ReadonlyArray<PartText>>

export const geminiFragments = (): GeminiFragments => new FragmentCache<ReadonlyArray<PartText>>()

interface GeminiState {
  readonly calls: SealedCalls
  readonly closed: string
  readonly appended: number
  /** The content still open at the end of the prefix: later parts of its role join it. */
  readonly role: Role | undefined
  readonly parts: ReadonlyArray<string>
}

/**
 * `geminiContents(...).contents` as a fold over each item's cached parts (`prefix-snapshots.ts`); consecutive parts
 * of one role are merged here, so only new items are printed.
 */
class GeminiFold implements HistoryFold<GeminiState> {
  readonly #context: ResumableContext
  #closed: string
  #appended: number
  #role: Role | undefined
  readonly #parts: Array<string>
  constructor(
    readonly fragments: GeminiFragments,
    names: ToolNameMap,
    state?: GeminiState
  ) {
    this.#context = new ResumableContext(names, state?.calls)
    this.#closed = state?.closed ?? ""
    this.#appended = state === undefined ? 0 : resumedPieces(state.closed, state.appended)
    this.#role = state?.role
    this.#parts = state === undefined ? [] : [...state.parts]
  }
  add(items: ReadonlyArray<Item>, position: number): void {
    for (const part of this.fragments.fragment(items, position, position + 1, this.#context, itemParts, undefined)) {
      if (part.role !== this.#role) {
        if (this.#role !== undefined) {
          const content = openContent(this.#role, this.#parts)
          this.#closed = this.#closed === "" ? content : `${this.#closed},${content}`
          this.#appended++
          this.#parts.length = 0
        }
        this.#role = part.role
      }
      this.#parts.push(part.text)
    }
  }
  capture(): GeminiState {
    return { calls: this.#context.seal(), closed: this.#closed, appended: this.#appended, role: this.#role, parts: [...this.#parts] }
  }
  text(): string {
    if (this.#role === undefined) return `[${this.#closed}]`
    const open = openContent(this.#role, this.#parts)
    return `[${this.#closed === "" ? open : `${this.#closed},${open}`}]`
  }
}

const openContent = (role: Role, parts: ReadonlyArray<string>): string => `${CONTENT_OPEN[role]}${parts.join(",")}]}`

/** A scheme instance's kept folds (`prefix-snapshots.ts`). */
export type GeminiSnapshots = PrefixSnapshots<GeminiState>

export const geminiSnapshots = (): GeminiSnapshots => new PrefixSnapshots<GeminiState>()

/**
 * `geminiContents(...).contents` as JSON text, resumed from the longest prefix an earlier request folded. Equal
 * byte for byte to printing `geminiContents` (a property test holds the two together); warnings come from that
 * function.
 */
export const cachedGeminiContents = (
  fragments: GeminiFragments,
  snapshots: GeminiSnapshots,
  items: ReadonlyArray<Item>,
  names: ToolNameMap
): RawJson =>
  rawJson(
    snapshots.assemble(
      items,
      names,
      0,
      () => new GeminiFold(fragments, names),
      (state) => new GeminiFold(fragments, names, state)
    )
  )

/** How `jsonBody` prints the start of a `{ role, parts }` content. */
const CONTENT_OPEN: Readonly<Record<Role, string>> = { user: '{"role":"user","parts":[', model: '{"role":"model","parts":[' }

// A fold is made per request and none is alive between runs: one kept so V8 keeps its shapes (`shape-anchor.ts`).
anchorShapes(new GeminiFold(geminiFragments(), buildToolNameMap([], "gemini")))
