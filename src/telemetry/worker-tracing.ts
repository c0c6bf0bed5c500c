import { context, SpanKind, SpanStatusCode, trace } from "@opentelemetry/api"
import type { Attributes, Context, Span, Tracer } from "@opentelemetry/api"
import type { StopReason, Usage } from "../llm/event.ts"
import type { Item } from "../llm/item.ts"
import type { Request } from "../llm/request.ts"
import { GEN_AI, LLM_WORKER, providerName } from "./gen-ai-attributes.ts"
import { messagesJson, systemInstructionsJson } from "./messages.ts"

/** What a Worker reports to OpenTelemetry, and how (see `docs/guides/telemetry.md`). */
export interface TelemetryOptions {
  /** Spans go to this tracer; default the global one (`trace.getTracer("llm-worker")`), a no-op until the app registers a provider. */
  readonly tracer?: Tracer
  /**
   * Record content: the messages sent and received, the system prompt, tool arguments and results. Off by
   * default — they hold whatever users and tools said. Counts, names, ids and finish reasons are always recorded.
   */
  readonly recordContent?: boolean
  /** `gen_ai.agent.name` of the run span, and its name (`invoke_agent <name>`). */
  readonly agentName?: string
}

/** A failure as a span reports it: `error.type` is the error's tag (`ClientFailed`, `Cancelled`…). */
export interface TracedError {
  readonly _tag: string
  readonly message: string
}

/** One model request of a run (`chat <model>`). */
export interface RequestTrace {
  succeeded(response: {
    readonly usage: Usage
    readonly stopReason: StopReason | undefined
    readonly items: ReadonlyArray<Item>
    /** The model and response id the provider stated (the `started` status), when it did. */
    readonly model?: string | undefined
    readonly responseId?: string | undefined
  }): void
  failed(error: TracedError): void
}

/** One executed tool call (`execute_tool <name>`). */
export interface ToolTrace {
  /** Runs the tool inside this span's context, so spans the tool starts are its children. */
  within<T>(fn: () => Promise<T>): Promise<T>
  ended(outcome: { readonly status: string; readonly output: string; readonly isError: boolean }): void
}

/** One Worker run (`invoke_agent`), parent of its requests and tool calls. */
export interface RunTrace {
  request(request: Request, turn: number): RequestTrace
  tool(call: { readonly callId: string; readonly name: string; readonly arguments: string }): ToolTrace
  finished(result: { readonly status: "finished" | "paused"; readonly usage: Usage }): void
  failed(error: TracedError): void
}

/** The seam the Worker calls at its run, request and tool boundaries. */
export interface WorkerTracing {
  run(client: { readonly provider: string; readonly model: string }): RunTrace
}

const usageAttributes = (usage: Usage): Attributes => {
  const out: Attributes = {}
  if (usage.inputTokens !== undefined) out[GEN_AI.usageInputTokens] = usage.inputTokens
  if (usage.outputTokens !== undefined) out[GEN_AI.usageOutputTokens] = usage.outputTokens
  if (usage.cacheReadTokens !== undefined) out[GEN_AI.usageCacheReadInputTokens] = usage.cacheReadTokens
  if (usage.cacheWriteTokens !== undefined) out[GEN_AI.usageCacheCreationInputTokens] = usage.cacheWriteTokens
  if (usage.reasoningTokens !== undefined) out[GEN_AI.usageReasoningOutputTokens] = usage.reasoningTokens
  return out
}

const requestAttributes = (request: Request): Attributes => {
  const config = request.config
  const out: Attributes = {}
  if (config.maxTokens !== undefined) out[GEN_AI.requestMaxTokens] = config.maxTokens
  if (config.temperature !== undefined) out[GEN_AI.requestTemperature] = config.temperature
  if (config.topP !== undefined) out[GEN_AI.requestTopP] = config.topP
  if (config.topK !== undefined) out[GEN_AI.requestTopK] = config.topK
  if (config.stopSequences !== undefined) out[GEN_AI.requestStopSequences] = [...config.stopSequences]
  return out
}

const fail = (span: Span, error: TracedError): void => {
  span.setAttribute(GEN_AI.errorType, error._tag)
  span.setStatus({ code: SpanStatusCode.ERROR, message: error.message })
  span.end()
}

const noRequest: RequestTrace = { succeeded: () => undefined, failed: () => undefined }
const noTool: ToolTrace = { within: (fn) => fn(), ended: () => undefined }
/** @internal The trace of a tool call nobody traces: its `within` sets no context, so a hot caller may skip it. */
export const NO_TOOL_TRACE: ToolTrace = noTool
const noRun: RunTrace = { request: () => noRequest, tool: () => noTool, finished: () => undefined, failed: () => undefined }

