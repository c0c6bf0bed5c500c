import { Effect } from "effect"
import { ACCESS_KEY_HEADER, REGISTRANT_TOKEN_HEADER } from "../remote/wire.ts"
import type { ArgumentSchema, InferArguments } from "../schema/codec.ts"
import { isRawJsonSchema } from "../schema/sources/raw.ts"
import { DEFAULT_MAX_DOCUMENT_DEPTH, jsonTextDepth, tooDeepMessage } from "../schema/json-depth.ts"
import { outputCodec } from "../llm/completion/output-plan.ts"
import { untrustedPatternProblem } from "../schema/regex/schema-patterns.ts"
import { fetchBoundByAbort } from "../llm/transport/abort-bound.ts"
import { readCapped } from "../llm/transport/read-capped.ts"
import {
  type FallbackHop,
  type GatedOverride,
  isPluginLlmError,
  PluginLlmBudgetExceeded,
  PluginLlmCancelled,
  type PluginLlmError,
  PluginLlmInputError,
  PluginLlmProviderUnavailable,
  PluginLlmRateLimited,
  PluginLlmSchemaError,
  PluginLlmTimeoutError,
  PluginLlmTrustError,
  type TimeoutSource
} from "./errors.ts"
import type { CallOptions, CompleteCallOptions, CompleteResult, PluginLlm, StructuredCallOptions, StructuredResult } from "./plugin-llm.ts"
import { structuredSchemaOf } from "./plugin-llm.ts"

/** Where the host's HTTP lane is and how a remote plugin proves who it is. */
export interface RemotePluginLlmOptions {
  /** The host, e.g. `http://127.0.0.1:48911`. */
  readonly baseUrl: string
  /** The token the host issued at the plugin's first registration; it names the plugin (its source). */
  readonly registrantToken: string
  /** When the host requires one (`x-llm-worker-access-key`). */
  readonly accessKey?: string
  /** The `fetch` requests to the host are made with (default the global one). */
  readonly fetch?: typeof globalThis.fetch
  /** Largest response body read (default 8 MiB): the host is trusted less than in-process code. */
  readonly maxResponseBytes?: number
  /**
   * Deepest nesting of an answer's JSON (default 256), counted on the text before parsing: a deeper answer is
   * `PluginLlmProviderUnavailable`, never a stack overflow in the keys' conversion or the schema's decoder.
   */
  readonly maxResponseDepth?: number
}

const camel = (key: string): string => key.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase())
const camelKeys = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(camelKeys)
  if (typeof value !== "object" || value === null) return value
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [camel(k), camelKeys(v)]))
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value)

const shared = (options: CallOptions): Record<string, unknown> => ({
  provider: options.provider,
  model: options.model,
  agent_id: options.agentId,
  profile: options.profile,
  task: options.task,
  temperature: options.temperature,
  max_tokens: options.maxTokens,
  timeout: options.timeout,
  purpose: options.purpose
})

/** Image bytes travel as base64 text; the host sniffs the type again. */
const wireInput = (input: unknown): unknown =>
  Array.isArray(input)
    ? input.map((block: unknown) => {
        if (!isRecord(block) || block["type"] !== "image") return block
        const { data, mimeType, ...rest } = block
        const bytes = data instanceof Uint8Array ? data : data instanceof ArrayBuffer ? new Uint8Array(data) : undefined
        return { ...rest, ...(data === undefined ? {} : { data: bytes === undefined ? data : Buffer.from(bytes).toString("base64") }), ...(mimeType === undefined ? {} : { mime_type: mimeType }) }
      })
    : input

