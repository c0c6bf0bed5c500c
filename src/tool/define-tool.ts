import { Effect } from "effect"
import type { ArgumentSchema, InferArguments, TypedJsonSchema } from "../schema/codec.ts"
import { formatIssues, isBoundedCodec, makeArgumentCodec } from "../schema/codec.ts"
import { RecursiveSchemaError, UnsupportedSchemaError } from "../schema/normalize.ts"
import { quote } from "../schema/quote.ts"
import type { ArgumentCodec, DecodeResult } from "../schema/argument-codec.ts"
import type { ParsedArguments, Tool, ToolContext, ToolDefinition } from "./tool.ts"
import { describeThrown, runToolEffect, toToolError } from "./tool-constructors.ts"
import { ExecutionFailed, InvalidArgument } from "./tool-error.ts"
import { type ToolFailure, isToolFailure } from "./tool-failure.ts"
import { outputObserver } from "./output-observer.ts"
import { ToolMeta } from "./tool-meta.ts"
import { parseArguments } from "./parse-arguments.ts"

/**
 * What `defineTool` takes: the tool's name and description as the model sees them, its argument schema
 * (`parameters`; none means no arguments), optional per-registration `state`, and the `execute` handler.
 */
export interface ToolConfig<S extends ArgumentSchema, State, Out = unknown> {
  readonly name: string
  readonly description: string
  /** Effect Schema, zod 4, zod 3, any Standard Schema with JSON Schema, or raw JSON Schema. Omit for no arguments. */
  readonly parameters?: S
  /** Creates the tool's own state; runs exactly once per registration (the factory call), never lazily. */
  readonly state?: () => State
  /**
   * Cap, in UTF-8 bytes, on one call's output or error text sent to the model (at least 256, or `Infinity`);
   * longer text is cut with a marker saying how much was dropped. The Worker's `maxToolOutputBytes` (default
   * 100 KiB) when omitted.
   */
  readonly maxOutputBytes?: number
  /**
   * Receives the decoded, typed arguments. Strings are returned to the model as they are, anything else as
   * JSON. Fail by throwing, rejecting, failing the Effect, or returning `toolFailure(message)`.
   */
  readonly execute: (args: InferArguments<S>, context: ToolContext, state: State) => Out
}

/**
 * What a handler's result stands for: the value of a promise or of an Effect's success, without the
 * `toolFailure(…)` results (those are failures, not output).
 */
export type ToolOutput<Out> = Exclude<Out extends Effect.Effect<infer A, infer _E, infer _R> ? A : Awaited<Out>, ToolFailure>

/**
 * A `ToolDefinition` that also remembers its name, its argument codec and its types: `A` the decoded arguments,
 * `O` what the handler returns (before it is rendered to text). Typed hooks (`addToolHook`) read both.
 */
export interface TypedToolDefinition<A, O = unknown> extends ToolDefinition {
  readonly toolName: string
  readonly codec: ArgumentCodec<A>
  /** Type-only: the handler's output type. Never set at run time. */
  readonly "~output"?: O
}

/** Which definition built each tool instance: a typed hook applies only to the tools its definition built. */
const builtBy = new WeakMap<Tool, ToolDefinition>()

/** @internal The `defineTool` definition that built `tool`, if one did. */
export const definitionOf = (tool: Tool): ToolDefinition | undefined => builtBy.get(tool)

/** The argument type of a tool declared without `parameters`: it accepts exactly `{}`. */
export type NoArguments = TypedJsonSchema<Record<string, never>>

const NO_ARGUMENTS = { type: "object", properties: {}, additionalProperties: false } as const

/**
 * The codec of one tool's `parameters`. A schema that cannot be used fails here with a tagged error naming the
 * tool (and, where the source knows it, the property): a library's own untagged throw (zod's "Date cannot be
 * represented in JSON Schema") is never what the author sees.
 */
const codecFor = <S extends ArgumentSchema>(tool: string, schema: S): ArgumentCodec<InferArguments<S>> => {
  try {
    return makeArgumentCodec(schema)
  } catch (thrown) {
    const prefix = `tool ${quote(String(tool))}: `
    if (thrown instanceof RecursiveSchemaError) throw new RecursiveSchemaError({ ref: thrown.ref, tool, message: prefix + thrown.message, cause: thrown })
    if (thrown instanceof UnsupportedSchemaError) {
      throw new UnsupportedSchemaError({ ...(thrown.path === undefined ? {} : { path: thrown.path }), tool, message: prefix + thrown.message, cause: thrown })
    }
    throw new UnsupportedSchemaError({ tool, message: `${prefix}its parameters cannot be turned into a JSON Schema: ${describeThrown(thrown)}`, cause: thrown })
  }
}


