import type { Event, Usage } from "../event.ts"
import { numberField, recordField } from "./openai-wire.ts"
import type { JsonRecord } from "./openai-wire.ts"

/** The field names of one OpenAI usage object (Chat and Responses spell the same counts differently). */
interface UsageFields {
  readonly input: string
  readonly output: string
  readonly inputDetails: string
}

export const CHAT_USAGE: UsageFields = { input: "prompt_tokens", output: "completion_tokens", inputDetails: "prompt_tokens_details" }
export const RESPONSES_USAGE: UsageFields = { input: "input_tokens", output: "output_tokens", inputDetails: "input_tokens_details" }

/** A neutral usage event, keeping cache reads (and writes, where reported) rather than only the totals. */
export const usageEvent = (usage: JsonRecord, fields: UsageFields): Event => {
  const details = recordField(usage, fields.inputDetails)
  const counts: Array<[keyof Usage, number | undefined]> = [
    ["inputTokens", numberField(usage, fields.input)],
    ["outputTokens", numberField(usage, fields.output)],
    ["totalTokens", numberField(usage, "total_tokens")],
    ["cacheReadTokens", details === undefined ? undefined : numberField(details, "cached_tokens")],
    ["cacheWriteTokens", details === undefined ? undefined : numberField(details, "cache_write_tokens")]
  ]
  const event: { type: "usage" } & { -readonly [K in keyof Usage]: Usage[K] } = { type: "usage" }
  for (const [key, value] of counts) if (value !== undefined) event[key] = value
  return event
}
