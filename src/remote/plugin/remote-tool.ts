import { makeArgumentCodec, type ArgumentCodecOptions, type ArgumentSchema, type InferArguments, type TypedJsonSchema } from "../../schema/codec.ts"
import type { ArgumentCodec } from "../../schema/argument-codec.ts"
import type { JsonSchema } from "../../schema/json-schema.ts"
import { lintToolSpec } from "../../schema/lint.ts"
import { NEUTRAL_TOOL_NAME } from "../../schema/tool-names.ts"
import { PluginConfigError } from "./plugin-error.ts"

/** What a handler is given next to its decoded arguments. */
export interface RemoteCallContext {
  /** The tool's name. */
  readonly name: string
  /** The model's call id, as the host sent it. */
  readonly callId: string
  /** The model's original argument text (for logging; the decoded arguments are what to act on). */
  readonly rawArguments: string
  /** The host instance that made the call. */
  readonly instanceId: string | undefined
  /** Aborted when the host gives up on the call (its request closes), at the tool's deadline, or at `stop()`. */
  readonly signal: AbortSignal
}

/** How a tool is announced to the host (everything but its handler). */
export interface RemoteToolOptions<S extends ArgumentSchema> {
  /** 1–64 characters of `[A-Za-z0-9_.-]`; the model sees this name. */
  readonly name: string
  /** What the model reads to decide when to call the tool. Default `""`. */
  readonly description?: string
  /**
   * Effect Schema, zod 4 / 3, a Standard JSON Schema or raw JSON Schema. Omit for a tool without arguments. The host
   * reads it as untrusted: every `pattern` must be one the linear-time engine runs (no lookaround or
   * backreferences), else `remoteTool` throws `UnsupportedSchemaError` (docs/security.md).
   */
  readonly parameters?: S
  /** One call's deadline, in seconds, in (0, 300]. The host is told it and the plugin aborts the handler at it. Default 30. */
  readonly timeoutSeconds?: number
  /** `null` / omitted: every role; a name: only that role. */
  readonly role?: string | null
  /** Bounds of the argument codec (see `makeArgumentCodec`). */
  readonly codec?: ArgumentCodecOptions
}

/** One tool a plugin serves: what the host is told, the codec that enforces it, and the handler. */
export interface RemoteTool<A = unknown> {
  readonly _tag: "RemoteTool"
  readonly name: string
  readonly description: string
  /** The normalised JSON Schema sent as `parameters`: exactly what `codec` accepts. */
  readonly parameters: JsonSchema
  readonly timeoutSeconds: number
  readonly role: string | null
  readonly codec: ArgumentCodec<A>
  /**
   * Receives arguments the codec accepted. Return a value, throw, or return `toolFailure` / `remoteFailure`.
   * Method syntax on purpose: a `RemoteTool<{ city: string }>` is a `RemoteTool` (its codec guards the handler).
   */
  handler(args: A, context: RemoteCallContext): unknown
}

/** The config of the function form: the announcement plus the handler. */
export interface RemoteToolConfig<S extends ArgumentSchema> extends RemoteToolOptions<S> {
  /**
   * The handler: gets arguments the schema decoded (typed from `parameters`) and the call's context. Return a
   * value (a string as it is, anything else as JSON), throw, or return `toolFailure` / `remoteFailure`.
   */
  readonly execute: (args: InferArguments<S>, context: RemoteCallContext) => unknown
}

/** The argument type of a tool declared without `parameters`: it accepts exactly `{}`. */
export type NoArguments = TypedJsonSchema<Record<string, never>>

const NO_ARGUMENTS = { type: "object", properties: {}, additionalProperties: false } as const

/** The seed's bounds: at most five minutes per synchronous call, thirty seconds unless said otherwise. */
export const MAX_TIMEOUT_SECONDS = 300
/** A remote tool call's deadline when `timeoutSeconds` is not given, in seconds. */
export const DEFAULT_TIMEOUT_SECONDS = 30

/**
 * Checks the announcement and compiles the codec, so everything the host would refuse (a bad name, a timeout out
 * of range, a schema some provider would reject) fails here, at declaration, with the reason — not at the
 * host as a 422 after the plugin is already running.
 */
export const makeRemoteTool = <S extends ArgumentSchema>(
  options: RemoteToolOptions<S>,
  handler: (args: InferArguments<S>, context: RemoteCallContext) => unknown
): RemoteTool<InferArguments<S>> => {
  const { name } = options
  if (typeof name !== "string" || !NEUTRAL_TOOL_NAME.test(name)) {
    throw new PluginConfigError({ field: "name", message: `tool name ${JSON.stringify(String(name)).slice(0, 90)} must be 1 to 64 of [A-Za-z0-9_.-]` })
  }
  const timeoutSeconds = options.timeoutSeconds ?? DEFAULT_TIMEOUT_SECONDS
  if (typeof timeoutSeconds !== "number" || !(timeoutSeconds > 0 && timeoutSeconds <= MAX_TIMEOUT_SECONDS)) {
    throw new PluginConfigError({ field: "timeoutSeconds", message: `tool "${name}": timeoutSeconds must be in (0, ${MAX_TIMEOUT_SECONDS}], got ${String(timeoutSeconds)}` })
  }
  const role = options.role ?? null
  if (role !== null && (typeof role !== "string" || role === "")) {
    throw new PluginConfigError({ field: "role", message: `tool "${name}": role must be a non-empty string or null` })
  }
  const description = options.description ?? ""
  if (typeof description !== "string") throw new PluginConfigError({ field: "description", message: `tool "${name}": description must be a string` })
  // The host reads the schema as untrusted and refuses a pattern the linear-time engine cannot run: said here,
  // at definition, rather than at registration.
  const codec = makeArgumentCodec((options.parameters ?? NO_ARGUMENTS) as S, { ...options.codec, untrustedSchema: true })
  const refused = lintToolSpec({ name, description, inputSchema: codec.jsonSchema }).filter((lint) => lint.severity === "error")
  if (refused.length > 0) {
    const first = refused[0]!
    throw new PluginConfigError({
      field: "parameters",
      message: `tool "${name}": ${first.provider} would refuse the schema${first.path === "" ? "" : ` at ${first.path}`}: ${first.message}`
    })
  }
  return Object.freeze({ _tag: "RemoteTool", name, description, parameters: codec.jsonSchema, timeoutSeconds, role, codec, handler })
}

/**
 * The plain function form of a remote tool. Everything the host would refuse (a bad name, a timeout outside
 * (0, 300] s, a schema some provider rejects) throws `PluginConfigError` here, at declaration.
 *
 * @example
 * ```ts
 * import { remoteTool, startPlugin } from "llm-worker/remote/plugin"
 * import { z } from "zod"
 *
 * const weather = remoteTool({
 *   name: "get_weather",
 *   description: "Weather for a city",
 *   parameters: z.object({ city: z.string() }),
 *   execute: ({ city }) => ({ city, temp_c: 22 })
 * })
 * await startPlugin({ source: "plugin:weather", tools: [weather] })
 * ```
 */
export function remoteTool<S extends ArgumentSchema = NoArguments>(config: RemoteToolConfig<S>): RemoteTool<InferArguments<S>> {
  return makeRemoteTool(config, config.execute)
}

export const isRemoteTool = (value: unknown): value is RemoteTool =>
  typeof value === "object" && value !== null && (value as { _tag?: unknown })._tag === "RemoteTool"
