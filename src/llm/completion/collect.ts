import type { Event, ProviderMeta, RawUsage, StopReason, Usage } from "../event.ts"
import { USAGE_FIELDS } from "../usage.ts"

/** One response gathered: its text, reasoning, tool calls' arguments by name, usage and stop reason. */
export interface CollectedResponse {
  readonly text: string
  readonly reasoning: string
  readonly calls: ReadonlyArray<{ readonly name: string; readonly arguments: string }>
  readonly usage: Usage
  readonly rawUsage?: RawUsage
  readonly stopReason?: StopReason
  /** The model and response id the provider stated at the start (the `started` status), when it did. */
  readonly model?: string
  readonly responseId?: string
  /** What the provider reported about the response besides its output (moderation results), when it did. */
  readonly providerMeta?: ReadonlyArray<ProviderMeta>
}

type Block = { kind: "text" | "thinking"; text: string } | { kind: "tool_use"; name: string; text: string }
type MutableUsage = { -readonly [F in keyof Usage]: Usage[F] }

/**
 * Reads one response's neutral events into its parts. A block's closing `final` value, when sent, is the
 * authority over its deltas (decision 0021). Usage fields keep their latest defined value (Anthropic reports
 * input at the start and output at the end). Size bounds are the client's (`limits`), enforced by its decoder.
 */
export const collectResponse = async (events: AsyncIterable<Event>): Promise<CollectedResponse> => {
  const blocks = new Map<number, Block>()
  const order: Array<number> = []
  const usage: MutableUsage = {}
  let rawUsage: RawUsage | undefined
  let stopReason: StopReason | undefined
  let model: string | undefined
  let responseId: string | undefined
  const providerMeta: Array<ProviderMeta> = []
  for await (const event of events) {
    switch (event.type) {
      case "block_start": {
        const block: Block = event.block.kind === "tool_use" ? { kind: "tool_use", name: event.block.name, text: "" } : { kind: event.block.kind, text: "" }
        if (!blocks.has(event.index)) order.push(event.index)
        blocks.set(event.index, block)
        break
      }
      case "block_delta": {
        const block = blocks.get(event.index)
        if (block === undefined) break
        block.text += event.delta.kind === "input_json" ? event.delta.json : event.delta.text
        break
      }
      case "block_stop": {
        const block = blocks.get(event.index)
        if (block !== undefined && event.final !== undefined) block.text = event.final
        if (event.stopReason !== undefined) stopReason = event.stopReason
        break
      }
      case "block_abort":
        blocks.delete(event.index)
        break
      case "usage":
        for (const field of USAGE_FIELDS) {
          const value = event[field]
          if (value !== undefined) usage[field] = value
        }
        if (event.raw !== undefined) rawUsage = event.raw
        break
      case "status":
        if (event.stopReason !== undefined) stopReason = event.stopReason
        if (event.model !== undefined) model = event.model
        if (event.responseId !== undefined) responseId = event.responseId
        break
      case "provider_meta":
        providerMeta.push(event.meta)
        break
      default:
        break
    }
  }
  const kept = order.map((index) => blocks.get(index)).filter((block): block is Block => block !== undefined)
  const ordered: MutableUsage = {}
  for (const field of USAGE_FIELDS) if (usage[field] !== undefined) ordered[field] = usage[field]
  return {
    text: kept.filter((b) => b.kind === "text").map((b) => b.text).join(""),
    reasoning: kept.filter((b) => b.kind === "thinking").map((b) => b.text).join(""),
    calls: kept.flatMap((b) => (b.kind === "tool_use" ? [{ name: b.name, arguments: b.text }] : [])),
    usage: ordered,
    ...(rawUsage === undefined ? {} : { rawUsage }),
    ...(stopReason === undefined ? {} : { stopReason }),
    ...(model === undefined ? {} : { model }),
    ...(responseId === undefined ? {} : { responseId }),
    ...(providerMeta.length === 0 ? {} : { providerMeta })
  }
}
