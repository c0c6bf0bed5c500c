import { Cause, Effect, Exit, type Fiber } from "effect"
import { whenAborted } from "./abort-watch.ts"
import { describeThrown } from "./describe-thrown.ts"
import { DEFAULT_TOOL_OUTPUT_BYTES } from "./output-limit.ts"
import type { Tool, ToolContext } from "./tool.ts"
import { ExecutionFailed, ToolError } from "./tool-error.ts"

export { describeThrown }

/**
 * A tool's failure message may be as long as its output may (the output limit cuts it on the way to the model);
 * a description of a value that is not a `ToolError` is clipped to this many code units first.
 */
const TOOL_ERROR_CHARS = DEFAULT_TOOL_OUTPUT_BYTES

/**
 * Maps a failure of unknown shape onto `ToolError`: our own tool errors pass through, anything else (including a
 * value that merely looks like one, such as a Proxy) is `ExecutionFailed` with its description. Never throws.
 */
export const toToolError = (thrown: unknown): ToolError => {
  if (ToolError.is(thrown)) {
    // A genuine instance can still have had its message redefined as a throwing getter: read it once, guarded.
    let message: unknown
    try {
      message = thrown.message
    } catch {
      message = undefined
    }
    if (typeof message === "string") return thrown
  }
  return new ExecutionFailed({ message: describeThrown(thrown, TOOL_ERROR_CHARS) })
}

const settle = <A>(exit: Exit.Exit<A, unknown>): A => {
  if (Exit.isSuccess(exit)) return exit.value
  const failure = Cause.findErrorOption(exit.cause)
  if (failure._tag === "Some") throw toToolError(failure.value)
  if (Cause.hasInterruptsOnly(exit.cause)) throw new ExecutionFailed({ message: "cancelled" })
  throw new ExecutionFailed({ message: describeThrown(Cause.squash(exit.cause), TOOL_ERROR_CHARS) })
}

/**
 * Runs an Effect-written tool body with the call's signal, so cancelling the call interrupts the fiber. The
 * signal is watched through the shared per-signal watcher, not `runPromiseExit`'s own listener: a batch of
 * parallel calls on one run signal would otherwise add one listener each (Node warns past 10).
 */
export const runToolEffect = <A>(effect: Effect.Effect<A, unknown>, signal: AbortSignal): Promise<A> => {
  const fiber: Fiber.Fiber<A, unknown> = Effect.runFork(effect)
  return new Promise<Exit.Exit<A, unknown>>((resolve) => {
    const done = fiber.pollUnsafe()
    if (done !== undefined) return resolve(done)
    if (signal.aborted) fiber.interruptUnsafe()
    const unwatch = signal.aborted ? undefined : whenAborted(signal, () => fiber.interruptUnsafe())
    fiber.addObserver((exit) => {
      unwatch?.()
      resolve(exit)
    })
  }).then(settle)
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
