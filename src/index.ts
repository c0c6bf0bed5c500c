/**
 * llm-worker's public surface. Nothing else is importable from outside the package (see `exports` in
 * package.json); in particular tool registration is reachable only through `MutableWorker.registerTool(s)`.
 *
 * This entry imports no Node built-in and runs nothing at import time (`"sideEffects": false`), so it bundles for
 * browsers and edge runtimes as well as Node, Deno and Bun (test/package/browser-bundle.test.ts). Node-only parts
 * live behind subpath entries: `llm-worker/testing` (the replay server), `llm-worker/isolated` (worker threads).
 *
 * @packageDocumentation
 */

// Errors: what every public error class is (a real Error with a `_tag`).
export type { TaggedError, TaggedErrorClass } from "./error/tagged-error.ts"

// Schema: argument schemas, JSON Schema, provider dialects and lint.
export type { JsonSchema, JsonObject, JsonValue } from "./schema/json-schema.ts"
export type { ArgumentCodec, ArgumentIssue, DecodeResult } from "./schema/argument-codec.ts"
export { makeArgumentCodec, formatIssues, jsonSchema } from "./schema/codec.ts"
export type { ArgumentSchema, InferArguments, TypedJsonSchema } from "./schema/codec.ts"
export type { EffectArgumentSchema } from "./schema/sources/effect.ts"
export type { Zod4ArgumentSchema } from "./schema/sources/zod4.ts"
export type { Zod3ArgumentSchema } from "./schema/sources/zod3.ts"
export type { StandardArgumentSchema } from "./schema/sources/standard.ts"
export { normalizeJsonSchema, RecursiveSchemaError, UnsupportedSchemaError } from "./schema/normalize.ts"
export { canonicalJson, canonicalSchemaJson } from "./schema/canonical-json.ts"
export {
  toolsFragment,
  geminiSubsetToolsFragment,
  toolNames,
  restoreStrictArguments,
  ToolNameRejected
} from "./schema/provider-tools.ts"
export type { ToolDialect, ToolNameMap } from "./schema/provider-tools.ts"
export { lintToolSpec, lintToolSet } from "./schema/lint.ts"
export type { SchemaLint, LintTarget, LintOptions } from "./schema/lint.ts"
// Schema bounds against hostile input (docs/security.md).
export type { DecodeFailure } from "./schema/argument-codec.ts"
export type { ArgumentCodecOptions, FormatIssuesOptions } from "./schema/codec.ts"
export type { NormalizeOptions } from "./schema/normalize.ts"
export type { CanonicalJsonOptions } from "./schema/canonical-json.ts"
export type { RestoreOptions } from "./schema/dialects/openai-strict.ts"
export { DEFAULT_MAX_SCHEMA_NODES } from "./schema/normalize.ts"
export { DEFAULT_FULL_CHECK_SIZE, DEFAULT_KEPT_ISSUES, DEFAULT_SHARED_VALIDATORS, limitSharedValidators } from "./schema/sources/ajv-validator.ts"
export { DEFAULT_MAX_JSON_DEPTH, DEFAULT_MAX_DOCUMENT_DEPTH, JsonTooDeepError, jsonTextDepth } from "./schema/json-depth.ts"
export { DEFAULT_QUOTE_CHARS, DEFAULT_LISTED_ISSUES } from "./schema/quote.ts"

// Tools.
export { ToolMeta, InvalidToolName, TOOL_NAME_PATTERN } from "./tool/tool-meta.ts"
export type { ToolContext, ToolDefinition } from "./tool/tool.ts"
export { ToolError, InvalidArgument, ExecutionFailed, Internal } from "./tool/tool-error.ts"
export { defineTool } from "./tool/define-tool.ts"
export type { ToolConfig, TypedToolDefinition, NoArguments, ToolOutput } from "./tool/define-tool.ts"
export { toolGroup } from "./tool/tool-group.ts"
export type { MethodToolConfig, CheckedMethods } from "./tool/tool-group.ts"
export { toolFailure, isToolFailure } from "./tool/tool-failure.ts"
export { describeThrown, DEFAULT_DESCRIBED_CHARS } from "./tool/describe-thrown.ts"
export { limitOutput, DEFAULT_TOOL_OUTPUT_BYTES, MIN_TOOL_OUTPUT_BYTES } from "./tool/output-limit.ts"
export type { ToolFailure } from "./tool/tool-failure.ts"
export { Tool } from "./tool/tool-namespace.ts"

// Tool server.
export { ToolServer, ToolServerHandle } from "./tool-server/tool-server.ts"
export type { CallToolOptions } from "./tool-server/tool-server.ts"
export type { RegistrationReport, ToolChanges, ToolChangeReport } from "./tool-server/registration.ts"
export {
  DuplicateName,
  RegistrationFailed,
  ToolNotFound,
  ToolExecution,
  ToolTimeout,
  ToolCancelled,
  isToolCallError
} from "./tool-server/tool-server-error.ts"
export type { ToolCallError, ToolRegistrationError, ToolServerError } from "./tool-server/tool-server-error.ts"

// LLM clients: neutral items, requests and events; schemes; providers; transport.
export * from "./llm/index.ts"

// Timeline.
export { Timeline, TimelineMisuse } from "./timeline/timeline.ts"
export type { TimelineState } from "./timeline/timeline.ts"
export type { BlockKind, BlockScope, BlockStart, BlockStop, BlockPosition, ProviderOutput, BlockMetaOf, BlockDeltaOf, MetaEvent, MetaEventOf } from "./timeline/block-scope.ts"
export type { ProtocolIssue } from "./timeline/protocol-issue.ts"
export { TextCollector } from "./timeline/text-collector.ts"
export type { TextBlock, AbortedTextBlock } from "./timeline/text-collector.ts"
export { ReasoningCollector } from "./timeline/reasoning-collector.ts"
export type { ReasoningBlock, AbortedReasoningBlock } from "./timeline/reasoning-collector.ts"
export { ToolCallCollector } from "./timeline/tool-call-collector.ts"
export type { ToolCallBlock, AbortedToolCall } from "./timeline/tool-call-collector.ts"
export { UsageCollector } from "./timeline/usage-collector.ts"
export { ProviderItemCollector } from "./timeline/provider-item-collector.ts"
export type { ProviderItemBlock, CitationEntry } from "./timeline/provider-item-collector.ts"
export { ResponseCollector, assistantItems } from "./timeline/assistant-response.ts"
export type { AssistantResponse, PartialResponse } from "./timeline/assistant-response.ts"

// Worker.
export * from "./worker/index.ts"

export type { TelemetryOptions } from "./telemetry/index.ts"
