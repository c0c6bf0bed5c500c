import type { Request } from "../request.ts"
import type { ConfigWarning } from "../scheme.ts"

/**
 * `max_tokens` when the request sets none. The Messages API requires the field; 4096 is the largest value every
 * Claude model accepts (the Claude 3 generation caps output there), so an unset limit never causes a 400.
 * With extended thinking the thinking budget comes on top, since max_tokens must exceed it.
 */
export const ANTHROPIC_DEFAULT_MAX_TOKENS = 4096

/** The API's smallest accepted `budget_tokens`. */
export const ANTHROPIC_MIN_THINKING_BUDGET = 1024

/** Budgets for a request that gives only an effort level; Anthropic takes a token budget, not an effort. */
const EFFORT_BUDGET = { low: 1024, medium: 4096, high: 16384 } as const

/** Extended thinking allows top_p only in this range, and forbids temperature and top_k altogether. */
const THINKING_MIN_TOP_P = 0.95

export type AnthropicToolChoice =
  | { readonly type: "auto" | "any"; readonly disable_parallel_tool_use?: true }
  | { readonly type: "tool"; readonly name: string; readonly disable_parallel_tool_use?: true }
  | { readonly type: "none" }

/** The settings that go on the wire after everything the API would refuse was dropped. Names are neutral. */
export interface AnthropicSettings {
  readonly maxTokens: number
  readonly thinkingBudget?: number
  readonly temperature?: number
  readonly topP?: number
  readonly topK?: number
  readonly stopSequences?: ReadonlyArray<string>
  readonly toolChoice?: AnthropicToolChoice
}

const warning = (setting: string, message: string): ConfigWarning => ({ _tag: "ConfigWarning", scheme: "anthropic", setting, message })

const resolveToolChoice = (request: Request, thinking: boolean, warnings: Array<ConfigWarning>): AnthropicToolChoice | undefined => {
  const { toolChoice, parallelToolCalls } = request.config
  if (request.tools.length === 0) {
    if (toolChoice?.type === "required" || toolChoice?.type === "tool") {
      warnings.push(warning("toolChoice", `toolChoice "${toolChoice.type}" needs tools, and the request has none; omitted`))
    }
    return undefined
  }
  let choice = toolChoice
  if (choice?.type === "tool") {
    const name = choice.name
    if (!request.tools.some((tool) => tool.name === name)) {
      warnings.push(warning("toolChoice", `toolChoice names "${name}", which is not among the request's tools; omitted`))
      choice = undefined
    }
  }
  if (thinking && (choice?.type === "required" || choice?.type === "tool")) {
    warnings.push(warning("toolChoice", `extended thinking allows only tool_choice auto or none, not "${choice.type}"; omitted`))
    choice = undefined
  }
  if (choice?.type === "none") return { type: "none" }
  const serial = parallelToolCalls === false ? ({ disable_parallel_tool_use: true } as const) : {}
  if (choice?.type === "tool") return { type: "tool", name: choice.name, ...serial }
  if (choice?.type === "required") return { type: "any", ...serial }
  if (choice?.type === "auto" || parallelToolCalls === false) return { type: "auto", ...serial }
  return undefined
}

/** Decides what an Anthropic request carries; `validate()` reports the warnings and `encodeRequest` the settings. */
export const resolveAnthropicSettings = (
  request: Request
): { readonly settings: AnthropicSettings; readonly warnings: ReadonlyArray<ConfigWarning> } => {
  const config = request.config
  const warnings: Array<ConfigWarning> = []

  const effort = config.reasoning?.effort
  let thinkingBudget = config.reasoning?.budgetTokens ?? (effort === undefined ? undefined : EFFORT_BUDGET[effort])
  if (thinkingBudget !== undefined && thinkingBudget < ANTHROPIC_MIN_THINKING_BUDGET) {
    warnings.push(
      warning("reasoning.budgetTokens", `Anthropic needs a thinking budget of at least ${ANTHROPIC_MIN_THINKING_BUDGET}, got ${thinkingBudget}; thinking omitted`)
    )
    thinkingBudget = undefined
  }
  if (thinkingBudget !== undefined && config.maxTokens !== undefined && config.maxTokens <= thinkingBudget) {
    warnings.push(
      warning("reasoning.budgetTokens", `the thinking budget (${thinkingBudget}) must be below maxTokens (${config.maxTokens}); thinking omitted`)
    )
    thinkingBudget = undefined
  }
  const thinking = thinkingBudget !== undefined
  const maxTokens = config.maxTokens ?? ANTHROPIC_DEFAULT_MAX_TOKENS + (thinkingBudget ?? 0)

  let { temperature, topP, topK } = config
  if (thinking && temperature !== undefined) {
    warnings.push(warning("temperature", "Anthropic does not accept temperature together with extended thinking; omitted"))
    temperature = undefined
  }
  if (thinking && topK !== undefined) {
    warnings.push(warning("topK", "Anthropic does not accept top_k together with extended thinking; omitted"))
    topK = undefined
  }
  if (thinking && topP !== undefined && topP < THINKING_MIN_TOP_P) {
    warnings.push(warning("topP", `with extended thinking Anthropic accepts top_p from ${THINKING_MIN_TOP_P} to 1, got ${topP}; omitted`))
    topP = undefined
  }

  if (config.responseFormat?.type === "json_object") {
    warnings.push(warning("responseFormat", "Anthropic has no JSON mode without a schema; not sent (completeObject uses a forced tool)"))
  }
  const toolChoice = resolveToolChoice(request, thinking, warnings)
  const stopSequences = config.stopSequences !== undefined && config.stopSequences.length > 0 ? config.stopSequences : undefined
  return {
    settings: {
      maxTokens,
      ...(thinkingBudget === undefined ? {} : { thinkingBudget }),
      ...(temperature === undefined ? {} : { temperature }),
      ...(topP === undefined ? {} : { topP }),
      ...(topK === undefined ? {} : { topK }),
      ...(stopSequences === undefined ? {} : { stopSequences }),
      ...(toolChoice === undefined ? {} : { toolChoice })
    },
    warnings
  }
}
