/**
 * A handler's way to fail without throwing: `return toolFailure("no such city")`. The model receives the message
 * as an error result (`ExecutionFailed`).
 */
export interface ToolFailure {
  readonly _tag: "ToolFailure"
  readonly message: string
}

/**
 * A failure a handler returns instead of throwing; the model receives `message` as an error result.
 *
 * @example
 * ```ts
 * execute: async ({ city }) => (known.has(city) ? forecast(city) : toolFailure(`no forecast for ${city}`))
 * ```
 */
export const toolFailure = (message: string): ToolFailure => Object.freeze({ _tag: "ToolFailure", message })

/** Whether `u` is a `ToolFailure` (by shape; never throws). */
export const isToolFailure = (u: unknown): u is ToolFailure =>
  typeof u === "object" && u !== null && (u as { _tag?: unknown })._tag === "ToolFailure" && typeof (u as { message?: unknown }).message === "string"