/** The error the host described, as the same typed error an in-process call throws. */
const errorFrom = (status: number, body: Record<string, unknown>): PluginLlmError => {
  const message = typeof body["error"] === "string" ? body["error"] : `host answered HTTP ${status}`
  const hops = (Array.isArray(body["hops"]) ? body["hops"] : []) as ReadonlyArray<FallbackHop>
  switch (body["error_type"]) {
    case "PluginLlmTrustError":
      return new PluginLlmTrustError({ pluginId: String(body["plugin_id"] ?? ""), override: String(body["override"]) as GatedOverride, configKey: String(body["config_key"] ?? ""), message })
    case "PluginLlmInputError": {
      const issue = Array.isArray(body["issues"]) && isRecord(body["issues"][0]) ? body["issues"][0] : {}
      return new PluginLlmInputError({ field: String(issue["path"] ?? ""), message })
    }
    case "PluginLlmSchemaError":
      return new PluginLlmSchemaError({ message })
    case "PluginLlmTimeoutError":
      return new PluginLlmTimeoutError({ timeoutMs: Number(body["timeout_ms"] ?? 0), source: String(body["timeout_source"] ?? "default") as TimeoutSource, message })
    case "PluginLlmRateLimited":
      return new PluginLlmRateLimited({ hops, message })
    case "PluginLlmBudgetExceeded":
      return new PluginLlmBudgetExceeded({ pluginId: String(body["plugin_id"] ?? ""), limit: Number(body["limit"] ?? 0), message })
    case "PluginLlmCancelled":
      return new PluginLlmCancelled({ message })
    default:
      // 401 (token), 422 (unknown field), 5xx without a type: the host refused or failed.
      return status === 422 ? new PluginLlmInputError({ field: "", message }) : new PluginLlmProviderUnavailable({ hops, message: `host: ${message}` })
  }
}

/**
 * `ctx.llm` for a plugin in another process: the same `PluginLlm` interface over the host's HTTP lane
 * (`/api/llm/complete`, `/api/llm/complete-structured`), authenticated by the registrant token. The host applies
 * the gate, routes, budgets and audit; errors come back as the same typed errors. A zod or Effect schema is sent
 * as its normalised JSON Schema and the parsed value is decoded here again with the library (transforms and
 * refinements run on this side too).
 */
