import type { JsonSchema } from "./json-schema.ts"

/** One reason an argument value was refused: where (a JSON path) and why, short enough for the model to act on. */
export interface ArgumentIssue {
  readonly path: ReadonlyArray<string | number>
  readonly message: string
}

/**
 * A refused value. At most a bounded number of issues are kept (hostile arguments can carry a million
 * mistakes); `omittedIssues` counts the others that were found, and is absent when none were left out.
 */
export interface DecodeFailure {
  readonly ok: false
  readonly issues: ReadonlyArray<ArgumentIssue>
  readonly omittedIssues?: number
  /** Set when checking stopped at the first issue (arguments too large to look for all): more may exist. */
  readonly stoppedEarly?: true
}

/** The outcome of decoding a tool's arguments: the typed value, or the issues that refused it. */
export type DecodeResult<A> = { readonly ok: true; readonly value: A } | DecodeFailure

/**
 * The pair every typed tool is built on: the JSON Schema the model is shown and the decoder that accepts
 * exactly the values that schema allows. Produced once per tool from any supported schema source.
 */
export interface ArgumentCodec<A> {
  readonly jsonSchema: JsonSchema
  /** Decodes an already-parsed JSON value. Synchronous when the source allows it (all built-in sources do). */
  decode(input: unknown): DecodeResult<A> | Promise<DecodeResult<A>>
}
