/** OpenTelemetry spans for Worker runs after the GenAI semantic conventions (a no-op until a tracer provider is registered). */
export { workerTracing, noTracing } from "./worker-tracing.ts"
export type { TelemetryOptions, WorkerTracing, RunTrace, RequestTrace, ToolTrace, TracedError } from "./worker-tracing.ts"
export { GEN_AI, LLM_WORKER, providerName } from "./gen-ai-attributes.ts"
