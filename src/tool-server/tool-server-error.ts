import { TaggedError } from "../error/tagged-error.ts"
import type { SchemaLint } from "../schema/lint.ts"
import type { ToolError } from "../tool/tool-error.ts"

/** A tool with this name is already registered (or appears twice in one batch). Nothing was registered. */
export class DuplicateName extends TaggedError("DuplicateName")<{ readonly toolName: string; readonly message: string }> {}

/** A factory threw, produced something that is not `[ToolMeta, Tool]`, or its schema fails a provider lint error. */
export class RegistrationFailed extends TaggedError("RegistrationFailed")<{
  readonly toolName: string | undefined
  readonly message: string
  readonly cause?: unknown
  /** The provider lint errors that refused the tool, when that was the reason. */
  readonly lint?: ReadonlyArray<SchemaLint>
}> {}

/**
 * Call errors built by the constructors below. `isToolCallError` runs on whatever a tool rejects with, so it
 * must not read `_tag` (a throwing getter, a hostile Proxy): `WeakSet.has` runs no user code and cannot be forged.
 */
const genuine = new WeakSet<object>()

/** No tool of that name is registered. */
export class ToolNotFound extends TaggedError("ToolNotFound")<{ readonly toolName: string; readonly message: string }> {
  constructor(props: { readonly toolName: string; readonly message: string; readonly cause?: unknown }) {
    super(props)
    genuine.add(this)
  }
}

/** The tool ran and failed; `error` is its `ToolError` (its message is what the model should read). */
export class ToolExecution extends TaggedError("ToolExecution")<{
  readonly toolName: string
  readonly error: ToolError
  readonly message: string
}> {
  constructor(props: { readonly toolName: string; readonly error: ToolError; readonly message: string; readonly cause?: unknown }) {
    super(props)
    genuine.add(this)
  }
}

/** The per-call deadline passed. The tool's signal was aborted; its late result, if any, is discarded. */
export class ToolTimeout extends TaggedError("ToolTimeout")<{
  readonly toolName: string
  readonly afterMs: number
  readonly message: string
}> {
  constructor(props: { readonly toolName: string; readonly afterMs: number; readonly message: string; readonly cause?: unknown }) {
    super(props)
    genuine.add(this)
  }
}

/**
 * The caller's signal aborted the call; its reason is the `cause`. The tool was told through its signal and not
 * awaited further.
 */
export class ToolCancelled extends TaggedError("ToolCancelled")<{ readonly toolName: string; readonly message: string }> {
  constructor(props: { readonly toolName: string; readonly message: string; readonly cause?: unknown }) {
    super(props)
    genuine.add(this)
  }
}

/** What `callTool` can fail with. */
export type ToolCallError = ToolNotFound | ToolExecution | ToolTimeout | ToolCancelled

/** What registration can fail with. */
export type ToolRegistrationError = DuplicateName | RegistrationFailed

/** Every error the tool server raises: the call errors and the registration errors. */
export type ToolServerError = ToolCallError | ToolRegistrationError

/** True for the call errors this package builds; never throws, whatever `u` is (a look-alike is not one). */
export const isToolCallError = (u: unknown): u is ToolCallError => typeof u === "object" && u !== null && genuine.has(u)
