import type { ToolError } from "./tool-error.ts"
import type { ToolMeta } from "./tool-meta.ts"

/** What a tool sees of the call it is serving. */
export interface ToolContext {
  /** The provider's call id (or a generated one when the provider gave none). */
  readonly callId: string
  /** Aborted when the run is cancelled or the call's deadline passes; long work should watch it. */
  readonly signal: AbortSignal
  /** The tool's own metadata. */
  readonly meta: ToolMeta
}

/**
 * The one operation of a tool: run with the raw JSON argument text the model produced and return the text the
 * model will read. A tool holds no metadata (that is `ToolMeta`) but may hold state: the same instance serves
 * every call while it is registered.
 *
 * `execute` resolves with the output, or rejects with a `ToolError`. Anything else it throws or rejects with is
 * turned into `ExecutionFailed` by the tool server; it never reaches the caller as a crash.
 *
 * Write tools with `defineTool` (typed arguments), `Tool.fromFunction` or `Tool.fromEffect` rather than by hand.
 */
export interface Tool {
  execute(argumentsJson: string, context: ToolContext): Promise<string>
  /**
   * Optional: the same call with the argument text already parsed — exactly what `JSON.parse(argumentsJson)`
   * returned, a JSON object nested no deeper than the caller's bound. A caller that has parsed the text already
   * (the Worker, which must refuse malformed JSON before any tool runs) calls this instead of `execute`, so the
   * model's text is parsed once. It must answer exactly as `execute` would for that text; `defineTool` tools have
   * it, tools without it are given the text.
   */
  executeParsed?(args: ParsedArguments, context: ToolContext): Promise<string>
}

/** Argument text after `JSON.parse`, known to be an object (not an array, not null). */
export type ParsedArguments = { readonly [key: string]: unknown }

/**
 * A factory producing a tool's metadata and its instance together. The Worker invokes it exactly once, when the
 * tool is registered; the instance is then reused for every call.
 */
export type ToolDefinition = () => readonly [ToolMeta, Tool]

/** Keeps `ToolError` importable from here for implementers. */
export type { ToolError }
