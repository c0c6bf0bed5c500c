import { TaggedError } from "../error/tagged-error.ts"

/**
 * Instances built by the constructors below. Recognising a `ToolError` by this set rather than by `instanceof`
 * or `_tag` matters on the rejection path: `instanceof` runs a Proxy's getPrototypeOf trap and `_tag` a getter,
 * either of which a hostile tool can make throw; `WeakSet.has` runs no user code and no Proxy can forge it.
 */
const genuine = new WeakSet<object>()

/** The arguments could not be decoded: malformed JSON, not an object, or a schema violation. */
export class InvalidArgument extends TaggedError("InvalidArgument")<{ readonly message: string }> {
  constructor(props: { readonly message: string; readonly cause?: unknown }) {
    super(props)
    genuine.add(this)
  }
}

/** The tool ran and failed (a thrown error, a rejected promise, a failed Effect). */
export class ExecutionFailed extends TaggedError("ExecutionFailed")<{ readonly message: string }> {
  constructor(props: { readonly message: string; readonly cause?: unknown }) {
    super(props)
    genuine.add(this)
  }
}

/** A defect inside the tool machinery rather than in the tool's own work. */
export class Internal extends TaggedError("Internal")<{ readonly message: string }> {
  constructor(props: { readonly message: string; readonly cause?: unknown }) {
    super(props)
    genuine.add(this)
  }
}

/**
 * What a tool can fail with. Every variant carries a `message` written for the model: it is sent back as the
 * tool result so the model can correct itself.
 */
export type ToolError = InvalidArgument | ExecutionFailed | Internal

/** Constructors for the three `ToolError`s, and `ToolError.is` to recognise one. */
export const ToolError = {
  /** The arguments were refused; the model is told why and may retry. */
  InvalidArgument: (message: string): ToolError => new InvalidArgument({ message }),
  /** The tool ran and failed; the message is the model's error result. */
  ExecutionFailed: (message: string): ToolError => new ExecutionFailed({ message }),
  /** A fault in the tool or the library, not the model's doing. */
  Internal: (message: string): ToolError => new Internal({ message }),
  /** True for values built by these constructors (or subclasses); never throws, whatever `u` is. */
  is: (u: unknown): u is ToolError => typeof u === "object" && u !== null && genuine.has(u)
} as const
