/**
 * The Worker's internal core for benchmarks that time its per-call steps without a model: the Worker's own
 * default limits, a client that only names its scheme (these benchmarks never send a request).
 */
import type { LlmClient } from "#internal/llm/client"
import type { SchemeName } from "#internal/llm/scheme"
import { DEFAULT_MAX_JSON_DEPTH } from "#internal/schema/json-depth"
import { DEFAULT_TOOL_OUTPUT_BYTES } from "#internal/tool/output-limit"
import type { ToolServerHandle } from "#internal/tool-server/tool-server"
import { DEFAULT_MAX_CALLS_PER_RESPONSE, DEFAULT_MAX_PARALLEL_TOOLS } from "#internal/worker/worker"
import { makeCore, type WorkerCore } from "#internal/worker/worker-core"

export const benchCore = (tools: ToolServerHandle, scheme: SchemeName): WorkerCore =>
  makeCore({
    client: { scheme } as unknown as LlmClient,
    tools,
    systemPrompt: undefined,
    config: {},
    history: [],
    settings: {
      maxTurns: 32,
      toolTimeoutMs: undefined,
      toolTimeouts: {},
      maxToolOutputBytes: DEFAULT_TOOL_OUTPUT_BYTES,
      maxArgumentDepth: DEFAULT_MAX_JSON_DEPTH,
      maxParallelTools: DEFAULT_MAX_PARALLEL_TOOLS,
      maxCallsPerResponse: DEFAULT_MAX_CALLS_PER_RESPONSE
    }
  })
