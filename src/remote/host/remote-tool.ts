import type { JsonSchema } from "../../schema/json-schema.ts"
import type { ArgumentCodec } from "../../schema/argument-codec.ts"
import { formatIssues } from "../../schema/codec.ts"
import type { Tool, ToolContext, ToolDefinition } from "../../tool/tool.ts"
import { ExecutionFailed, InvalidArgument } from "../../tool/tool-error.ts"
import { ToolMeta } from "../../tool/tool-meta.ts"
import { parseArguments } from "../../tool/parse-arguments.ts"
import { quote } from "../../schema/quote.ts"
import { DEFAULT_MAX_DOCUMENT_DEPTH, jsonTextDepth, tooDeepMessage } from "../../schema/json-depth.ts"
import { signedCallbackHeaders } from "../signing.ts"
import { INSTANCE_HEADER } from "../wire.ts"
import { type CallbackResponse, describeCallbackFailure, sendCallback } from "./callback-transport.ts"

/** Calls, failures and the last failure of one registration: what the status page and the list show. */
export interface CallStats {
  calls: number
  errors: number
  lastError: string | undefined
  consecutiveConnectionFailures: number
}

/** One accepted `POST /api/tools/register`: shared by every role it was registered in. */
export interface RemoteRegistration {
  readonly kind: "remote"
  readonly name: string
  readonly description: string
  readonly parameters: JsonSchema
  readonly codec: ArgumentCodec<unknown>
  readonly callbackUrl: URL
  /** `host:port` of the callback, for lists and logs. */
  readonly callbackHost: string
  readonly source: string
  readonly timeoutSeconds: number
  /** Per registration: a replacement gets a new one, so a plugin can tell calls for the old one apart. */
  readonly secret: string
  readonly stats: CallStats
}

export interface DispatchSettings {
  readonly instanceId: string
  readonly maxResponseBytes: number
  /** Deepest nesting of an answer's JSON, counted on the text before it is parsed (default 256). */
  readonly maxResponseDepth?: number
  /** Called after each callback that could not connect, with the count so far (reset by any answer). */
  readonly onConnectionFailure: (registration: RemoteRegistration, consecutive: number) => void
}

const clipped = (text: string, max = 200): string => quote(text, max)

/** Longest last-error text kept per registration. */
const MAX_KEPT_ERROR_CHARS = 1000

/**
 * The seed's output rule (`body.output` when present, else the whole body), except that `is_error: true` is
 * honoured whether or not `output` is there: the model gets an error result carrying `error` (and the output,
 * when one was sent), never a success that hides the failure.
 */
export const interpretCallbackBody = (
  target: string,
  status: number,
  location: string | undefined,
  body: string,
  maxDepth: number = DEFAULT_MAX_DOCUMENT_DEPTH
): { ok: true; output: string } | { ok: false; message: string } => {
  if (status >= 300 && status < 400) {
    return { ok: false, message: `callback to ${target} answered HTTP ${status} (redirect${location === undefined ? "" : ` to ${clipped(location, 120)}`}); redirects are not followed` }
  }
  if (status < 200 || status >= 300) {
    const detail = body.trim() === "" ? "" : `: ${clipped(body.trim())}`
    return { ok: false, message: `callback to ${target} answered HTTP ${status}${detail}` }
  }
  // Counted on the text, before anything recursive (printing the output back) could overflow the stack.
  if (jsonTextDepth(body, maxDepth) > maxDepth) {
    return { ok: false, message: `callback to ${target} answered with JSON ${tooDeepMessage("", maxDepth).trim()}; it was not used` }
  }
  let parsed: unknown
  try {
    parsed = JSON.parse(body)
  } catch {
    return { ok: false, message: `callback to ${target} answered with a body that is not JSON: ${clipped(body)}` }
  }
  const isObject = typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)
  const record = isObject ? (parsed as Record<string, unknown>) : undefined
  const hasOutput = record !== undefined && Object.hasOwn(record, "output")
  const output = hasOutput ? record["output"] : parsed
  const outputText = typeof output === "string" ? output : JSON.stringify(output) ?? "null"
  if (record !== undefined && record["is_error"] === true) {
    const error = typeof record["error"] === "string" && record["error"].trim() !== "" ? record["error"] : "the tool reported an error without a message"
    const withOutput = hasOutput && output !== null ? `${error}\noutput: ${outputText}` : error
    return { ok: false, message: withOutput }
  }
  return { ok: true, output: outputText }
}

const failureMessage = (registration: RemoteRegistration, response: CallbackResponse): string | undefined => {
  if (response.kind === "response") return undefined
  return describeCallbackFailure(registration.callbackHost, response)
}

/**
 * A registration as an ordinary tool: the Worker validates and parses arguments, runs hooks, executes it in
 * parallel with others, cancels it (which aborts the HTTP request) and records exactly one result per call.
 */
export const remoteToolDefinition = (registration: RemoteRegistration, settings: DispatchSettings): ToolDefinition => {
  const meta = ToolMeta.make(registration.name).description(registration.description).inputSchema(registration.codec.jsonSchema)
  const stats = registration.stats
  const fail = (message: string): never => {
    stats.errors++
    // Kept for the list and the status page: bounded, whatever the plugin sent.
    stats.lastError = message.length > MAX_KEPT_ERROR_CHARS ? `${message.slice(0, MAX_KEPT_ERROR_CHARS)}… (${message.length - MAX_KEPT_ERROR_CHARS} more characters)` : message
    throw new ExecutionFailed({ message })
  }
  const dispatch = async (argumentsJson: string, args: unknown, context: ToolContext): Promise<string> => {
    stats.calls++
    const body = JSON.stringify({ name: registration.name, arguments: args, call_id: context.callId, raw_arguments: argumentsJson })
    const response = await sendCallback({
      url: registration.callbackUrl,
      // Each delivery is signed with its own random id, so two identical calls in one second are told apart.
      headers: { [INSTANCE_HEADER]: settings.instanceId, ...signedCallbackHeaders(registration.secret, body) },
      body,
      timeoutMs: registration.timeoutSeconds * 1000,
      maxResponseBytes: settings.maxResponseBytes,
      signal: context.signal
    })
    if (response.kind === "unreachable") {
      stats.consecutiveConnectionFailures++
      settings.onConnectionFailure(registration, stats.consecutiveConnectionFailures)
    } else if (response.kind !== "cancelled") {
      stats.consecutiveConnectionFailures = 0
    }
    const transportFailure = failureMessage(registration, response)
    if (transportFailure !== undefined) return fail(transportFailure)
    const answer = response as Extract<CallbackResponse, { kind: "response" }>
    const result = interpretCallbackBody(registration.callbackHost, answer.status, answer.location, answer.body, settings.maxResponseDepth)
    return result.ok ? result.output : fail(result.message)
  }
  const tool: Tool = {
    async execute(argumentsJson, context) {
      const decoding = registration.codec.decode(parseArguments(argumentsJson))
      // The built-in codecs decode synchronously: no extra turn of the microtask queue for them.
      const decoded = decoding instanceof Promise ? await decoding : decoding
      if (!decoded.ok) throw new InvalidArgument({ message: formatIssues(decoded) })
      return dispatch(argumentsJson, decoded.value, context)
    }
  }
  return () => [meta, tool] as const
}
