import type { ArgumentCodec, ArgumentIssue } from "../../schema/argument-codec.ts"
import { isDeepFrozen } from "../../schema/canonical-json.ts"
import { isRawJsonSchema } from "../../schema/sources/raw.ts"
import { type ArgumentCodecOptions, type ArgumentSchema, type InferArguments, makeArgumentCodec } from "../../schema/codec.ts"
import type { JsonSchema } from "../../schema/json-schema.ts"
import { restoreStrictArguments } from "../../schema/provider-tools.ts"
import type { LlmClient } from "../client.ts"
import type { Request, ResponseFormat, ToolSpec } from "../request.ts"
import { anthropicFormatProblem, anthropicModelHasNativeFormat, openAiFormatSchema } from "../schemes/response-format.ts"
import { readJsonAnswer } from "./json-answer.ts"

/**
 * How the answer is asked for: the provider's native structured output, or (Anthropic models without it, or a
 * schema outside its subset) one forced tool whose arguments are the answer.
 */
export type StructuredOutputMode = "native" | "tool"

/** A decoded answer, or why it is not one: the JSON could not be read (`parse`) or broke the schema (`validate`). */
export type StructuredOutcome<A> =
  | { readonly ok: true; readonly value: A }
  | {
      readonly ok: false
      readonly stage: "parse" | "validate"
      readonly issues: ReadonlyArray<ArgumentIssue>
      readonly omittedIssues?: number
    }

/** What the answer must be. With neither `schema` nor `json`, free text (no plan). */
export interface OutputSpec<S extends ArgumentSchema | undefined> {
  /** Effect Schema, zod, Standard JSON Schema or raw JSON Schema, as for tool arguments; its root is an object. */
  readonly schema?: S
  /** JSON mode without a schema: any JSON object. Ignored when `schema` is given. */
  readonly json?: boolean
  /** A name for the schema (made into a valid wire name per provider); default `output`. */
  readonly name?: string
  /** Told to the model with the schema (or as the forced tool's description); none by default. */
  readonly description?: string
  /** `auto` (default): native where the provider and model have it, else a forced tool. */
  readonly mode?: "auto" | StructuredOutputMode
  /** Bounds of the schema and of the answer's value (as for tool arguments). */
  readonly codec?: ArgumentCodecOptions
}

/** The tool a forced-tool answer comes through; its arguments are the answer. */
export const ANSWER_TOOL_NAME = "structured_answer"

/**
 * How one structured answer is asked for and read back on one client, made by `planOutput` from an `OutputSpec`:
 * the request change that asks for it and the decoder that checks the answer against the same normalised schema.
 */
export interface OutputPlan<A> {
  /** `native` (the provider's response format) or `tool` (one forced tool whose arguments are the answer). */
  readonly mode: StructuredOutputMode
  /** The schema's name as given (`OutputSpec.name`, default `output`); each provider's wire name is made from it. */
  readonly name: string
  /** The normalised schema the provider is told about and the answer is decoded against; undefined in JSON mode. */
  readonly jsonSchema: JsonSchema | undefined
  /** The request with the format (or the forced tool) added. */
  apply(request: Request): Request
  /** Reads and validates the answer text (a text answer, or the forced tool's arguments). */
  decode(answer: string): Promise<StructuredOutcome<A>>
}

const ANY_OBJECT: JsonSchema = { type: "object" }

/**
 * Codecs by schema identity, for schemas that cannot change: library schemas (zod, Effect, Standard — immutable
 * values) and deep-frozen raw JSON Schema. A plain raw schema object could be edited between calls, so it is
 * normalised afresh each time. Only default bounds are cached (custom `codec` options build their own).
 */
const codecs = new WeakMap<object, ArgumentCodec<unknown>>()

const cacheable = (schema: ArgumentSchema): boolean => isDeepFrozen(schema) || !isRawJsonSchema(schema)