const decodedValue = <A>(result: DecodeResult<A>): A => {
  if (!result.ok) throw new InvalidArgument({ message: formatIssues(result) })
  return result.value
}

/** Output rule: strings as they are, anything else as JSON (`undefined` has no JSON form and becomes `null`). */
const renderOutput = (value: unknown): string => {
  if (typeof value === "string") return value
  if (isToolFailure(value)) throw new ExecutionFailed({ message: value.message })
  try {
    return JSON.stringify(value) ?? "null"
  } catch (thrown) {
    throw new ExecutionFailed({ message: `tool output is not JSON-serialisable: ${describeThrown(thrown)}` })
  }
}

/** Reports the handler's value to the call's observer (a typed PostToolCall hook), then renders it. */
const observedOutput = (observe: (value: unknown) => void) => (value: unknown): string => {
  if (!isToolFailure(value)) observe(value)
  return renderOutput(value)
}

const rejectAsToolError = (thrown: unknown): Promise<never> => Promise.reject(toToolError(thrown))

const isThenable = (value: unknown): value is PromiseLike<unknown> =>
  typeof value === "object" && value !== null && typeof (value as { then?: unknown }).then === "function"

/**
 * Runs the handler and renders its result. Written without `async` and without per-call closures on purpose:
 * this is the dispatch hot path, where every extra async frame is a promise and a microtask, and every closure
 * created per call costs a `__name` property definition under tsx/esbuild (see docs/benchmarks.md).
 */
const runHandler = <A, State>(
  handler: (args: A, context: ToolContext, state: State) => unknown,
  args: A,
  context: ToolContext,
  state: State,
  rendered: boolean
): Promise<unknown> => {
  try {
    const result = handler(args, context, state)
    // Only calls whose caller asked for the value pay for a closure (see above).
    const observe = outputObserver(context)
    // The caller renders the value in its own reaction (`executeUnrendered`): one promise and one tick fewer.
    if (!rendered && observe === undefined && result instanceof Promise) return result
    const render = observe === undefined ? renderOutput : observedOutput(observe)
    if (isThenable(result)) return Promise.resolve(result).then(render, rejectAsToolError)
    // A handler's Effect cannot require services: the type of `execute` admits none, so the cast is sound.
    if (Effect.isEffect(result)) return runToolEffect(result as Effect.Effect<unknown, unknown>, context.signal).then(render)
    return Promise.resolve(render(result))
  } catch (thrown) {
    return rejectAsToolError(thrown)
  }
}

/** Set by the typed tool class's static block: the only ways to reach its unrendered entries. */
let unrendered: (tool: Tool, text: string, context: ToolContext) => Promise<unknown>
let parsedUnrendered: (tool: Tool, args: BoundedArguments, context: ToolContext) => Promise<unknown>

/**
 * @internal Whether `tool` is a `defineTool` tool, whose handler's value `executeUnrendered` can hand over
 * before it becomes text.
 */
export const isTypedTool = (tool: Tool): boolean => tool instanceof TypedTool

/**
 * @internal A typed tool's call from the argument text, resolving with what its `execute` would resolve with, or
 * with the handler's value before `renderToolOutput` turns it into that text (strings are their own text), and
 * rejecting with what it would reject with, or with a value `toToolError` maps onto it. For callers that race
 * the call and map its result in one reaction of their own (the tool server, the Worker); a parsed value goes
 * through `executeParsedUnrendered`.
 */
export const executeUnrendered = (tool: Tool, text: string, context: ToolContext): Promise<unknown> => unrendered(tool, text, context)

/** A parsed value and the bounds its parser counted, as the Worker prepares a call (its `CallArguments`). */
export interface BoundedArguments {
  readonly value: ParsedArguments
  readonly depthBound?: number
  readonly sizeBound?: number
}

/**
 * @internal `executeUnrendered` with a parsed value, for a `tool` the caller has just found `isTypedTool`: one
 * entry from the Worker's call to the handler, with no dispatch on the arguments' form and no second class check
 * (a tool of another class throws a `TypeError` here, as reading a private field of it does). Answers what
 * `executeParsed` answers, with the handler's value unrendered as `executeUnrendered` gives it. `depthBound` and
 * `sizeBound` are upper bounds the value's parser counted (see `BoundedCodec`).
 */
export const executeParsedUnrendered = (tool: Tool, args: BoundedArguments, context: ToolContext): Promise<unknown> =>
  parsedUnrendered(tool, args, context)

/** @internal The text a typed tool's value is sent as (throws `ExecutionFailed` for a `toolFailure` or a value with no JSON form). */
export const renderToolOutput: (value: unknown) => string = renderOutput