/**
 * Spans after the OpenTelemetry GenAI semantic conventions: `invoke_agent` per run (INTERNAL: the agent runs in
 * process), `chat <model>` per model request (CLIENT) and `execute_tool <name>` per executed tool call
 * (INTERNAL), both children of the run. Parents are passed explicitly, so the structure holds without a context
 * manager; the run's parent is the active context (an application span around `run()`). Attributes are computed
 * only for recording spans; with no tracer provider registered a run costs one no-op span and its requests and
 * tools none.
 */
export const workerTracing = (options: TelemetryOptions = {}): WorkerTracing => {
  const recordContent = options.recordContent === true
  // The global's ProxyTracer, taken once: it forwards to a provider registered later (and is a no-op until then).
  const shared = options.tracer ?? trace.getTracer("llm-worker")
  const tracer = (): Tracer => shared
  return {
    run(client) {
      const provider = providerName(client.provider)
      const runSpan = tracer().startSpan(options.agentName === undefined ? "invoke_agent" : `invoke_agent ${options.agentName}`, { kind: SpanKind.INTERNAL })
      const recording = runSpan.isRecording()
      // No provider registered: the no-op tracer hands out spans with an invalid context. Nothing under this run
      // could record either, so its requests and tools make no spans at all.
      if (!recording && !trace.isSpanContextValid(runSpan.spanContext())) {
        runSpan.end()
        return noRun
      }
      if (recording) {
        runSpan.setAttributes({
          [GEN_AI.operationName]: "invoke_agent",
          [GEN_AI.providerName]: provider,
          [GEN_AI.requestModel]: client.model,
          ...(options.agentName === undefined ? {} : { [GEN_AI.agentName]: options.agentName })
        })
      }
      const parent: Context = trace.setSpan(context.active(), runSpan)
      return {
        request(request, turn) {
          const span = tracer().startSpan(`chat ${request.model}`, { kind: SpanKind.CLIENT }, parent)
          if (span.isRecording()) {
            span.setAttributes({
              [GEN_AI.operationName]: "chat",
              [GEN_AI.providerName]: provider,
              [GEN_AI.requestModel]: request.model,
              [LLM_WORKER.turn]: turn,
              ...requestAttributes(request)
            })
            if (recordContent) {
              span.setAttribute(GEN_AI.inputMessages, messagesJson(request.items))
              if (request.systemPrompt !== undefined) span.setAttribute(GEN_AI.systemInstructions, systemInstructionsJson(request.systemPrompt))
            }
          }
          return {
            succeeded(response) {
              if (span.isRecording()) {
                span.setAttributes({
                  ...usageAttributes(response.usage),
                  ...(response.stopReason === undefined ? {} : { [GEN_AI.responseFinishReasons]: [response.stopReason] }),
                  ...(response.model === undefined ? {} : { [GEN_AI.responseModel]: response.model }),
                  ...(response.responseId === undefined ? {} : { [GEN_AI.responseId]: response.responseId })
                })
                if (recordContent) span.setAttribute(GEN_AI.outputMessages, messagesJson(response.items, response.stopReason))
              }
              span.end()
            },
            failed: (error) => fail(span, error)
          }
        },
        tool(call) {
          const span = tracer().startSpan(`execute_tool ${call.name}`, { kind: SpanKind.INTERNAL }, parent)
          if (span.isRecording()) {
            span.setAttributes({
              [GEN_AI.operationName]: "execute_tool",
              [GEN_AI.toolName]: call.name,
              [GEN_AI.toolCallId]: call.callId,
              [GEN_AI.toolType]: "function",
              ...(recordContent ? { [GEN_AI.toolCallArguments]: call.arguments } : {})
            })
          }
          return {
            within: (fn) => context.with(trace.setSpan(parent, span), fn),
            ended(outcome) {
              if (span.isRecording()) {
                span.setAttribute(LLM_WORKER.toolStatus, outcome.status)
                if (recordContent) span.setAttribute(GEN_AI.toolCallResult, outcome.output)
              }
              // The model gets an error result and can go on; for the tool call itself it is an error.
              if (outcome.isError) fail(span, { _tag: outcome.status, message: outcome.output.slice(0, 500) })
              else span.end()
            }
          }
        },
        finished(result) {
          if (recording) runSpan.setAttributes({ ...usageAttributes(result.usage), [LLM_WORKER.runStatus]: result.status })
          runSpan.end()
        },
        failed(error) {
          if (recording) runSpan.setAttribute(LLM_WORKER.runStatus, "failed")
          fail(runSpan, error)
        }
      }
    }
  }
}

/** Telemetry turned off (`telemetry: false`): not even no-op spans. */
export const noTracing: WorkerTracing = { run: () => noRun }
