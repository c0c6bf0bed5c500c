/**
 * The one place the remote benchmarks touch the host side. Registration goes to the contract stand-in
 * (test/remote/support/contract-host.ts: the endpoints as REMOTE-CONTRACT.md fixes them), which hands back each
 * tool's callback URL and secret. A model-side call goes through `ToolServerHandle.callTool` — the Worker's path —
 * into the **host's own dispatcher**, `remoteToolDefinition` from src/remote/host/remote-tool.ts, once that module
 * exists (i10-host's branch merged); until then into a dispatcher written from the contract. After the merge the
 * dynamic import below can become a static one; nothing else in bench/remote*.ts changes.
 */
import { randomBytes } from "node:crypto"
import { existsSync } from "node:fs"
import { fileURLToPath, pathToFileURL } from "node:url"
import { makeArgumentCodec } from "../../src/schema/codec.ts"
import type { ArgumentCodec } from "../../src/schema/argument-codec.ts"
import type { JsonSchema } from "../../src/schema/json-schema.ts"
import { signCallback } from "../../src/remote/signing.ts"
import { INSTANCE_HEADER, SIGNATURE_HEADER, TIMESTAMP_HEADER } from "../../src/remote/wire.ts"
import { defineTool } from "../../src/tool/define-tool.ts"
import type { ToolDefinition } from "../../src/tool/tool.ts"
import { registerDefinitions } from "../../src/tool-server/registration.ts"
import { ToolServer } from "../../src/tool-server/tool-server.ts"
import { ContractHost, type Registration } from "../../test/remote/support/contract-host.ts"

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

/** The part of src/remote/host/remote-tool.ts this adapter uses (i10-host's `remoteToolDefinition`). */
interface HostDispatchModule {
  remoteToolDefinition(
    registration: {
      readonly kind: "remote"
      readonly name: string
      readonly description: string
      readonly parameters: JsonSchema
      readonly codec: ArgumentCodec<unknown>
      readonly callbackUrl: URL
      readonly callbackHost: string
      readonly source: string
      readonly timeoutSeconds: number
      readonly secret: string
      readonly stats: { calls: number; errors: number; lastError: string | undefined; consecutiveConnectionFailures: number }
    },
    settings: { readonly instanceId: string; readonly maxResponseBytes: number; readonly onConnectionFailure: () => void }
  ): ToolDefinition
}

const HOST_DISPATCH = fileURLToPath(new URL("../../src/remote/host/remote-tool.ts", import.meta.url))

/** The contract's dispatch, for benchmarking before the host is merged: sign, POST, output / is_error rules. */
const referenceDefinition = (host: ContractHost, registration: Registration): ToolDefinition =>
  defineTool({
    name: registration.name,
    description: "",
    parameters: registration.parameters as JsonSchema,
    execute: async (args: unknown, context) => {
      const argumentsJson = JSON.stringify(args)
      const body = JSON.stringify({ name: registration.name, arguments: args, call_id: context.callId, raw_arguments: argumentsJson })
      const timestamp = String(Math.floor(Date.now() / 1000))
      const response = await fetch(registration.callbackUrl, {
        method: "POST",
        redirect: "manual",
        signal: AbortSignal.any([context.signal, AbortSignal.timeout(registration.timeoutSeconds * 1000)]),
        headers: { "content-type": "application/json", [INSTANCE_HEADER]: host.instanceId, [TIMESTAMP_HEADER]: timestamp, [SIGNATURE_HEADER]: signCallback(registration.secret, timestamp, body) },
        body
      })
      const parsed = JSON.parse(await response.text()) as Record<string, unknown>
      if (!response.ok || parsed["is_error"] === true) throw new Error(String(parsed["error"] ?? `HTTP ${response.status}`))
      const output = "output" in parsed ? parsed["output"] : parsed
      return typeof output === "string" ? output : JSON.stringify(output)
    }
  })

export const startBenchHost = async (): Promise<BenchHost> => {
  const host = await ContractHost.start()
  // The stand-in keeps every request for tests; a long benchmark must not.
  host.received.push = () => 0
  const dispatch = existsSync(HOST_DISPATCH) ? ((await import(pathToFileURL(HOST_DISPATCH).href)) as HostDispatchModule) : undefined
  const definitionOf = (registration: Registration): ToolDefinition => {
    if (dispatch === undefined) return referenceDefinition(host, registration)
    const url = new URL(registration.callbackUrl)
    const parameters = registration.parameters as JsonSchema
    return dispatch.remoteToolDefinition(
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
    label: dispatch === undefined ? "contract reference dispatcher (host not merged)" : "the host's `remoteToolDefinition`",
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
