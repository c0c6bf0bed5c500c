import type { Usage } from "../llm/event.ts"
import type { PriceEntry } from "./config.ts"

/** Where a cost came from: the operator's `llm.prices`, or the maintained table of `@pydantic/genai-prices`. */
export type PriceSource = "config" | "genai-prices"

export interface Cost {
  readonly usd: number
  readonly source: PriceSource
}

/** `@pydantic/genai-prices` names some providers differently. */
const GENAI_PROVIDER: Readonly<Record<string, string>> = {
  openai: "openai",
  "openai-responses": "openai",
  anthropic: "anthropic",
  gemini: "google",
  openrouter: "openrouter"
}

type CalcPrice = (usage: Record<string, number | undefined>, model: string, options?: { providerId?: string }) => { total_price: number } | null

let table: Promise<CalcPrice | undefined> | undefined

/**
 * The maintained table, loaded on the first priced call (800 KB of data a user without costs never loads).
 * The package ships its data offline; nothing is fetched.
 */
const maintained = (): Promise<CalcPrice | undefined> => {
  table ??= import("@pydantic/genai-prices").then(
    (module) => module.calcPrice as unknown as CalcPrice,
    () => undefined
  )
  return table
}

const perMillion = (tokens: number | undefined, price: number | undefined): number => ((tokens ?? 0) * (price ?? 0)) / 1_000_000

/**
 * The cost of one call's usage, or undefined when no table knows the model. Operator prices match the model
 * literally (and the provider when given). Neutral `inputTokens` includes cache reads and writes, which are
 * priced at their own rates when given (else at the input rate), as `@pydantic/genai-prices` also counts them.
 */
export const costOf = async (provider: string, providerType: string, model: string, usage: Usage, prices: ReadonlyArray<PriceEntry>, useTable: boolean): Promise<Cost | undefined> => {
  if (usage.inputTokens === undefined && usage.outputTokens === undefined) return undefined
  const own = prices.find((p) => p.model === model && (p.provider === undefined || p.provider === provider || p.provider === providerType))
  if (own !== undefined) {
    const cacheRead = usage.cacheReadTokens ?? 0
    const cacheWrite = usage.cacheWriteTokens ?? 0
    const plainInput = Math.max(0, (usage.inputTokens ?? 0) - cacheRead - cacheWrite)
    const usd =
      perMillion(plainInput, own.inputPerMTok) +
      perMillion(cacheRead, own.cacheReadPerMTok ?? own.inputPerMTok) +
      perMillion(cacheWrite, own.cacheWritePerMTok ?? own.inputPerMTok) +
      perMillion(usage.outputTokens, own.outputPerMTok)
    return { usd, source: "config" }
  }
  if (!useTable) return undefined
  const calc = await maintained()
  if (calc === undefined) return undefined
  const providerId = GENAI_PROVIDER[providerType]
  try {
    const price = calc(
      {
        input_tokens: usage.inputTokens,
        output_tokens: usage.outputTokens,
        cache_read_tokens: usage.cacheReadTokens,
        cache_write_tokens: usage.cacheWriteTokens
      },
      model,
      providerId === undefined ? {} : { providerId }
    )
    return price === null || !Number.isFinite(price.total_price) ? undefined : { usd: price.total_price, source: "genai-prices" }
  } catch {
    return undefined
  }
}
