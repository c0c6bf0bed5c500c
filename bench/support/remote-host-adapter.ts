/**
 * The one place the remote benchmarks touch the host side. Until i10-host's branch is merged this is the
 * *contract reference*: the registration endpoints of test/remote/support/contract-host.ts and a dispatcher
 * written from REMOTE-CONTRACT.md (sign, POST, output / is_error rules, one deadline). After the merge, replace
 * `startBenchHost` with the real host started in process (src/remote/host) and `callTool` with its dispatch path
 * — the call a Worker makes for a registered remote tool (`handle.callTool(name, argumentsJson)`) — and
 * `registration` with the host's stored callback URL and secret. Nothing else in bench/remote*.ts changes.
 */
import { randomBytes } from "node:crypto"
import { ContractHost } from "../../test/remote/support/contract-host.ts"
import { signCallback } from "../../src/remote/signing.ts"
import { INSTANCE_HEADER, SIGNATURE_HEADER, TIMESTAMP_HEADER } from "../../src/remote/wire.ts"

export interface BenchHost {
  /** Says which host side was measured, printed with the tables. */
  readonly label: string
  /** Where plugins register. */
  readonly url: string
  /** A model-side tool call: resolves with the text the model would be given (an error result as `Error: …`). */
  callTool(name: string, argumentsJson: string, callId: string): Promise<string>
  /** What the host holds for a registered tool, for the bare-fetch baseline. */
  registration(name: string): { readonly callbackUrl: string; readonly secret: string } | undefined
  close(): Promise<void>
}

const referenceDispatch = (host: ContractHost) => async (name: string, argumentsJson: string, callId: string): Promise<string> => {
  const registration = host.tools.get(name)
  if (registration === undefined) return `Error: unknown tool "${name}"`
  const body = `{"name":${JSON.stringify(name)},"arguments":${argumentsJson},"call_id":${JSON.stringify(callId)},"raw_arguments":${JSON.stringify(argumentsJson)}}`
  const timestamp = String(Math.floor(Date.now() / 1000))
  const response = await fetch(registration.callbackUrl, {
    method: "POST",
    redirect: "manual",
    signal: AbortSignal.timeout(registration.timeoutSeconds * 1000),
    headers: { "content-type": "application/json", [INSTANCE_HEADER]: host.instanceId, [TIMESTAMP_HEADER]: timestamp, [SIGNATURE_HEADER]: signCallback(registration.secret, timestamp, body) },
    body
  })
  const text = await response.text()
  if (!response.ok) return `Error: HTTP ${response.status}`
  const parsed = JSON.parse(text) as Record<string, unknown>
  if (parsed["is_error"] === true) return `Error: ${String(parsed["error"])}`
  return JSON.stringify("output" in parsed ? parsed["output"] : parsed)
}

export const startBenchHost = async (): Promise<BenchHost> => {
  const host = await ContractHost.start()
  // The stand-in keeps every request for tests; a long benchmark must not.
  host.received.push = () => 0
  return {
    label: "contract reference dispatcher (the real host is not merged yet)",
    url: host.url,
    callTool: referenceDispatch(host),
    registration: (name) => host.tools.get(name),
    close: () => host.close()
  }
}

export const callIds = (): (() => string) => {
  const prefix = `call_${randomBytes(4).toString("hex")}_`
  let n = 0
  return () => `${prefix}${n++}`
}
