import type { Effect } from "effect"
import type { ArgumentCodec, DecodeResult } from "../schema/argument-codec.ts"
import { formatIssues } from "../schema/codec.ts"
import { quote } from "../schema/quote.ts"
import { type TypedToolDefinition, definitionOf } from "../tool/define-tool.ts"
import type { Tool, ToolDefinition } from "../tool/tool.ts"
import type { ToolMeta } from "../tool/tool-meta.ts"
import { describeSafely } from "./describe-safely.ts"
import { invokeHook } from "./hook-runner.ts"
import { ownResult } from "./hook-results.ts"
import { prepareArguments } from "./prepared-arguments.ts"
import type { Abort, Continue, Deny, HookFn, Pause, PreToolCallResult, Skip } from "./hooks.ts"
import { HookFailed } from "./worker-error.ts"
import type { WorkerCore } from "./worker-core.ts"

/**
 * Hooks registered for one typed tool (`worker.addToolHook(definition, point, hook)`). Where a plain PreToolCall
 * or PostToolCall hook sees argument text and result text for every tool, these see one tool's decoded arguments
 * (the schema's type) and its handler's return value before it becomes text; what they rewrite is checked
 * against the same schema. In a call's life (decision 0036):
 *
 *   model text ─▶ PreToolCall hooks ─▶ decode ─▶ typed PreToolCall ─▶ run ─▶ typed PostToolCall ─▶ text ─▶ PostToolCall hooks
 */

/** A call of a typed tool with its arguments decoded by the tool's own schema. */
export interface TypedToolCall<A> {
  /** The provider's id of the call (a result answers it by this id). */
  readonly callId: string
  readonly name: string
  readonly arguments: A
}

/** What a typed PreToolCall hook receives: the call with its decoded arguments, before the tool runs. */
export interface ToolPreCallInput<A> {
  /** The call, its arguments decoded by the tool's schema (and rewritten by earlier typed hooks, if they did). */
  readonly call: TypedToolCall<A>
  /** The registered tool's name, description, schema and other metadata. */
  readonly meta: ToolMeta
  /** The live instance (the same one every call of this registration uses). */
  readonly tool: Tool
}

/** What a typed PostToolCall hook receives after the tool succeeded: the decoded call and the handler's output. */
export interface ToolPostCallInput<A, O> {
  /** The call, its arguments decoded by the tool's schema (as the handler got them). */
  readonly call: TypedToolCall<A>
  /** What the handler returned (or what an earlier typed hook replaced it with), before it is rendered as text. */
  readonly output: O
  /** The registered tool's name, description, schema and other metadata. */
  readonly meta: ToolMeta
  /** The live instance (the same one every call of this registration uses). */
  readonly tool: Tool
}

/** Run the tool with these arguments instead; they must pass the tool's schema. */
export interface RewriteToolArguments<A> {
  readonly _tag: "RewriteArguments"
  readonly arguments: A
}

/** Send this output instead (rendered as the handler's would be: strings as they are, anything else as JSON). */
export interface RewriteToolOutput<O> {
  readonly _tag: "RewriteOutput"
  readonly output: O
}

/**
 * What a typed PreToolCall hook may return (build it with `ToolHook`): go on, run with rewritten arguments, or
 * skip / deny the call, pause or abort the run, as a plain PreToolCall hook may.
 */
export type ToolPreCallResult<A> = Continue | RewriteToolArguments<A> | Skip | Deny | Pause | Abort
/** What a typed PostToolCall hook may return (build it with `ToolHook`): go on, replace the output, or abort the run. */
export type ToolPostCallResult<O> = Continue | RewriteToolOutput<O> | Abort

/** Input and result of each typed hook point, for a tool with arguments `A` and output `O`. */
export interface ToolHookSignatures<A, O> {
  PreToolCall: { input: ToolPreCallInput<A>; result: ToolPreCallResult<A> }
  PostToolCall: { input: ToolPostCallInput<A, O>; result: ToolPostCallResult<O> }
}

/** The points a typed hook can be added at (`worker.addToolHook(definition, point, hook)`): `PreToolCall`, `PostToolCall`. */
export type ToolHookPoint = keyof ToolHookSignatures<unknown, unknown>

/** A typed hook: plain, async or Effect-returning, like any hook; nothing returned means "continue". */
export type ToolHookFn<P extends ToolHookPoint, A, O> = (
  input: ToolHookSignatures<A, O>[P]["input"]
) =>
  | ToolHookSignatures<A, O>[P]["result"]
  | void
  | Promise<ToolHookSignatures<A, O>[P]["result"] | void>
  | Effect.Effect<ToolHookSignatures<A, O>[P]["result"] | void, unknown>

const CONTINUE: Continue = Object.freeze({ _tag: "Continue" })

/**
 * Results for typed hooks. `rewriteArguments` and `rewriteOutput` are checked against the tool's types where the
 * hook is written: a value of the wrong shape does not compile.
 */
