/**
 * The one place the remote benchmarks touch the host side. Registration goes to the contract stand-in
 * (bench/support/contract-host.ts, shared with the plugin tests), which hands back each tool's callback URL and
 * secret, so the bare-fetch baseline can sign its calls as the host does. A model-side call goes through
 * `ToolServerHandle.callTool` — the Worker's path — into the host's own dispatcher, `remoteToolDefinition`.
 */
import { randomBytes } from "node:crypto"
import { makeArgumentCodec } from "#internal/schema/codec"
import type { JsonSchema } from "#internal/schema/json-schema"
import type { ToolDefinition } from "#internal/tool/tool"
import { registerDefinitions } from "#internal/tool-server/registration"
import { ToolServer } from "#internal/tool-server/tool-server"
import { remoteToolDefinition } from "#internal/remote/host/remote-tool"
import { ContractHost, type Registration } from "./contract-host.ts"

export interface BenchHost {
  /** Says which dispatcher was measured, printed with the tables. */
  readonly label: string
  /** Where plugins register. */
  readonly url: string
  /** A model-side tool call: resolves with the text the model would be given (an error result as `Error: …`). */
  callTool(name: string, argumentsJson: string, callId: string): Promise<string>
  /** What the host holds for a registered tool, for the bare-fetch baseline. */
  registration(name: string): { readonly callbackUrl: string; readonly secret: string } | undefined
  close(): Promise<void>
}

export const startBenchHost = async (): Promise<BenchHost> => {
  const host = await ContractHost.start()
  // The stand-in keeps every request for tests; a long benchmark must not.
  host.received.push = () => 0
  const definitionOf = (registration: Registration): ToolDefinition => {
    const url = new URL(registration.callbackUrl)
    const parameters = registration.parameters as JsonSchema
    return remoteToolDefinition(
      { kind: "remote", name: registration.name, description: "", parameters, codec: makeArgumentCodec(parameters), callbackUrl: url, callbackHost: url.host, source: registration.source, timeoutSeconds: registration.timeoutSeconds, secret: registration.secret, stats: { calls: 0, errors: 0, lastError: undefined, consecutiveConnectionFailures: 0 } },
      { instanceId: host.instanceId, maxResponseBytes: 1024 * 1024, onConnectionFailure: () => undefined }
    )
  }
  // One handle per registration version, rebuilt when the plugin registers again (a new secret).
  const handles = new Map<string, { readonly secret: string; readonly handle: ReturnType<ToolServer["handle"]> }>()
  const handleFor = (name: string) => {
    const registration = host.tools.get(name)
    if (registration === undefined) return undefined
    const known = handles.get(name)
    if (known?.secret === registration.secret) return known.handle
    const handle = new ToolServer().handle()
    registerDefinitions(handle, [definitionOf(registration)])
    handles.set(name, { secret: registration.secret, handle })
    return handle
  }
  // The Worker passes its run's signal to every call; so does the benchmark.
  const run = new AbortController()
  return {
    label: "the host's `remoteToolDefinition`",
    url: host.url,
    callTool: (name, argumentsJson, callId) => {
      const handle = handleFor(name)
      if (handle === undefined) return Promise.resolve(`Error: unknown tool "${name}"`)
      return handle.callTool(name, argumentsJson, { callId, signal: run.signal }).catch((e: unknown) => `Error: ${String((e as { message?: unknown }).message ?? e)}`)
    },
    registration: (name) => host.tools.get(name),
    close: () => host.close()
  }
}

export const callIds = (): (() => string) => {
  const prefix = `call_${randomBytes(4).toString("hex")}_`
  let n = 0
  return () => `${prefix}${n++}`
}
