import { fetchBoundByAbort } from "../../llm/transport/abort-bound.ts"
import { readCapped } from "../../llm/transport/read-capped.ts"
import { describeThrown } from "../../tool/describe-thrown.ts"
import { DEFAULT_MAX_DOCUMENT_DEPTH, jsonTextDepth } from "../../schema/json-depth.ts"
import { ACCESS_KEY_HEADER, INSTANCE_HEADER, REGISTRANT_TOKEN_HEADER } from "../wire.ts"

/** One answer from the host, or the reason there was none (`status` 0: refused, reset, timed out). */
export interface HostAnswer {
  readonly status: number
  readonly instanceId: string | undefined
  readonly body: Readonly<Record<string, unknown>> | undefined
  /** A readable line: the host's `error`, or what went wrong on the way. */
  readonly error: string | undefined
}

/** Host answers are small JSON documents; anything longer is cut, so a broken host cannot make the plugin buffer it. */
const MAX_ANSWER_BYTES = 1024 * 1024

export interface HostClientOptions {
  readonly accessKey: string | undefined
  readonly requestTimeoutMs: number
  /** Called with the instance id of every answer that carries one. */
  readonly onInstance: (instanceId: string) => void
}

/**
 * The plugin's side of the host's HTTP API. Never through a proxy (Node's `fetch` ignores proxy variables),
 * never following a redirect (a 3xx is an answer, not a hop), each request bounded by one deadline.
 */
export class HostClient {
  private readonly base: URL

  constructor(
    base: URL,
    private readonly options: HostClientOptions
  ) {
    // A host behind a proxy may live under a path (`http://proxy/llmw/`): API paths resolve below it.
    this.base = new URL(base.href.endsWith("/") ? base.href : `${base.href}/`)
  }

  get url(): string {
    return this.base.href
  }

  post(path: string, body: unknown, token: string | undefined, signal?: AbortSignal): Promise<HostAnswer> {
    return this.request("POST", path, JSON.stringify(body), token, signal)
  }

  get(path: string, signal?: AbortSignal): Promise<HostAnswer> {
    return this.request("GET", path, undefined, undefined, signal)
  }

  private async request(method: string, path: string, body: string | undefined, token: string | undefined, signal?: AbortSignal): Promise<HostAnswer> {
    const headers: Record<string, string> = { accept: "application/json" }
    if (body !== undefined) headers["content-type"] = "application/json"
    if (token !== undefined) headers[REGISTRANT_TOKEN_HEADER] = token
    if (this.options.accessKey !== undefined) headers[ACCESS_KEY_HEADER] = this.options.accessKey
    const timeout = AbortSignal.timeout(this.options.requestTimeoutMs)
    const combined = signal === undefined ? timeout : AbortSignal.any([timeout, signal])
    let response: Response
    try {
      response = await fetchBoundByAbort(fetch, new URL(path.replace(/^\//, ""), this.base), { method, headers, redirect: "manual", signal: combined, ...(body === undefined ? {} : { body }) })
    } catch (thrown) {
      const why = timeout.aborted ? `no answer within ${this.options.requestTimeoutMs} ms` : unreachable(thrown)
      return { status: 0, instanceId: undefined, body: undefined, error: `${method} ${path}: ${why}` }
    }
    const instanceId = response.headers.get(INSTANCE_HEADER) ?? undefined
    let text: string
    try {
      text = await readCapped(response.body, MAX_ANSWER_BYTES, combined)
    } catch (thrown) {
      return { status: 0, instanceId, body: undefined, error: `${method} ${path}: the answer broke off: ${describeThrown(thrown, 200)}` }
    }
    let parsed: Record<string, unknown> | undefined
    try {
      // Only a few top-level fields are read; a deeper answer is not the host's and is not parsed.
      if (jsonTextDepth(text, DEFAULT_MAX_DOCUMENT_DEPTH) > DEFAULT_MAX_DOCUMENT_DEPTH) throw new RangeError("too deep")
      const value: unknown = JSON.parse(text)
      if (typeof value === "object" && value !== null && !Array.isArray(value)) parsed = value as Record<string, unknown>
    } catch {
      parsed = undefined
    }
    const bodyInstance = typeof parsed?.["instance_id"] === "string" ? parsed["instance_id"] : undefined
    const seen = instanceId ?? bodyInstance
    if (seen !== undefined) this.options.onInstance(seen)
    const hostError = typeof parsed?.["error"] === "string" ? parsed["error"].slice(0, 500) : undefined
    const error = response.ok ? hostError : `${method} ${path}: HTTP ${response.status}${hostError === undefined ? "" : `: ${hostError}`}`
    return { status: response.status, instanceId: seen, body: parsed, error }
  }
}

/** `fetch failed` says nothing; the cause (`ECONNREFUSED 127.0.0.1:48911`) says what happened. */
const unreachable = (thrown: unknown): string => {
  const cause = typeof thrown === "object" && thrown !== null ? (thrown as { cause?: unknown }).cause : undefined
  const code = typeof cause === "object" && cause !== null ? (cause as { code?: unknown }).code : undefined
  if (typeof code === "string") return `${code} (${describeThrown(cause, 200)})`
  // fetch refuses some ports outright ("bad port"): the cause says so, `fetch failed` does not.
  return cause === undefined ? describeThrown(thrown, 200) : `${describeThrown(thrown, 200)}: ${describeThrown(cause, 200)}`
}
