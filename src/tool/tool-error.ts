import { Data } from "effect"

/** The arguments could not be decoded: malformed JSON, not an object, or a schema violation. */
export class InvalidArgument extends Data.TaggedError("InvalidArgument")<{ readonly message: string }> {}

/** The tool ran and failed (a thrown error, a rejected promise, a failed Effect). */
export class ExecutionFailed extends Data.TaggedError("ExecutionFailed")<{ readonly message: string }> {}

/** A defect inside the tool machinery rather than in the tool's own work. */
export class Internal extends Data.TaggedError("Internal")<{ readonly message: string }> {}

/**
 * What a tool can fail with. Every variant carries a `message` written for the model: it is sent back as the
 * tool result so the model can correct itself.
 */
export type ToolError = InvalidArgument | ExecutionFailed | Internal

export const ToolError = {
  InvalidArgument: (message: string): ToolError => new InvalidArgument({ message }),
  ExecutionFailed: (message: string): ToolError => new ExecutionFailed({ message }),
  Internal: (message: string): ToolError => new Internal({ message }),
  is: (u: unknown): u is ToolError =>
    u instanceof InvalidArgument || u instanceof ExecutionFailed || u instanceof Internal
} as const