/** The codec of `schema` (cached where safe). @throws as `makeArgumentCodec`. */
export const outputCodec = <S extends ArgumentSchema>(schema: S, options?: ArgumentCodecOptions): ArgumentCodec<InferArguments<S>> => {
  if (options !== undefined || !cacheable(schema)) return makeArgumentCodec(schema, options)
  let codec = codecs.get(schema) as ArgumentCodec<InferArguments<S>> | undefined
  if (codec === undefined) {
    codec = makeArgumentCodec(schema)
    codecs.set(schema, codec as ArgumentCodec<unknown>)
  }
  return codec
}

/** The mode the client and schema allow; `native` is refused nowhere but Anthropic. */
const chooseMode = (client: LlmClient, schema: JsonSchema | undefined, wanted: OutputSpec<never>["mode"]): StructuredOutputMode => {
  if (wanted === "native" || wanted === "tool") return wanted
  if (client.scheme !== "anthropic") return "native"
  if (schema === undefined) return "tool" // Anthropic has no schema-less JSON mode
  return anthropicModelHasNativeFormat(client.model) && anthropicFormatProblem(schema) === undefined ? "native" : "tool"
}

/**
 * The plan for one structured answer on one client. The schema is normalised once (what the model is told is
 * what is accepted); an answer sent in OpenAI's strict dialect has its `null`s for optional properties turned
 * back into absent ones before decoding, exactly as tool arguments are.
 *
 * @throws RecursiveSchemaError / UnsupportedSchemaError for a schema that cannot be used (as `makeArgumentCodec`).
 */
export const planOutput = <S extends ArgumentSchema>(client: LlmClient, spec: OutputSpec<S>): OutputPlan<InferArguments<S>> => {
  const codec = spec.schema === undefined ? undefined : outputCodec(spec.schema, spec.codec)
  const jsonSchema = codec?.jsonSchema
  const name = spec.name ?? "output"
  const mode = chooseMode(client, jsonSchema, spec.mode)
  const strict = jsonSchema !== undefined && mode === "native" && client.scheme.startsWith("openai") && openAiFormatSchema(jsonSchema).strict
  const maxDepth = spec.codec?.maxArgumentDepth
  const format: ResponseFormat =
    jsonSchema === undefined
      ? { type: "json_object" }
      : { type: "json_schema", name, schema: jsonSchema, ...(spec.description === undefined ? {} : { description: spec.description }) }
  const tool: ToolSpec = {
    name: ANSWER_TOOL_NAME,
    description: spec.description ?? `Give the answer (${name}) as this tool's arguments.`,
    inputSchema: jsonSchema ?? ANY_OBJECT
  }
  return {
    mode,
    name,
    jsonSchema,
    apply: (request) =>
      mode === "native"
        ? { ...request, config: { ...request.config, responseFormat: format } }
        : {
            ...request,
            tools: [...request.tools, tool],
            config: { ...request.config, toolChoice: { type: "tool", name: ANSWER_TOOL_NAME } }
          },
    decode: async (answer) => {
      const read = readJsonAnswer(answer, maxDepth === undefined ? {} : { maxDepth })
      if (!read.ok) return { ok: false, stage: "parse", issues: [{ path: [], message: read.problem }] }
      if (codec === undefined) {
        const value = read.value
        return typeof value === "object" && value !== null && !Array.isArray(value)
          ? { ok: true, value: value as InferArguments<S> }
          : { ok: false, stage: "validate", issues: [{ path: [], message: "expected a JSON object" }] }
      }
      const value = strict ? restoreStrictArguments(codec.jsonSchema, read.value, maxDepth === undefined ? {} : { maxDepth }) : read.value
      const decoded = await codec.decode(value)
      if (decoded.ok) return decoded
      return {
        ok: false,
        stage: "validate",
        issues: decoded.issues,
        ...(decoded.omittedIssues === undefined ? {} : { omittedIssues: decoded.omittedIssues })
      }
    }
  }
}
