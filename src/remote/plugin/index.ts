/**
 * `llm-worker/remote/plugin`: the plugin side of the remote-tools contract (Node only). Declare tools with
 * `remoteTool(...)` or the `@llmTool` decorator, start them with `startPlugin(...)`: a loopback callback server
 * that verifies signed callbacks and decodes arguments with the tool's schema, registration that retries until
 * the host is up and repeats after a host restart, and cleanup on SIGINT / SIGTERM or `stop()`.
 */
export { remoteTool, DEFAULT_TIMEOUT_SECONDS, MAX_TIMEOUT_SECONDS } from "./remote-tool.ts"
export type { RemoteTool, RemoteToolConfig, RemoteToolOptions, RemoteCallContext, NoArguments } from "./remote-tool.ts"
export { llmTool, toolsOf } from "./decorator.ts"
export type { LlmToolDecorator, LlmToolOptions } from "./decorator.ts"
export { remoteFailure } from "./callback-result.ts"
export type { CallbackBody, RemoteFailure } from "./callback-result.ts"
export { startPlugin } from "./plugin.ts"
export type { Plugin, PluginOptions, PluginEvent, ToolStatus, ToolState, CallbackOptions, SignatureOptions, ShutdownOptions } from "./plugin.ts"
export type { RetryOptions } from "./backoff.ts"
export type { ShutdownSignal } from "./shutdown-signals.ts"
export { CALLBACK_PATH } from "./callback-server.ts"
export { PluginConfigError, RegistrationRefused, PluginStopped } from "./plugin-error.ts"
export { toolFailure } from "../../tool/tool-failure.ts"
