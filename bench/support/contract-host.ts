import { randomBytes } from "node:crypto"
import { createServer, type IncomingMessage, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { signedCallbackHeaders } from "#internal/remote/signing"
import { INSTANCE_HEADER, REGISTRANT_TOKEN_HEADER } from "#internal/remote/wire"

/**
 * A stand-in for the tool host's wire behaviour as docs/guides/remote-tools.md fixes it — instance id on every answer,
 * register / unregister / clear / health, a secret per registration, a registrant token per source (issued at
 * the first registration, as hosts did before decision 0095 and plugins still support) — and nothing else, for unit tests of the plugin client before the real host is merged. Tests inject failures with
 * `intercept` and simulate a restart with `restart()` (new instance id, empty registry, same port).
 */
export interface Registration {
  readonly name: string
  readonly source: string
  readonly callbackUrl: string
  readonly secret: string
  readonly role: string | null
  readonly timeoutSeconds: number
  readonly parameters: unknown
}

export interface Received {
  readonly method: string
  readonly path: string
  readonly body: unknown
  readonly token: string | undefined
}

type Answer = { readonly status: number; readonly body: Record<string, unknown> }

export class ContractHost {
  instanceId = randomBytes(8).toString("hex")
  readonly tools = new Map<string, Registration>()
  readonly received: Array<Received> = []
  /** Return an answer to replace the normal one (a host that is starting, overloaded, refusing). */
  intercept: ((request: Received) => Answer | undefined) | undefined
  private tokens = new Map<string, { token: string; claimed: boolean }>()

  private constructor(private server: Server) {}

  static async start(port = 0): Promise<ContractHost> {
    let self: ContractHost | undefined
    const server = createServer((req, res) => void self?.handle(req).then(({ status, body }) => {
      const text = JSON.stringify({ ...body, instance_id: self?.instanceId })
      res.writeHead(status, { "content-type": "application/json", [INSTANCE_HEADER]: self?.instanceId ?? "" })
      res.end(text)
    }))
    await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve))
    self = new ContractHost(server)
    return self
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`
  }

  /** What a restart leaves: a new instance id and nothing registered. */
  restart(): void {
    this.instanceId = randomBytes(8).toString("hex")
    this.tools.clear()
    this.tokens.clear()
  }

  async close(): Promise<void> {
    this.server.closeAllConnections()
    await new Promise<void>((resolve) => this.server.close(() => resolve()))
  }

  /** Makes the call the host would make for a model's tool call: signed, the contract's body. */
  async call(name: string, args: unknown, options: { readonly callId?: string; readonly raw?: string } = {}): Promise<{ status: number; body: any }> {
    const registration = this.tools.get(name)
    if (registration === undefined) throw new Error(`${name} is not registered`)
    const body = JSON.stringify({ name, arguments: args, call_id: options.callId ?? `call_${randomBytes(4).toString("hex")}`, raw_arguments: options.raw ?? JSON.stringify(args) })
    const response = await fetch(registration.callbackUrl, {
      method: "POST",
      headers: { "content-type": "application/json", [INSTANCE_HEADER]: this.instanceId, ...signedCallbackHeaders(registration.secret, body) },
      body
    })
    return { status: response.status, body: await response.json() }
  }

  paths(): Array<string> {
    return this.received.map((r) => r.path)
  }

  private async handle(req: IncomingMessage): Promise<Answer> {
    const chunks: Array<Buffer> = []
    for await (const chunk of req) chunks.push(chunk as Buffer)
    const text = Buffer.concat(chunks).toString("utf8")
    let body: any
    try {
      body = text === "" ? undefined : JSON.parse(text)
    } catch {
      return { status: 422, body: { ok: false, error: "body is not JSON", issues: [{ path: "", message: "not JSON" }] } }
    }
    const token = typeof req.headers[REGISTRANT_TOKEN_HEADER] === "string" ? (req.headers[REGISTRANT_TOKEN_HEADER] as string) : undefined
    const path = (req.url ?? "").split("?")[0] as string
    const request: Received = { method: req.method ?? "", path, body, token }
    this.received.push(request)
    const injected = this.intercept?.(request)
    if (injected !== undefined) return injected
    if (req.method === "GET" && path === "/api/health") return { status: 200, body: { ok: true, roles: ["default"] } }
    if (req.method === "GET" && path === "/api/tools") {
      return { status: 200, body: { ok: true, roles: { default: [...this.tools.values()].map((t) => ({ name: t.name, source: t.source, parameters: t.parameters })) } } }
    }
    if (req.method !== "POST") return { status: 404, body: { ok: false, error: "not found" } }
    if (path === "/api/tools/register") return this.register(body, token)
    if (path === "/api/tools/unregister") {
      const existing = this.tools.get(body?.name)
      if (existing === undefined) return { status: 404, body: { ok: false, error: `unknown tool: ${String(body?.name)}` } }
      const refusal = this.ownership(existing.source, token, existing.name)
      if (refusal !== undefined) return refusal
      this.tools.delete(existing.name)
      return { status: 200, body: { ok: true, unregistered: existing.name } }
    }
    if (path === "/api/tools/clear") {
      if (typeof body?.source !== "string" || body.source === "") return { status: 422, body: { ok: false, error: "source is required", issues: [{ path: "source", message: "required" }] } }
      const refusal = this.ownership(body.source, token, "*")
      if (refusal !== undefined) return refusal
      let cleared = 0
      for (const [name, t] of this.tools) if (t.source === body.source) (this.tools.delete(name), cleared++)
      return { status: 200, body: { ok: true, cleared } }
    }
    return { status: 404, body: { ok: false, error: "not found" } }
  }

  private ownership(source: string, token: string | undefined, name: string): Answer | undefined {
    const owner = this.tokens.get(source)
    if (owner === undefined) return undefined
    if (owner.token === token) {
      owner.claimed = true
      return undefined
    }
    if (token === undefined && !owner.claimed) return undefined
    return { status: 409, body: { ok: false, error: `tool "${name}" belongs to source "${source}"; present its registrant token` } }
  }

  private register(body: any, token: string | undefined): Answer {
    if (typeof body?.name !== "string" || !/^[A-Za-z0-9_.-]{1,64}$/.test(body.name)) {
      return { status: 422, body: { ok: false, error: "invalid name", issues: [{ path: "name", message: "1 to 64 of [A-Za-z0-9_.-]" }] } }
    }
    const source = typeof body.source === "string" ? body.source : "external"
    const existing = this.tools.get(body.name)
    if (existing !== undefined && existing.source !== source && this.tokens.get(existing.source)?.token !== token) {
      return { status: 409, body: { ok: false, error: `tool "${body.name}" belongs to source "${existing.source}"; present its registrant token` } }
    }
    const refusal = this.ownership(source, token, body.name)
    if (refusal !== undefined) return refusal
    let issued: string | undefined
    if (!this.tokens.has(source)) {
      issued = randomBytes(16).toString("hex")
      this.tokens.set(source, { token: issued, claimed: false })
    }
    const secret = randomBytes(32).toString("hex")
    this.tools.set(body.name, { name: body.name, source, callbackUrl: body.callback_url, secret, role: body.role ?? null, timeoutSeconds: body.timeout_seconds ?? 30, parameters: body.parameters })
    return {
      status: 200,
      body: { ok: true, registered: body.name, affected_roles: ["default"], failed_roles: [], pending_roles: [], callback_secret: secret, ...(issued === undefined ? {} : { registrant_token: issued }) }
    }
  }
}

/** Resolves when `check` holds, polling; rejects with `what` after `ms`. */
export const eventually = async (check: () => boolean, what: string, ms = 5000): Promise<void> => {
  const until = Date.now() + ms
  while (!check()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 10))
  }
}
