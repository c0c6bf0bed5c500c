import { Effect } from "effect"
import { clip } from "../../schema/quote.ts"
import { describeThrown } from "../../tool/describe-thrown.ts"
import { runToolEffect } from "../../tool/tool-constructors.ts"
import { isToolFailure } from "../../tool/tool-failure.ts"

/**
 * What a plugin answers a callback with, per the contract: `{"output": …}` on success, `{"is_error": true,
 * "error": "<ErrorName>: <message>", "output"?: …}` on failure. The result is always wrapped in `output`, as the
 * seed recommends, so a handler's own `is_error` / `error` keys are data and never mistaken for metadata.
 */
export type CallbackBody =
  | { readonly output: unknown }
  | { readonly is_error: true; readonly error: string; readonly output?: unknown }

/** A handler's way to fail with a message of its own and, optionally, an output the model also sees. */
export interface RemoteFailure {
  readonly _tag: "RemoteFailure"
  readonly error: string
  readonly output?: unknown
}

/** `return remoteFailure("CITY_NOT_FOUND", { reason: "no such city" })` — the seed's error dict, typed. */
export const remoteFailure = (error: string, output?: unknown): RemoteFailure =>
  Object.freeze(output === undefined ? { _tag: "RemoteFailure" as const, error } : { _tag: "RemoteFailure" as const, error, output })

const isRemoteFailure = (u: unknown): u is RemoteFailure =>
  typeof u === "object" && u !== null && (u as { _tag?: unknown })._tag === "RemoteFailure" && typeof (u as { error?: unknown }).error === "string"

/** Bound of an error name and of the whole error line; a hostile error can carry a 50 MiB message. */
const NAME_CHARS = 80
export const ERROR_CHARS = 8192

const safeName = (thrown: unknown): string => {
  if (typeof thrown !== "object" || thrown === null) return "Error"
  try {
    // A tagged error (Effect) names itself by its tag; others by `name`. Either read may run a hostile getter.
    const tag: unknown = (thrown as { _tag?: unknown })._tag
    const name: unknown = (thrown as { name?: unknown }).name
    const chosen = typeof name === "string" && name !== "" && name !== "Error" ? name : typeof tag === "string" && tag !== "" ? tag : name
    return typeof chosen === "string" && chosen !== "" ? clip(chosen, NAME_CHARS) : "Error"
  } catch {
    return "Error"
  }
}

/** `"<ErrorName>: <message>"` for anything thrown; never throws, always bounded. */
export const describeFailure = (thrown: unknown): string => `${safeName(thrown)}: ${describeThrown(thrown, ERROR_CHARS)}`

export const failureBody = (error: string, output?: unknown): CallbackBody =>
  output === undefined ? { is_error: true, error } : { is_error: true, error, output }

const fromValue = (value: unknown): CallbackBody => {
  if (isRemoteFailure(value)) return failureBody(clip(value.error, ERROR_CHARS), value.output)
  if (isToolFailure(value)) return failureBody(clip(value.message, ERROR_CHARS))
  // `undefined` has no JSON form: the model is told `null`, as local tools do.
  return { output: value === undefined ? null : value }
}

const fromThrown = (thrown: unknown): CallbackBody => failureBody(describeFailure(thrown))

const isThenable = (value: unknown): value is PromiseLike<unknown> =>
  typeof value === "object" && value !== null && typeof (value as { then?: unknown }).then === "function"

/**
 * Runs a handler to its callback body: the body itself when the handler answered synchronously (a plain value or
 * a throw), so the common case needs no promise, deadline or abort wiring; a promise otherwise. A throw, a
 * rejection or a failed Effect becomes an error body; nothing a handler does can reject the promise.
 */
export const runToBodyOrPending = <A, C extends { readonly signal: AbortSignal }>(
  tool: { handler(args: A, context: C): unknown },
  args: A,
  context: C
): CallbackBody | Promise<CallbackBody> => {
  try {
    const result: unknown = tool.handler(args, context)
    if (isThenable(result)) return Promise.resolve(result).then(fromValue, fromThrown)
    if (Effect.isEffect(result)) return runToolEffect(result as Effect.Effect<unknown, unknown>, context.signal).then(fromValue, fromThrown)
    return fromValue(result)
  } catch (thrown) {
    return fromThrown(thrown)
  }
}

/**
 * The response text. A result that is not JSON (a cycle, a BigInt, a hostile `toJSON`, nesting too deep for the
 * engine) becomes an error body saying so, never a 500 or a crash.
 */
export const serializeBody = (body: CallbackBody): string => {
  try {
    const text: unknown = JSON.stringify(body)
    if (typeof text === "string") return text
  } catch (thrown) {
    return JSON.stringify(failureBody(`OutputNotJson: the tool's result is not JSON-serialisable: ${describeThrown(thrown, 400)}`))
  }
  return JSON.stringify(failureBody("OutputNotJson: the tool's result is not JSON-serialisable"))
}
