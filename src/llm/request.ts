import type { JsonSchema } from "../schema/json-schema.ts"
import type { HostedTool } from "./hosted-tools.ts"
import type { Item } from "./item.ts"

/** A tool as every provider is told about it: the neutral definition (one normalised JSON Schema). */
export interface ToolSpec {
  readonly name: string
  readonly description: string
  readonly inputSchema: JsonSchema
}

/** Whether the model may, must or must not call tools, or must call the one named. */
export type ToolChoice =
  | { readonly type: "auto" }
  | { readonly type: "none" }
  | { readonly type: "required" }
  | { readonly type: "tool"; readonly name: string }

/**
 * Generation settings of a request. A setting a provider cannot honour is reported by `validate` as a `ConfigWarning`, never silently dropped.
 */
export interface RequestConfig {
  readonly maxTokens?: number
  readonly temperature?: number
  readonly topP?: number
  readonly topK?: number
  readonly stopSequences?: ReadonlyArray<string>
  readonly toolChoice?: ToolChoice
  readonly parallelToolCalls?: boolean
  /** Reasoning / extended thinking; mapped per provider (effort for OpenAI, budget for Anthropic and Gemini). */
  readonly reasoning?: { readonly effort?: "low" | "medium" | "high"; readonly budgetTokens?: number }
  /**
   * Tools the provider runs itself (web search, code execution…; `HostedTool`, decision 0025), sent after the
   * function tools in the same `tools` array. Each names its wire format; another scheme leaves it out with a
   * warning, and the Worker refuses to start with one that does not match its client.
   */
  readonly hostedTools?: ReadonlyArray<HostedTool>
  /**
   * What the answer's text must be, sent as each provider's native structured output (OpenAI Chat
   * `response_format`, Responses `text.format`, Anthropic `output_config.format`, Gemini `responseMimeType` +
   * `responseJsonSchema`). Absent or `text`: free text. `completeObject` builds this from a schema; a scheme
   * without a native form for it reports a `ConfigWarning` and sends nothing.
   */
  readonly responseFormat?: ResponseFormat
}

/**
 * Free text; any JSON object (JSON mode, no schema); or JSON valid under `schema` — a normalised object schema
 * (`makeArgumentCodec(...).jsonSchema`), so what the provider is told is what the decoder accepts. `name` is
 * for people and logs; each scheme makes it a valid wire name (OpenAI allows `[A-Za-z0-9_-]{1,64}`).
 */
export type ResponseFormat =
  | { readonly type: "text" }
  | { readonly type: "json_object" }
  | { readonly type: "json_schema"; readonly name: string; readonly description?: string; readonly schema: JsonSchema }

/**
 * Everything a scheme needs to build one provider request. `tools` should be the array returned by
 * `ToolServerHandle.toolDefinitionsSorted()`: the same array instance for an unchanged tool set, which lets the
 * schemes reuse its serialised fragment.
 */
export interface Request {
  readonly model: string
  readonly systemPrompt?: string
  readonly items: ReadonlyArray<Item>
  readonly tools: ReadonlyArray<ToolSpec>
  readonly config: RequestConfig
  /**
   * The tools, system prompt and first `prefixItems` items form a stable prefix (a cache-locked worker sets
   * this). Providers that cache implicitly (OpenAI, Gemini) need nothing; Anthropic gets `cache_control`
   * breakpoints at the end of the system prompt and of that prefix.
   */
  readonly promptCache?: { readonly prefixItems: number }
}
