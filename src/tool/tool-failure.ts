/**
 * A handler's way to fail without throwing: `return toolFailure("no such city")`. The model receives the message
 * as an error result (`ExecutionFailed`).
 */
export interface ToolFailure {
  readonly _tag: "ToolFailure"
  readonly message: string
}

export const toolFailure = (message: string): ToolFailure => Object.freeze({ _tag: "ToolFailure", message })

export const isToolFailure = (u: unknown): u is ToolFailure =>
  typeof u === "object" && u !== null && (u as { _tag?: unknown })._tag === "ToolFailure" && typeof (u as { message?: unknown }).message === "string"
