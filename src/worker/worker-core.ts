import type { LlmClient } from "../llm/client.ts"
import { noTracing } from "../telemetry/worker-tracing.ts"
import type { RunTrace, WorkerTracing } from "../telemetry/worker-tracing.ts"
import type { Item } from "../llm/item.ts"
import type { RequestConfig } from "../llm/request.ts"
import type { ToolServerHandle } from "../tool-server/tool-server.ts"
import { type LockedPrefix, RequestBytesTracker } from "./cache-lock.ts"
import type { RunControl } from "./cancellation.ts"
import { HookRegistry } from "./hook-runner.ts"
import { ownItems } from "./owned-items.ts"
import { SubscriberHub } from "./subscriber.ts"
import { ToolHookRegistry } from "./tool-hooks.ts"
import type { PendingDecision } from "./tool-execution.ts"

/** Limits and defaults of a worker's runs. */
export interface RunSettings {
  /** Model requests allowed per run before it fails with `MaxTurnsExceeded`. Default 32. */
  readonly maxTurns: number
  /** Deadline per tool call in milliseconds (none by default); `toolTimeouts` overrides it per tool name. */
  readonly toolTimeoutMs: number | undefined
  readonly toolTimeouts: Readonly<Record<string, number>>
  /** Cap in UTF-8 bytes on a call's output or error text, for tools without their own (default 100 KiB). */
  readonly maxToolOutputBytes: number
  /** Deepest nesting of tool arguments checked and passed on; deeper gets an error result. Default 64. */
  readonly maxArgumentDepth: number
  /** Tool calls of one batch running at once. Default 16. */
  readonly maxParallelTools: number
  /** Tool calls executed per model response; later calls get an error result. Default 128. */
  readonly maxCallsPerResponse: number
}

/**
 * Everything a worker owns, shared by its Mutable and CacheLocked incarnations: `lock()` / `unlock()` hand the
 * same core to a new wrapper object and retire the old one.
 */
export interface WorkerCore {
  readonly client: LlmClient
  readonly tools: ToolServerHandle
  readonly hooks: HookRegistry
  /** Hooks registered for one typed tool (`addToolHook`). */
  readonly toolHooks: ToolHookRegistry
  readonly hub: SubscriberHub
  readonly bytes: RequestBytesTracker
  readonly settings: RunSettings
  systemPrompt: string | undefined
  config: RequestConfig
  history: Array<Item>
  lock: LockedPrefix | undefined
  /** Decisions already taken for unanswered calls of a paused batch, by call id. */
  pending: Map<string, PendingDecision>
  /**
   * The tools the last request offered the model (names registered at the time and present in the request).
   * Calls left unanswered by a pause are checked against it on resume; undefined when no request produced the
   * history's calls (a fresh or replaced history), and then the current tool set applies.
   */
  offered: ReadonlySet<string> | undefined
  /** The run in progress, if any. */
  running: RunControl | undefined
  /** Where runs, requests and tool calls are reported (OpenTelemetry spans; `noTracing` when turned off). */
  readonly tracing: WorkerTracing
  /** The trace of the run in progress (runs never overlap); a no-op between runs. */
  trace: RunTrace
}

export const makeCore = (init: {
  readonly client: LlmClient
  readonly tools: ToolServerHandle
  readonly systemPrompt: string | undefined
  readonly config: RequestConfig
  readonly history: ReadonlyArray<Item>
  readonly settings: RunSettings
  readonly tracing?: WorkerTracing
}): WorkerCore => ({
  client: init.client,
  tools: init.tools,
  hooks: new HookRegistry(),
  toolHooks: new ToolHookRegistry(),
  hub: new SubscriberHub(),
  bytes: new RequestBytesTracker(),
  settings: init.settings,
  systemPrompt: init.systemPrompt,
  config: init.config,
  history: ownItems(init.history),
  lock: undefined,
  pending: new Map(),
  offered: undefined,
  running: undefined,
  tracing: init.tracing ?? noTracing,
  trace: noTracing.run(init.client)
})
