import { Cause, Effect, Exit } from "effect"
import type { Tool, ToolContext } from "./tool.ts"
import { ExecutionFailed, ToolError } from "./tool-error.ts"

/** Renders anything thrown as a message the model can read (never `[object Object]`). */
export const describeThrown = (thrown: unknown): string => {
  if (thrown instanceof Error) return thrown.message || thrown.name
  if (typeof thrown === "string") return thrown
  try {
    return JSON.stringify(thrown) ?? String(thrown)
  } catch {
    return String(thrown)
  }
}

/** Maps a failure of unknown shape onto `ToolError`: tool errors pass through, anything else is `ExecutionFailed`. */
export const toToolError = (thrown: unknown): ToolError =>
  ToolError.is(thrown) ? thrown : new ExecutionFailed({ message: describeThrown(thrown) })

/** Runs an Effect-written tool body with the call's signal, so cancelling the call interrupts the fiber. */
export const runToolEffect = async <A>(effect: Effect.Effect<A, unknown>, signal: AbortSignal): Promise<A> => {
  const exit = await Effect.runPromiseExit(effect, { signal })
  if (Exit.isSuccess(exit)) return exit.value
  const failure = Cause.findErrorOption(exit.cause)
  if (failure._tag === "Some") throw toToolError(failure.value)
  if (Cause.hasInterruptsOnly(exit.cause)) throw new ExecutionFailed({ message: "cancelled" })
  throw new ExecutionFailed({ message: describeThrown(Cause.squash(exit.cause)) })
}

/**
 * A tool from a plain (async) function over the raw JSON argument text. Throwing or rejecting with a `ToolError`
 * keeps its variant; anything else becomes `ExecutionFailed` with the error's message.
 */
export const fromFunction = (
  run: (argumentsJson: string, context: ToolContext) => string | Promise<string>
): Tool => ({
  async execute(argumentsJson, context) {
    try {
      return await run(argumentsJson, context)
    } catch (thrown) {
      throw toToolError(thrown)
    }
  }
})

/** A tool from a function returning an Effect; failures keep their `ToolError` variant, interruption follows the signal. */
export const fromEffect = (
  run: (argumentsJson: string, context: ToolContext) => Effect.Effect<string, ToolError>
): Tool => ({
  execute: (argumentsJson, context) =>
    runToolEffect(Effect.suspend(() => run(argumentsJson, context)), context.signal)
})
