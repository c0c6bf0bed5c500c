import type { Event } from "../event.ts"
import { boundedRawUsage } from "../raw-usage.ts"
import { neutralUsage } from "../usage.ts"
import { numberField, recordField } from "./openai-wire.ts"
import type { JsonRecord } from "./openai-wire.ts"

/** The field names of one OpenAI usage object (Chat and Responses spell the same counts differently). */
interface UsageFields {
  readonly input: string
  readonly output: string
  readonly inputDetails: string
  readonly outputDetails: string
}

export const CHAT_USAGE: UsageFields = {
  input: "prompt_tokens",
  output: "completion_tokens",
  inputDetails: "prompt_tokens_details",
  outputDetails: "completion_tokens_details"
}
export const RESPONSES_USAGE: UsageFields = {
  input: "input_tokens",
  output: "output_tokens",
  inputDetails: "input_tokens_details",
  outputDetails: "output_tokens_details"
}

/**
 * A neutral usage event, keeping cache reads (and writes, where reported) and reasoning rather than only the
 * totals. OpenAI documents its output count as including reasoning; xAI's Chat servers leave it out, which the
 * total gives away (`neutralUsage` decides by arithmetic). DeepSeek reports cache hits as `prompt_cache_hit_tokens`
 * where it sends no `prompt_tokens_details`. The usage object itself rides along as `raw`.
 */
export const usageEvent = (usage: JsonRecord, fields: UsageFields): Event => {
  const inputDetails = recordField(usage, fields.inputDetails)
  const outputDetails = recordField(usage, fields.outputDetails)
  const counts = neutralUsage(
    {
      input: usage[fields.input],
      output: usage[fields.output],
      total: usage["total_tokens"],
      reasoning: outputDetails?.["reasoning_tokens"],
      cacheRead: (inputDetails === undefined ? undefined : numberField(inputDetails, "cached_tokens")) ?? usage["prompt_cache_hit_tokens"],
      cacheWrite: inputDetails?.["cache_write_tokens"]
    },
    "output_includes_reasoning"
  )
  const raw = boundedRawUsage(usage)
  return { type: "usage", ...counts, ...(raw === undefined ? {} : { raw }) }
}