export const ToolHook = {
  /** Go on unchanged (the same as returning nothing). */
  continue: (): Continue => CONTINUE,
  /** PreToolCall: run the call with these arguments instead; they are checked against the tool's schema. */
  rewriteArguments: <A>(args: A): RewriteToolArguments<A> => ({ _tag: "RewriteArguments", arguments: args }),
  /** PostToolCall: send this output instead of the handler's (strings as they are, anything else as JSON). */
  rewriteOutput: <O>(output: O): RewriteToolOutput<O> => ({ _tag: "RewriteOutput", output }),
  /** PreToolCall: do not run the call; the model gets a result saying it was skipped, with `reason`. */
  skip: (reason: string): Skip => ({ _tag: "Skip", reason }),
  /** PreToolCall: do not run the call; the model gets an error result saying it was denied, with `reason`. */
  deny: (reason: string): Deny => ({ _tag: "Deny", reason }),
  /** PreToolCall: end the run as paused before this call runs; `resume()` continues from here. */
  pause: (reason = "paused"): Pause => ({ _tag: "Pause", reason }),
  /** End the run with `HookAborted`, with `reason` (at PreToolCall, without running this call). */
  abort: (reason: string): Abort => ({ _tag: "Abort", reason })
} as const

type AnyToolHook = (input: never) => unknown

interface Registered {
  readonly definition: ToolDefinition
  readonly codec: ArgumentCodec<unknown>
  readonly hook: AnyToolHook
}

/** Typed hooks by point and tool name, in registration order; shared by a worker's states like `HookRegistry`. */
export class ToolHookRegistry {
  readonly #points: { readonly [P in ToolHookPoint]: Map<string, Array<Registered>> } = {
    PreToolCall: new Map(),
    PostToolCall: new Map()
  }
  /** Typed hooks registered, at any point for any tool. */
  #count = 0

  add<A, O>(definition: TypedToolDefinition<A, O>, point: ToolHookPoint, hook: AnyToolHook): () => void {
    if (point !== "PreToolCall" && point !== "PostToolCall") {
      throw new TypeError(`addToolHook: ${JSON.stringify(String(point))} is not a typed hook point (PreToolCall or PostToolCall)`)
    }
    if (typeof definition !== "function" || typeof definition.toolName !== "string" || typeof definition.codec?.decode !== "function") {
      throw new TypeError("addToolHook: the first argument must be a tool definition made by defineTool")
    }
    if (typeof hook !== "function") throw new TypeError(`addToolHook: a ${point} hook must be a function`)
    const byName = this.#points[point]
    const list = byName.get(definition.toolName) ?? []
    byName.set(definition.toolName, list)
    const entry: Registered = { definition, codec: definition.codec as ArgumentCodec<unknown>, hook }
    list.push(entry)
    this.#count++
    return () => {
      const at = list.indexOf(entry)
      if (at >= 0) {
        list.splice(at, 1)
        this.#count--
      }
    }
  }

  /** Whether no typed hook is registered at all (the usual case: every call's check is one field read). */
  get empty(): boolean {
    return this.#count === 0
  }

  /** The hooks of `point` for this registered tool: only those whose definition built this very instance. */
  /** Whether any typed hook is registered at `point` for a tool of this name (a cheap check on every call). */
  has(point: ToolHookPoint, name: string): boolean {
    return (this.#points[point].get(name)?.length ?? 0) > 0
  }

  for(point: ToolHookPoint, name: string, tool: Tool): ReadonlyArray<Registered> {
    const list = this.#points[point].get(name)
    if (list === undefined || list.length === 0) return []
    const builder = definitionOf(tool)
    return builder === undefined ? [] : list.filter((entry) => entry.definition === builder)
  }
}

/** The decoded arguments, or undefined when they do not decode: then the tool itself answers the model. */
const decodeArguments = async (
  core: WorkerCore,
  meta: ToolMeta,
  codec: ArgumentCodec<unknown>,
  text: string
): Promise<{ readonly value: unknown } | undefined> => {
  // Checked and restored exactly as the call itself is; a call whose text does not decode reaches no typed hook.
  const prepared = prepareArguments(core, meta.schema, text)
  if (!prepared.ok) return undefined
  const result: DecodeResult<unknown> = await codec.decode(prepared.args.value)
  return result.ok ? { value: result.value } : undefined
}

const hookFailed = (point: ToolHookPoint, name: string, message: string, cause: unknown): HookFailed =>
  new HookFailed({ point, message: `${point} hook for tool ${quote(name)} ${message}`, cause })

/** A field of a hook's result, read once (plain JavaScript may return getters that throw). */
const field = (point: ToolHookPoint, name: string, produced: unknown, key: string): unknown => {
  try {
    return (produced as Record<string, unknown>)[key]
  } catch (thrown) {
    throw hookFailed(point, name, `returned a result whose ${key} cannot be read: ${describeSafely(thrown)}`, thrown)
  }
}

