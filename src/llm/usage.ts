import { anchorShapes } from "./shape-anchor.ts"
import type { Usage } from "./event.ts"

/**
 * The counts one provider usage object carries, read by a scheme's decoder but not yet held to the neutral
 * rules. `input` is the whole prompt: a decoder whose format leaves cache reads/writes out of its input count
 * (Anthropic) adds them in before calling `neutralUsage`. Values are whatever the wire held (hostile input is
 * the normal case): anything but a non-negative safe integer counts as absent.
 */
export interface ProviderCounts {
  readonly input?: unknown
  readonly output?: unknown
  readonly total?: unknown
  readonly reasoning?: unknown
  readonly cacheRead?: unknown
  readonly cacheWrite?: unknown
}

/**
 * What a format documents about its output count: OpenAI (Chat, Responses) and Anthropic count reasoning inside
 * it; Gemini counts thoughts apart (`candidatesTokenCount` + `thoughtsTokenCount`). Compatible servers do not
 * always follow their format's documentation (xAI's `completion_tokens` leaves reasoning out), so the provider's
 * total, when sent, decides by arithmetic; the convention is only the default.
 */
export type ReasoningConvention = "output_includes_reasoning" | "output_excludes_reasoning"

type MutableUsage = { -readonly [K in keyof Usage]: Usage[K] }

const count = (value: unknown): number | undefined =>
  typeof value === "number" && Number.isSafeInteger(value) && value >= 0 ? value : undefined

const sum = (a: number, b: number): number | undefined => {
  const total = a + b
  return Number.isSafeInteger(total) ? total : undefined
}

/**
 * The neutral usage of one response (the rules are on `Usage`):
 * - `outputTokens` includes reasoning. Read with the format's convention; when the provider sends a total that
 *   the convention does not add up to but the other reading does, the other reading wins (xAI on Chat).
 * - A count the provider left out is derived from its total when the other one is known (Gemini sends no
 *   candidate count for a blocked prompt: output = total − prompt = 0).
 * - A total larger than both readings: the gap is output the provider did not itemise (output = total − input).
 * - `totalTokens` is always `inputTokens + outputTokens`, present whenever both are (and their sum is a safe
 *   integer). A provider total smaller than what it itemised is not passed on; the raw usage keeps it.
 * - `reasoningTokens` is a part of `outputTokens`; a count larger than the output it belongs to is dropped.
 */
export const neutralUsage = (counts: ProviderCounts, convention: ReasoningConvention): Usage => {
  let input = count(counts.input)
  const sent = count(counts.output)
  const providerTotal = count(counts.total)
  const reasoning = count(counts.reasoning)

  const inclusive = sent
  const exclusive = sent === undefined ? reasoning : reasoning === undefined ? sent : sum(sent, reasoning)
  const [primary, other] = convention === "output_includes_reasoning" ? [inclusive, exclusive] : [exclusive, inclusive]
  let output = primary
  if (providerTotal !== undefined && input !== undefined) {
    const fits = (candidate: number | undefined): boolean => candidate !== undefined && sum(input as number, candidate) === providerTotal
    if (!fits(output) && fits(other)) output = other
    // Neither reading fits but the total is larger: output the provider did not itemise (a reasoning count it
    // left out of the details). The total is the one number that is always the whole, so the gap is output.
    else if (!fits(output) && output !== undefined && providerTotal > input + output) output = providerTotal - input
  } else if (convention === "output_includes_reasoning" && sent !== undefined && reasoning !== undefined && reasoning > sent) {
    // No total to decide by: a count that included the reasoning could not be smaller than it.
    output = exclusive
  }
  if (providerTotal !== undefined) {
    if (input !== undefined && output === undefined && providerTotal >= input) output = providerTotal - input
    else if (input === undefined && output !== undefined && providerTotal >= output) input = providerTotal - output
  }

  const usage: MutableUsage = {}
  if (input !== undefined) usage.inputTokens = input
  if (output !== undefined) usage.outputTokens = output
  const total = input === undefined || output === undefined ? undefined : sum(input, output)
  if (total !== undefined) usage.totalTokens = total
  if (reasoning !== undefined && (output === undefined || reasoning <= output)) usage.reasoningTokens = reasoning
  const cacheRead = count(counts.cacheRead)
  if (cacheRead !== undefined) usage.cacheReadTokens = cacheRead
  const cacheWrite = count(counts.cacheWrite)
  if (cacheWrite !== undefined) usage.cacheWriteTokens = cacheWrite
  return usage
}

/** Every count field, in the order merged usages list them. */
export const USAGE_FIELDS = [
  "inputTokens",
  "outputTokens",
  "totalTokens",
  "reasoningTokens",
  "cacheReadTokens",
  "cacheWriteTokens"
] as const satisfies ReadonlyArray<keyof Usage>

/**
 * The sum of several responses' usage (a Worker run). Each field is the sum over the responses that reported it;
 * `totalTokens` is then recomputed as input + output, so the sum rule holds even when some response reported
 * only part of its counts.
 */
export const sumUsage = (usages: Iterable<Usage>): Usage => {
  // Plain sums in locals: a keyed read and write per field, on an object whose shape changes as fields are added,
  // cost more than the whole rest of the sum.
  let input: number | undefined
  let output: number | undefined
  let reasoning: number | undefined
  let cacheRead: number | undefined
  let cacheWrite: number | undefined
  for (const usage of usages) {
    if (usage.inputTokens !== undefined) input = (input ?? 0) + usage.inputTokens
    if (usage.outputTokens !== undefined) output = (output ?? 0) + usage.outputTokens
    if (usage.reasoningTokens !== undefined) reasoning = (reasoning ?? 0) + usage.reasoningTokens
    if (usage.cacheReadTokens !== undefined) cacheRead = (cacheRead ?? 0) + usage.cacheReadTokens
    if (usage.cacheWriteTokens !== undefined) cacheWrite = (cacheWrite ?? 0) + usage.cacheWriteTokens
  }
  const sum: MutableUsage = {}
  if (input !== undefined) sum.inputTokens = input
  if (output !== undefined) sum.outputTokens = output
  if (input !== undefined && output !== undefined) sum.totalTokens = input + output
  if (reasoning !== undefined) sum.reasoningTokens = reasoning
  if (cacheRead !== undefined) sum.cacheReadTokens = cacheRead
  if (cacheWrite !== undefined) sum.cacheWriteTokens = cacheWrite
  return sum
}

/**
 * Usage objects get their fields one by one, in `USAGE_FIELDS` order, so every shape they can have is one of 64
 * (a subset of the six fields). Those shapes are reached from the empty object's through transitions, which V8
 * holds weakly: with no usage object alive at a full collection (between runs), they would be collected and the
 * code optimised for them thrown away. One object of each is kept for the life of the process (decision 0085).
 */
const anchorUsageShapes = (): void => {
  for (let subset = 1; subset < 1 << USAGE_FIELDS.length; subset++) {
    const usage: MutableUsage = {}
    USAGE_FIELDS.forEach((field, bit) => {
      if ((subset & (1 << bit)) !== 0) usage[field] = 0
    })
    anchorShapes(usage)
  }
}
anchorUsageShapes()
