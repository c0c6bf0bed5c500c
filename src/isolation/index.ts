/**
 * `llm-worker/isolated`: tools whose handlers run in worker threads, so their deadlines are hard. A separate
 * entry because it needs Node built-ins (worker threads, the file system) that the main entry must stay free of.
 */
export { defineIsolatedTool } from "./isolated-tool.ts"
export type { IsolatedContext, IsolatedHandler, IsolatedToolConfig } from "./isolated-tool.ts"
export { IsolationPool, defaultIsolationPool } from "./isolation-pool.ts"
export type { IsolationPoolOptions } from "./isolation-pool.ts"