/** The text a rewritten value is sent as: the rule a `defineTool` handler's output follows. */
const rendered = (value: unknown): string | undefined => {
  if (typeof value === "string") return value
  return JSON.stringify(value) ?? "null"
}

const PRE_TAGS: ReadonlySet<string> = new Set(["Continue", "RewriteArguments", "Skip", "Deny", "Pause", "Abort"])
const POST_TAGS: ReadonlySet<string> = new Set(["Continue", "RewriteOutput", "Abort"])

/**
 * The typed PreToolCall hooks of one call, after the plain ones allowed it. Returns the argument text to run
 * with (rewritten or not) and the result that stopped the chain (skip, deny, pause, abort), if one did. A
 * rewrite that the tool's schema refuses is the hook's `HookFailed`, naming the issues.
 */
export const runToolPreHooks = async (
  core: WorkerCore,
  entry: { readonly meta: ToolMeta; readonly tool: Tool },
  call: { readonly callId: string; readonly name: string },
  argumentsText: string,
  signal: AbortSignal
): Promise<{ readonly arguments: string; readonly verdict?: PreToolCallResult }> => {
  const hooks = core.toolHooks.for("PreToolCall", call.name, entry.tool)
  if (hooks.length === 0) return { arguments: argumentsText }
  const first = hooks[0] as Registered
  const decoded = await decodeArguments(core, entry.meta, first.codec, argumentsText)
  if (decoded === undefined) return { arguments: argumentsText }
  let value = decoded.value
  let text = argumentsText
  for (const { hook, codec } of hooks) {
    const input = { call: { callId: call.callId, name: call.name, arguments: value }, meta: entry.meta, tool: entry.tool }
    const produced = await invokeHook("PreToolCall", hook as unknown as HookFn<"PreToolCall">, input as never, signal)
    if (produced === undefined) continue
    const tag = field("PreToolCall", call.name, produced, "_tag")
    if (tag !== "RewriteArguments") {
      const result = ownResult("PreToolCall", produced, PRE_TAGS) as PreToolCallResult
      if (result._tag === "Continue") continue
      return { arguments: text, verdict: result }
    }
    const rewrite = field("PreToolCall", call.name, produced, "arguments")
    let json: string | undefined
    try {
      json = JSON.stringify(rewrite)
    } catch (thrown) {
      throw hookFailed("PreToolCall", call.name, `rewrote the arguments to a value with no JSON form: ${describeSafely(thrown)}`, rewrite)
    }
    const parsed: unknown = json === undefined ? undefined : JSON.parse(json)
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
      throw hookFailed("PreToolCall", call.name, "rewrote the arguments to something that is not a JSON object", rewrite)
    }
    const checked = await codec.decode(parsed)
    if (!checked.ok) {
      throw hookFailed("PreToolCall", call.name, `rewrote the arguments to a value its schema refuses: ${formatIssues(checked)}`, rewrite)
    }
    value = checked.value
    text = json as string
  }
  return { arguments: text }
}

/**
 * The typed PostToolCall hooks of one successful call, before the plain ones see its text. `output` is what the
 * handler returned. Returns the text to send when a hook rewrote it, and the abort that stopped the chain, if
 * one did. A rewrite with no JSON form is the hook's `HookFailed`.
 */
export const runToolPostHooks = async (
  core: WorkerCore,
  job: { readonly meta: ToolMeta; readonly tool: Tool; readonly arguments: string },
  call: { readonly callId: string; readonly name: string },
  output: unknown,
  signal: AbortSignal
): Promise<{ readonly output?: string; readonly abort?: Abort }> => {
  const hooks = core.toolHooks.for("PostToolCall", call.name, job.tool)
  if (hooks.length === 0) return {}
  const decoded = await decodeArguments(core, job.meta, (hooks[0] as Registered).codec, job.arguments)
  if (decoded === undefined) return {}
  let value = output
  let text: string | undefined
  for (const { hook } of hooks) {
    const input = { call: { callId: call.callId, name: call.name, arguments: decoded.value }, output: value, meta: job.meta, tool: job.tool }
    const produced = await invokeHook("PostToolCall", hook as unknown as HookFn<"PostToolCall">, input as never, signal)
    if (produced === undefined) continue
    const tag = field("PostToolCall", call.name, produced, "_tag")
    if (tag !== "RewriteOutput") {
      const result = ownResult("PostToolCall", produced, POST_TAGS)
      if (result._tag === "Abort") return { ...(text === undefined ? {} : { output: text }), abort: result as Abort }
      continue
    }
    const rewrite = field("PostToolCall", call.name, produced, "output")
    try {
      text = rendered(rewrite)
    } catch (thrown) {
      throw hookFailed("PostToolCall", call.name, `rewrote the output to a value with no JSON form: ${describeSafely(thrown)}`, rewrite)
    }
    value = rewrite
  }
  return text === undefined ? {} : { output: text }
}
