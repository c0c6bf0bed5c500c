import type { FallbackHop, TimeoutSource } from "./errors.ts"

/** The token counts of a call (all its requests: a repair retry adds its own), and its cost when priced. */
export interface PluginLlmUsage {
  readonly inputTokens?: number
  readonly outputTokens?: number
  readonly totalTokens?: number
  readonly cacheReadTokens?: number
  readonly cacheWriteTokens?: number
  readonly reasoningTokens?: number
  /** USD, when a price table knows the model (`costSource` says which). */
  readonly costUsd?: number
  readonly costSource?: "config" | "genai-prices"
}

/**
 * One call as the operator sees it: written as one JSON log line and returned as `result.audit`. Never holds a
 * credential, a base URL, a prompt or an answer.
 */
export interface AuditRecord {
  readonly at: string
  readonly pluginId: string
  readonly kind: "complete" | "complete_structured"
  readonly purpose?: string
  readonly task?: string
  readonly provider: string
  /** The model that answered, as the provider named it; the route's model id when it named none (or none answered). */
  readonly model: string
  /** The model id the call was routed to (the last route tried, after vision routing and fallback). */
  readonly requestedModel: string
  readonly agentId: string
  readonly profile?: string
  readonly schemaName?: string
  readonly usage: PluginLlmUsage
  readonly latencyMs: number
  readonly timeout: { readonly ms: number; readonly source: TimeoutSource }
  readonly hops: ReadonlyArray<FallbackHop>
  readonly visionRouted: boolean
  readonly repaired?: boolean
  /** `ok`, `invalid_output` (a structured answer that failed parsing or validation), or the error's tag. */
  readonly outcome: string
}

/** Where audit lines go; the default writes one JSON line per call to stderr. */
export type AuditSink = (record: AuditRecord) => void

/**
 * A USD amount for a person to read: six significant digits. Sums of per-token prices carry binary floating-point
 * noise (120 and 12 tokens at $0.40 / $1.60 per million are 0.00006720000000000001); records keep the exact sum.
 */
export const displayUsd = (usd: number): number => (Number.isFinite(usd) ? Number(usd.toPrecision(6)) : usd)

/** The audit line as printed (`llm-worker plugin-llm audit {…}`, no newline): the record, its cost rounded for reading. */
export const auditLine = (record: AuditRecord): string => {
  const cost = record.usage.costUsd
  const shown = cost === undefined ? record : { ...record, usage: { ...record.usage, costUsd: displayUsd(cost) } }
  return `llm-worker plugin-llm audit ${JSON.stringify(shown)}`
}

export const stderrAudit: AuditSink = (record) => {
  process.stderr.write(`${auditLine(record)}\n`)
}

/** Purpose strings are free text from plugins: bounded and stripped of control characters before logging. */
export const cleanPurpose = (purpose: unknown): string | undefined => {
  if (typeof purpose !== "string") return undefined
  // eslint-disable-next-line no-control-regex
  const clean = purpose.replace(/[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g, " ").trim().slice(0, 200)
  return clean === "" ? undefined : clean
}