/**
 * The instance a typed tool's factory makes. A class, so that a registration allocates one small object and the
 * methods live once on the prototype (closures per instance cost memory per registered tool, see
 * docs/benchmarks.md). `execute` parses the text and hands over to `executeParsed`, which a caller that parsed
 * the text already calls directly: the arguments are parsed once either way.
 */
class TypedTool<A, State> implements Tool {
  readonly #codec: ArgumentCodec<A>
  readonly #handler: (args: A, context: ToolContext, state: State) => unknown
  readonly #state: State

  constructor(codec: ArgumentCodec<A>, handler: (args: A, context: ToolContext, state: State) => unknown, state: State) {
    this.#codec = codec
    this.#handler = handler
    this.#state = state
  }

  static {
    unrendered = (tool, text, context) => {
      if (!(tool instanceof TypedTool)) throw new TypeError("executeUnrendered: not a defineTool tool")
      return tool.#fromText(text, context, false)
    }
    parsedUnrendered = (tool, args, context) => (tool as TypedTool<unknown, unknown>).#fromValue(args.value, context, false, args.depthBound, args.sizeBound)
  }

  execute(argumentsJson: string, context: ToolContext): Promise<string> {
    return this.#fromText(argumentsJson, context, true) as Promise<string>
  }

  executeParsed(args: ParsedArguments, context: ToolContext): Promise<string> {
    return this.#fromValue(args, context, true) as Promise<string>
  }

  #fromText(argumentsJson: string, context: ToolContext, rendered: boolean): Promise<unknown> {
    let parsed: ParsedArguments
    try {
      parsed = parseArguments(argumentsJson)
    } catch (thrown) {
      return rejectAsToolError(thrown)
    }
    // Every value of the text takes at least one of its characters (and each level of nesting one more): its
    // length bounds both, so short argument text (the usual) spares the codec measuring the value again.
    return this.#fromValue(parsed, context, rendered, argumentsJson.length, argumentsJson.length)
  }

  #fromValue(args: ParsedArguments, context: ToolContext, rendered: boolean, depthBound?: number, sizeBound?: number): Promise<unknown> {
    let checked: unknown
    try {
      // Bounds its parser counted spare the codec measuring the value again (no field per instance for this:
      // memory per registered tool counts too). `checkWithin` answers the value itself when it passed and there
      // is no library decode: no result record to take apart (decision 0089).
      const codec = this.#codec
      checked =
        depthBound !== undefined && sizeBound !== undefined && isBoundedCodec(codec)
          ? codec.checkWithin(args, depthBound, sizeBound)
          : codec.decode(args)
    } catch (thrown) {
      return rejectAsToolError(thrown)
    }
    if (checked === args) return runHandler(this.#handler, args as A, context, this.#state, rendered)
    const decoded = checked as DecodeResult<A> | Promise<DecodeResult<A>>
    if (decoded instanceof Promise) {
      // Only a Standard Schema with an asynchronous validate gets here; the closure is off the hot path.
      return decoded.then((result) => runHandler(this.#handler, decodedValue(result), context, this.#state, true), rejectAsToolError)
    }
    if (!decoded.ok) return rejectAsToolError(new InvalidArgument({ message: formatIssues(decoded) }))
    return runHandler(this.#handler, decoded.value, context, this.#state, rendered)
  }
}

/**
 * Declares a tool with typed arguments: the schema becomes the JSON Schema every provider is shown, and the
 * handler only ever sees arguments that schema accepts.
 *
 * @example
 * ```ts
 * const weather = defineTool({
 *   name: "get_weather",
 *   description: "Weather forecast for a city",
 *   parameters: z.object({ city: z.string(), days: z.int().min(1).max(14).optional() }),
 *   execute: ({ city, days }) => ({ city, days: days ?? 1, forecast: "sunny" })
 * })
 * worker.registerTool(weather)
 * ```
 *
 * @remarks Gotchas: the codec is compiled here, once, so an invalid schema throws at definition time; the factory (and
 * `state`) runs at each registration.
 */
export function defineTool<S extends ArgumentSchema = NoArguments, State = undefined, Out = unknown>(
  config: ToolConfig<S, State, Out>
): TypedToolDefinition<InferArguments<S>, ToolOutput<Out>> {
  const codec = codecFor(config.name, (config.parameters ?? NO_ARGUMENTS) as S)
  const described = ToolMeta.make(config.name).description(config.description).inputSchema(codec.jsonSchema)
  const meta = config.maxOutputBytes === undefined ? described : described.outputLimit(config.maxOutputBytes)
  const factory = (): readonly [ToolMeta, Tool] => {
    const state = config.state === undefined ? (undefined as State) : config.state()
    const tool = new TypedTool(codec, config.execute, state)
    builtBy.set(tool, definition)
    return [meta, tool] as const
  }
  const definition = Object.assign(factory, { toolName: meta.name, codec })
  return definition
}
