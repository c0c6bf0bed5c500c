import { Effect } from "effect"
import type { ArgumentSchema, InferArguments } from "../schema/codec.ts"
import { formatIssues, makeArgumentCodec } from "../schema/codec.ts"
import type { ArgumentCodec } from "../schema/argument-codec.ts"
import type { Tool, ToolContext, ToolDefinition } from "./tool.ts"
import { describeThrown, runToolEffect, toToolError } from "./tool-constructors.ts"
import { ExecutionFailed, InvalidArgument } from "./tool-error.ts"
import { isToolFailure } from "./tool-failure.ts"
import { ToolMeta } from "./tool-meta.ts"

/** What a typed handler may return: a value, a promise of one, or an Effect producing one. */
export type HandlerResult = unknown

export interface ToolConfig<S extends ArgumentSchema, State> {
  readonly name: string
  readonly description: string
  /** Effect Schema, zod 4, zod 3, any Standard Schema with JSON Schema, or raw JSON Schema. Omit for no arguments. */
  readonly parameters?: S
  /** Creates the tool's own state; runs exactly once per registration (the factory call), never lazily. */
  readonly state?: () => State
  /**
   * Receives the decoded, typed arguments. Strings are returned to the model as they are, anything else as
   * JSON. Fail by throwing, rejecting, failing the Effect, or returning `toolFailure(message)`.
   */
  readonly execute: (args: InferArguments<S>, context: ToolContext, state: State) => HandlerResult
}

/** A `ToolDefinition` that also remembers its name and argument codec (for docs, tests and tooling). */
export interface TypedToolDefinition<A> extends ToolDefinition {
  readonly toolName: string
  readonly codec: ArgumentCodec<A>
}

const NO_ARGUMENTS = { type: "object", properties: {}, additionalProperties: false } as const

const kindOf = (value: unknown): string => (value === null ? "null" : Array.isArray(value) ? "array" : typeof value)

/** Parses and decodes the model's argument text; every refusal is an `InvalidArgument` the model can act on. */
const decodeArguments = async <A>(codec: ArgumentCodec<A>, argumentsJson: string): Promise<A> => {
  let parsed: unknown
  try {
    parsed = JSON.parse(argumentsJson)
  } catch (thrown) {
    throw new InvalidArgument({ message: `arguments are not valid JSON: ${describeThrown(thrown)}` })
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw new InvalidArgument({ message: `arguments must be a JSON object, got ${kindOf(parsed)}` })
  }
  const decoded = codec.decode(parsed)
  const result = decoded instanceof Promise ? await decoded : decoded
  if (!result.ok) throw new InvalidArgument({ message: formatIssues(result.issues) })
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

const settle = async (result: unknown, signal: AbortSignal): Promise<unknown> => {
  // A handler's Effect cannot require services: the type of `execute` admits none, so the cast is sound.
  if (Effect.isEffect(result)) return runToolEffect(result as Effect.Effect<unknown, unknown>, signal)
  return result
}

/**
 * Declares a tool with typed arguments: the schema becomes the JSON Schema every provider is shown, and the
 * handler only ever sees arguments that schema accepts.
 *
 * @example
 * const weather = defineTool({
 *   name: "get_weather",
 *   description: "Weather forecast for a city",
 *   parameters: z.object({ city: z.string(), days: z.int().min(1).max(14).optional() }),
 *   execute: ({ city, days }) => ({ city, days: days ?? 1, forecast: "sunny" })
 * })
 * worker.registerTool(weather)
 *
 * Gotchas: the codec is compiled here, once, so an invalid schema throws at definition time; the factory (and
 * `state`) runs at each registration.
 */
export function defineTool<S extends ArgumentSchema = ArgumentSchema, State = undefined>(
  config: ToolConfig<S, State>
): TypedToolDefinition<InferArguments<S>> {
  const codec = makeArgumentCodec((config.parameters ?? NO_ARGUMENTS) as S)
  const meta = ToolMeta.make(config.name).description(config.description).inputSchema(codec.jsonSchema)
  const execute = config.execute
  const factory = (): readonly [ToolMeta, Tool] => {
    const state = config.state === undefined ? (undefined as State) : config.state()
    const tool: Tool = {
      async execute(argumentsJson, context) {
        const args = await decodeArguments(codec, argumentsJson)
        let result: unknown
        try {
          result = await settle(execute(args, context, state), context.signal)
        } catch (thrown) {
          throw toToolError(thrown)
        }
        return renderOutput(result)
      }
    }
    return [meta, tool] as const
  }
  return Object.assign(factory, { toolName: meta.name, codec })
}