export const createRemotePluginLlm = (options: RemotePluginLlmOptions): PluginLlm => {
  const fetchFn = options.fetch ?? globalThis.fetch
  const base = options.baseUrl.replace(/\/+$/, "")
  const maxBytes = options.maxResponseBytes ?? 8 * 1024 * 1024
  const maxDepth = options.maxResponseDepth ?? DEFAULT_MAX_DOCUMENT_DEPTH

  const post = async (path: string, body: Record<string, unknown>, signal: AbortSignal | undefined): Promise<Record<string, unknown>> => {
    let response: Response
    try {
      response = await fetchBoundByAbort(fetchFn, `${base}${path}`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          [REGISTRANT_TOKEN_HEADER]: options.registrantToken,
          ...(options.accessKey === undefined ? {} : { [ACCESS_KEY_HEADER]: options.accessKey })
        },
        body: JSON.stringify(body),
        ...(signal === undefined ? {} : { signal })
      })
    } catch {
      if (signal?.aborted === true) throw new PluginLlmCancelled({ message: "the call was cancelled" })
      throw new PluginLlmProviderUnavailable({ hops: [], message: `the host at ${base} is unreachable` })
    }
    let parsed: unknown
    try {
      // Cut at the limit, so an oversized answer fails to parse instead of being buffered whole.
      const text = await readCapped(response.body, maxBytes, signal)
      if (jsonTextDepth(text, maxDepth) > maxDepth) {
        throw new PluginLlmProviderUnavailable({ hops: [], message: `the host answered HTTP ${response.status} with JSON ${tooDeepMessage("", maxDepth).trim()}` })
      }
      parsed = JSON.parse(text)
    } catch (thrown) {
      if (thrown instanceof PluginLlmProviderUnavailable) throw thrown
      if (signal?.aborted === true) throw new PluginLlmCancelled({ message: "the call was cancelled" })
      throw new PluginLlmProviderUnavailable({ hops: [], message: `the host answered HTTP ${response.status} without a readable JSON body` })
    }
    if (!isRecord(parsed)) throw new PluginLlmProviderUnavailable({ hops: [], message: "the host answered with a body that is not an object" })
    if (response.status !== 200 || parsed["ok"] !== true) throw errorFrom(response.status, parsed)
    return parsed
  }

  const result = (body: Record<string, unknown>): CompleteResult => ({
    text: String(body["text"] ?? ""),
    provider: String(body["provider"] ?? ""),
    model: String(body["model"] ?? ""),
    // A host from before `requested_model` answered with the route's model as `model`.
    requestedModel: String(body["requested_model"] ?? body["model"] ?? ""),
    agentId: String(body["agent_id"] ?? ""),
    usage: camelKeys(body["usage"] ?? {}) as CompleteResult["usage"],
    audit: camelKeys(body["audit"] ?? {}) as CompleteResult["audit"]
  })

  const complete = async (call: CompleteCallOptions): Promise<CompleteResult> =>
    result(await post("/api/llm/complete", { ...shared(call), messages: call.messages }, call.signal))

  const completeStructured = async <S extends ArgumentSchema | undefined = undefined>(call: StructuredCallOptions<S>): Promise<StructuredResult<S extends ArgumentSchema ? InferArguments<S> : unknown>> => {
    let jsonSchema: unknown
    let codec: ReturnType<typeof outputCodec> | undefined
    const schema = structuredSchemaOf(call)
    if (schema !== undefined) {
      try {
        codec = outputCodec(schema)
      } catch (thrown) {
        throw new PluginLlmSchemaError({ message: `schema cannot be used: ${thrown instanceof Error ? thrown.message : String(thrown)}`, cause: thrown })
      }
      // The host reads the schema as untrusted and refuses a pattern the linear-time engine cannot run: said here.
      const pattern = untrustedPatternProblem(codec.jsonSchema)
      if (pattern !== undefined) throw new PluginLlmSchemaError({ message: `schema cannot be used: ${pattern.message}` })
      jsonSchema = isRawJsonSchema(schema) ? schema : codec.jsonSchema
    }
    const body = await post(
      "/api/llm/complete-structured",
      {
        ...shared(call),
        instructions: call.instructions,
        input: wireInput(call.input),
        json_schema: jsonSchema,
        json_mode: call.jsonMode,
        schema_name: call.schemaName,
        system_prompt: call.systemPrompt,
        repair: call.repair
      },
      call.signal
    )
    const base = result(body)
    const issues = Array.isArray(body["issues"]) ? (body["issues"] as StructuredResult<unknown>["issues"]) : undefined
    let parsed: unknown = body["content_type"] === "json" ? body["parsed"] : null
    let contentType: "json" | "text" = body["content_type"] === "json" ? "json" : "text"
    let localIssues = issues
    if (contentType === "json" && codec !== undefined) {
      // The host checked the JSON Schema; the library's own decoder (transforms, refinements) runs here.
      const decoded = await codec.decode(parsed)
      if (decoded.ok) parsed = decoded.value
      else {
        parsed = null
        contentType = "text"
        localIssues = decoded.issues
      }
    }
    return { ...base, parsed, contentType, ...(localIssues === undefined ? {} : { issues: localIssues }) } as StructuredResult<S extends ArgumentSchema ? InferArguments<S> : unknown>
  }

  const asEffect = <A>(start: (signal: AbortSignal) => Promise<A>): Effect.Effect<A, PluginLlmError> =>
    Effect.tryPromise({ try: start, catch: (thrown) => (isPluginLlmError(thrown) ? thrown : new PluginLlmProviderUnavailable({ hops: [], message: "internal error" })) })

  return Object.freeze({
    pluginId: "",
    complete,
    completeStructured,
    completeEffect: (call: Omit<CompleteCallOptions, "signal">) => asEffect((signal) => complete({ ...call, signal })),
    completeStructuredEffect: <S extends ArgumentSchema | undefined = undefined>(call: Omit<StructuredCallOptions<S>, "signal">) =>
      asEffect((signal) => completeStructured<S>({ ...call, signal } as StructuredCallOptions<S>))
  }) as PluginLlm
}
