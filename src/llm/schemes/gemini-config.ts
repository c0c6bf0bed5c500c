import type { Request } from "../request.ts"
import type { ConfigWarning } from "../scheme.ts"

/**
 * Thinking budgets for a request that gives only an effort level. Gemini 2.5 takes a token budget; 24576 is the
 * largest Gemini 2.5 Flash accepts, so "high" is valid on every 2.5 model.
 */
const EFFORT_BUDGET = { low: 1024, medium: 8192, high: 24576 } as const

export type GeminiFunctionCallingConfig =
  | { readonly mode: "AUTO" | "NONE" | "ANY" }
  | { readonly mode: "ANY"; readonly allowedFunctionNames: ReadonlyArray<string> }

/** What a Gemini request carries after everything the API cannot honour was dropped. Names are neutral. */
export interface GeminiSettings {
  readonly maxOutputTokens?: number
  readonly temperature?: number
  readonly topP?: number
  readonly topK?: number
  readonly stopSequences?: ReadonlyArray<string>
  readonly thinkingBudget?: number
  readonly functionCalling?: GeminiFunctionCallingConfig
  /** Set only when the scheme opts in and the request has tools (there is nothing to stream otherwise). */
  readonly streamFunctionCallArguments?: true
}

/** What the endpoint behind a Gemini scheme accepts beyond the Gemini API reference; chosen per scheme. */
export interface GeminiEndpointFeatures {
  /** `toolConfig.functionCallingConfig.streamFunctionCallArguments` (Vertex AI; the Gemini API refuses it). */
  readonly streamFunctionCallArguments?: boolean
}

const warning = (setting: string, message: string): ConfigWarning => ({ _tag: "ConfigWarning", scheme: "gemini", setting, message })

const resolveFunctionCalling = (request: Request, warnings: Array<ConfigWarning>): GeminiFunctionCallingConfig | undefined => {
  const choice = request.config.toolChoice
  if (request.config.parallelToolCalls === false) {
    warnings.push(warning("parallelToolCalls", "Gemini has no setting to forbid parallel function calls; omitted"))
  }
  if (choice === undefined) return undefined
  if (request.tools.length === 0) {
    if (choice.type === "required" || choice.type === "tool") {
      warnings.push(warning("toolChoice", `toolChoice "${choice.type}" needs tools, and the request has none; omitted`))
    }
    return undefined
  }
  switch (choice.type) {
    case "auto":
      return { mode: "AUTO" }
    case "none":
      return { mode: "NONE" }
    case "required":
      return { mode: "ANY" }
    case "tool":
      if (!request.tools.some((tool) => tool.name === choice.name)) {
        warnings.push(warning("toolChoice", `toolChoice names "${choice.name}", which is not among the request's tools; omitted`))
        return undefined
      }
      return { mode: "ANY", allowedFunctionNames: [choice.name] }
  }
}

/** Decides what a Gemini request carries; `validate()` reports the warnings and `encodeRequest` the settings. */
export const resolveGeminiSettings = (
  request: Request,
  endpoint: GeminiEndpointFeatures = {}
): { readonly settings: GeminiSettings; readonly warnings: ReadonlyArray<ConfigWarning> } => {
  const config = request.config
  const warnings: Array<ConfigWarning> = []
  const effort = config.reasoning?.effort
  const thinkingBudget = config.reasoning?.budgetTokens ?? (effort === undefined ? undefined : EFFORT_BUDGET[effort])
  const functionCalling = resolveFunctionCalling(request, warnings)
  const stopSequences = config.stopSequences !== undefined && config.stopSequences.length > 0 ? config.stopSequences : undefined
  return {
    settings: {
      ...(config.maxTokens === undefined ? {} : { maxOutputTokens: config.maxTokens }),
      ...(config.temperature === undefined ? {} : { temperature: config.temperature }),
      ...(config.topP === undefined ? {} : { topP: config.topP }),
      ...(config.topK === undefined ? {} : { topK: config.topK }),
      ...(stopSequences === undefined ? {} : { stopSequences }),
      ...(thinkingBudget === undefined ? {} : { thinkingBudget }),
      ...(functionCalling === undefined ? {} : { functionCalling }),
      ...(endpoint.streamFunctionCallArguments === true && request.tools.length > 0 ? { streamFunctionCallArguments: true as const } : {})
    },
    warnings
  }
}
