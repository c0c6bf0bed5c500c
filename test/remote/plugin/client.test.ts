import { createServer } from "node:net"
import { Effect } from "effect"
import fc from "fast-check"
import { afterEach, describe, expect, it } from "vitest"
import { z } from "zod"
import { signedCallbackHeaders } from "../../../src/remote/signing.ts"
import { INSTANCE_HEADER, SIGNATURE_V2_HEADER } from "../../../src/remote/wire.ts"
import {
  PluginStopped,
  RegistrationRefused,
  remoteFailure,
  remoteTool,
  startPlugin,
  toolFailure,
  type Plugin,
  type PluginEvent,
  type PluginOptions
} from "../../../src/remote/plugin/index.ts"
import { ContractHost, eventually } from "../../../bench/support/contract-host.ts"

class CityNotFound extends Error {
  override name = "CityNotFound"
}

const weather = remoteTool({
  name: "get_weather",
  description: "Weather for a city",
  parameters: z.object({ city: z.string(), days: z.int().min(1).max(14).optional() }),
  execute: ({ city, days }) => {
    if (city === "Atlantis") throw new CityNotFound(`no forecast for ${city}`)
    if (city === "Nowhere") return remoteFailure("CITY_NOT_FOUND", { reason: "no such city" })
    if (city === "Void") return toolFailure("the void has no weather")
    return { city, days: days ?? 1, temp_c: 22 }
  }
})

let cleanup: Array<() => Promise<unknown>> = []
afterEach(async () => {
  for (const step of cleanup.reverse()) await step().catch(() => undefined)
  cleanup = []
})

const host = async (port = 0): Promise<ContractHost> => {
  const h = await ContractHost.start(port)
  cleanup.push(() => h.close())
  return h
}

const plugin = async (h: { url: string } | string, options: Partial<PluginOptions> = {}, events: Array<PluginEvent> = []): Promise<Plugin> => {
  const p = await startPlugin({
    source: "plugin:weather",
    tools: [weather],
    host: typeof h === "string" ? h : h.url,
    retry: { initialDelayMs: 5, maxDelayMs: 40 },
    healthIntervalMs: 20,
    shutdown: { signals: false, deadlineMs: 500 },
    onEvent: (e) => events.push(e),
    ...options
  })
  cleanup.push(() => p.stop())
  return p
}

const freePort = (): Promise<number> =>
  new Promise((resolve) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const { port } = s.address() as { port: number }
      s.close(() => resolve(port))
    })
  })

const post = (url: string, body: string, headers: Record<string, string> = {}) =>
  fetch(url, { method: "POST", headers: { "content-type": "application/json", ...headers }, body }).then(async (r) => ({ status: r.status, body: (await r.json()) as any }))

describe("the plugin client against the contract", () => {
  it("registers, then answers signed callbacks with typed, decoded arguments", async () => {
    const h = await host()
    const p = await plugin(h)
    await p.ready
    const reg = h.tools.get("get_weather")!
    expect(reg).toMatchObject({ source: "plugin:weather", role: null, timeoutSeconds: 30, callbackUrl: `${p.callbackOrigin}/tools/get_weather` })
    expect(reg.parameters).toEqual(weather.parameters)
    expect(await h.call("get_weather", { city: "Kyoto", days: 3 })).toEqual({ status: 200, body: { output: { city: "Kyoto", days: 3, temp_c: 22 } } })
    expect(p.status()).toEqual([{ name: "get_weather", state: "registered", instanceId: h.instanceId, affectedRoles: ["default"], pendingRoles: [], lastError: undefined }])
  })

  it("answers refused arguments, throws and failures as error results naming the field or the error", async () => {
    const h = await host()
    await (await plugin(h)).ready
    expect((await h.call("get_weather", { city: "Kyoto", days: 20 })).body).toEqual({ is_error: true, error: "InvalidArgument: days: expected integer <= 14, got 20" })
    expect((await h.call("get_weather", {})).body).toEqual({ is_error: true, error: "InvalidArgument: city: required" })
    expect((await h.call("get_weather", { city: "Atlantis" })).body).toEqual({ is_error: true, error: "CityNotFound: no forecast for Atlantis" })
    expect((await h.call("get_weather", { city: "Nowhere" })).body).toEqual({ is_error: true, error: "CITY_NOT_FOUND", output: { reason: "no such city" } })
    expect((await h.call("get_weather", { city: "Void" })).body).toEqual({ is_error: true, error: "the void has no weather" })
    expect((await h.call("get_weather", null, { raw: "{not json" })).body.error).toMatch(/^InvalidArgument: arguments are not valid JSON: /)
    let deep: unknown = "x"
    for (let i = 0; i < 200; i++) deep = [deep]
    expect((await h.call("get_weather", { city: "Kyoto", deep })).body).toEqual({ is_error: true, error: "InvalidArgument: arguments nested deeper than 64 levels" })
  })

  it("runs Effect and async handlers, and never crashes on a hostile result", async () => {
    const cyclic: Record<string, unknown> = {}
    cyclic["self"] = cyclic
    const tools = [
      remoteTool({ name: "eff", execute: () => Effect.fail(new CityNotFound("from an Effect")) }),
      remoteTool({ name: "cyclic", execute: async () => cyclic }),
      remoteTool({ name: "big", execute: () => 10n }),
      remoteTool({ name: "nothing", execute: () => undefined }),
      remoteTool({
        name: "hostile",
        execute: () => {
          throw new Proxy({}, { get: () => { throw new Error("trap") }, getPrototypeOf: () => { throw new Error("trap") } })
        }
      })
    ]
    const h = await host()
    await (await plugin(h, { tools })).ready
    expect((await h.call("eff", {})).body.is_error).toBe(true)
    expect((await h.call("eff", {})).body.error).toContain("from an Effect")
    expect((await h.call("cyclic", {})).body.error).toMatch(/^OutputNotJson: /)
    expect((await h.call("big", {})).body.error).toMatch(/^OutputNotJson: /)
    expect((await h.call("nothing", {})).body).toEqual({ output: null })
    expect((await h.call("hostile", {})).body).toMatchObject({ is_error: true, error: expect.stringMatching(/^Error: /) })
  })

  it("refuses forged, stale, replayed and unsigned callbacks with 401, and keeps the previous secret for a window", async () => {
    const h = await host()
    const events: Array<PluginEvent> = []
    const p = await plugin(h, {}, events)
    await p.ready
    const url = h.tools.get("get_weather")!.callbackUrl
    const body = JSON.stringify({ name: "get_weather", arguments: { city: "Kyoto" }, call_id: "c1", raw_arguments: '{"city":"Kyoto"}' })
    const now = String(Math.floor(Date.now() / 1000))
    const secret = h.tools.get("get_weather")!.secret
    const sign = (s: string, t: string, b = body) => signedCallbackHeaders(s, b, { timestamp: t })
    expect(await post(url, body)).toEqual({ status: 401, body: { ok: false, error: "signature missing" } })
    expect((await post(url, body, sign("a-forger", now))).body.error).toBe("signature mismatch")
    expect((await post(url, body, { ...sign(secret, now), [SIGNATURE_V2_HEADER]: "v2=zz" })).body.error).toBe("signature malformed")
    expect((await post(url, body, sign(secret, String(Number(now) - 3600)))).body.error).toBe("signature stale")
    const tampered = body.replace("Kyoto", "Osaka")
    expect((await post(url, tampered, sign(secret, now))).body.error).toBe("signature mismatch")
    const good = sign(secret, now)
    expect((await post(url, body, good)).status).toBe(200)
    expect(await post(url, body, good)).toEqual({ status: 401, body: { ok: false, error: "signature replayed" } })
    // A re-registration rotates the secret; a call signed with the old one is still in flight.
    h.restart()
    await eventually(() => p.status()[0]!.instanceId === h.instanceId, "re-registration")
    expect(h.tools.get("get_weather")!.secret).not.toBe(secret)
    const later = String(Number(now) + 1)
    const old = JSON.stringify({ name: "get_weather", arguments: { city: "Oslo" }, call_id: "c2", raw_arguments: "{}" })
    expect((await post(url, old, sign(secret, later, old))).status).toBe(200)
    expect(events.filter((e) => e.type === "callback_rejected").map((e) => (e as { reason: string }).reason)).toEqual([
      "signature missing", "signature mismatch", "signature malformed", "signature stale", "signature mismatch", "signature replayed"
    ])
  })

  it("takes no instance id from a callback it cannot verify, and confirms a verified one with the host", async () => {
    const h = await host()
    const events: Array<PluginEvent> = []
    const p = await plugin(h, { healthIntervalMs: 60_000 }, events)
    await p.ready
    const url = h.tools.get("get_weather")!.callbackUrl
    expect((await post(url, "{}", { [INSTANCE_HEADER]: "forged-instance" })).status).toBe(401)
    const registration = h.tools.get("get_weather")!
    // A host restart the slow health poll has not seen: the first verified callback names the new id.
    h.restart()
    h.tools.set("get_weather", registration)
    const healthBefore = h.paths().filter((x) => x === "/api/health").length
    await new Promise((r) => setTimeout(r, 50))
    expect(events.some((e) => e.type === "host_restarted")).toBe(false)
    await h.call("get_weather", { city: "Kyoto" })
    await eventually(() => h.paths().filter((x) => x === "/api/health").length > healthBefore, "a health check")
    await eventually(() => events.some((e) => e.type === "host_restarted"), "the restart noticed")
  })

  it("bounds and checks the request itself: size, type, method, route, envelope", async () => {
    const h = await host()
    const p = await plugin(h, { callback: { maxBodyBytes: 1024 } })
    await p.ready
    const url = h.tools.get("get_weather")!.callbackUrl
    const big = JSON.stringify({ name: "get_weather", arguments: { city: "x".repeat(5000) } })
    expect((await post(url, big)).status).toBe(413)
    expect((await fetch(url, { method: "POST", headers: { "content-type": "text/plain" }, body: "{}" })).status).toBe(415)
    expect((await fetch(url)).status).toBe(405)
    expect((await post(`${p.callbackOrigin}/tools/other`, "{}")).status).toBe(404)
    const unsigned = await startPlugin({ source: "s2", tools: [weather], host: h.url, signatures: { verify: false }, shutdown: { signals: false }, healthIntervalMs: 1000 })
    cleanup.push(() => unsigned.stop())
    const url2 = `${unsigned.callbackOrigin}/tools/get_weather`
    expect((await post(url2, "{nope")).status).toBe(400)
    expect((await post(url2, JSON.stringify({ name: "someone_else" }))).status).toBe(400)
    expect((await post(url2, JSON.stringify({ name: "get_weather", arguments: [1] }))).body).toEqual({ is_error: true, error: "InvalidArgument: arguments must be a JSON object, got array" })
  })

  it("aborts a handler at its deadline and when the host gives up on the call", async () => {
    let aborted = 0
    const hang = (ms: number) => remoteTool({
      name: `hang${ms}`,
      timeoutSeconds: ms / 1000,
      execute: (_a, { signal }) => new Promise((resolve) => signal.addEventListener("abort", () => (aborted++, resolve("late")), { once: true }))
    })
    const h = await host()
    await (await plugin(h, { tools: [hang(100), hang(10_000)] })).ready
    expect((await h.call("hang100", {})).body).toEqual({ is_error: true, error: 'ToolTimeout: tool "hang100" exceeded its 0.1 s deadline' })
    const reg = h.tools.get("hang10000")!
    const body = JSON.stringify({ name: "hang10000", arguments: {}, call_id: "c", raw_arguments: "{}" })
    const gaveUp = new AbortController()
    const call = fetch(reg.callbackUrl, { method: "POST", signal: gaveUp.signal, headers: { "content-type": "application/json", ...signedCallbackHeaders(reg.secret, body) }, body })
    await new Promise((r) => setTimeout(r, 50))
    gaveUp.abort()
    await call.catch(() => undefined)
    await eventually(() => aborted === 2, "the handler's signal to abort")
  })

  it("retries until the host is up: connection refused, then 503 and 409 while starting", async () => {
    const port = await freePort()
    const events: Array<PluginEvent> = []
    const p = await plugin(`http://127.0.0.1:${port}`, {}, events)
    await eventually(() => events.filter((e) => e.type === "registration_failed").length >= 2, "refused attempts")
    const h = await host(port)
    let starting = 2
    h.intercept = (r) => (r.path === "/api/tools/register" && starting-- > 0 ? { status: starting === 1 ? 503 : 409, body: { ok: false, error: "starting" } } : undefined)
    await p.ready
    const failures = events.filter((e): e is Extract<PluginEvent, { type: "registration_failed" }> => e.type === "registration_failed")
    expect(failures[0]).toMatchObject({ status: 0, error: expect.stringContaining("ECONNREFUSED"), retryInMs: expect.any(Number) })
    expect(failures.slice(-2).map((f) => f.status)).toEqual([503, 409])
    expect(failures.every((f) => f.retryInMs !== undefined && f.retryInMs <= 40)).toBe(true)
    expect(h.tools.has("get_weather")).toBe(true)
  })

  it("reports a final refusal without retrying, and rejects ready", async () => {
    const h = await host()
    h.intercept = (r) => (r.path === "/api/tools/register" ? { status: 422, body: { ok: false, error: "parameters: refused by gemini", issues: [] } } : undefined)
    const p = await plugin(h)
    await expect(p.ready).rejects.toBeInstanceOf(RegistrationRefused)
    await expect(p.ready).rejects.toMatchObject({ message: expect.stringContaining("HTTP 422: parameters: refused by gemini") })
    expect(h.paths().filter((x) => x === "/api/tools/register")).toHaveLength(1)
    expect(p.status()[0]!.state).toBe("refused")
  })

  it("re-registers by itself after a host restart, noticed by health polling", async () => {
    const h = await host()
    const events: Array<PluginEvent> = []
    const p = await plugin(h, {}, events)
    await p.ready
    const first = h.instanceId
    h.restart()
    expect(h.tools.size).toBe(0)
    await eventually(() => p.status()[0]!.instanceId === h.instanceId, "re-registration")
    expect(events).toContainEqual({ type: "host_restarted", previous: first, current: h.instanceId })
    expect(p.instanceId).toBe(h.instanceId)
    expect((await h.call("get_weather", { city: "Kyoto" })).body.output.city).toBe("Kyoto")
  })

  it("re-registers after a host that went away comes back as a new instance", async () => {
    const h = await host()
    const events: Array<PluginEvent> = []
    const p = await plugin(h, {}, events)
    await p.ready
    const port = h.port
    await h.close()
    await eventually(() => events.some((e) => e.type === "host_unreachable"), "host_unreachable")
    const again = await host(port)
    await eventually(() => p.status()[0]!.instanceId === again.instanceId, "registration with the new host")
    expect(p.status()[0]).toMatchObject({ state: "registered", instanceId: again.instanceId })
    expect(again.tools.has("get_weather")).toBe(true)
  })

  it("presents a token of its own from the first registration; with a host that issues tokens instead, the issued one after", async () => {
    const tools = ["a", "b", "c"].map((name) => remoteTool({ name, execute: () => name }))
    const h = await host()
    await (await plugin(h, { tools })).ready
    const registers = h.received.filter((r) => r.path === "/api/tools/register")
    expect(registers[0]!.token).toMatch(/^[A-Za-z0-9_-]{43}$/)
    // This stand-in host issues a token at the first registration (as hosts before decision 0095 did).
    expect(new Set(registers.slice(1).map((r) => r.token)).size).toBe(1)
    expect(registers[1]!.token).not.toBe(registers[0]!.token)
    expect(registers[1]!.token).toEqual(expect.any(String))
  })

  it("clears its source with its token on stop, refuses calls after, and is idempotent", async () => {
    const h = await host()
    const events: Array<PluginEvent> = []
    const p = await plugin(h, {}, events)
    await p.ready
    const url = h.tools.get("get_weather")!.callbackUrl
    await Promise.all([p.stop(), p.stop()])
    const clear = h.received.find((r) => r.path === "/api/tools/clear")!
    expect(clear.body).toEqual({ role: null, source: "plugin:weather" })
    expect(clear.token).toEqual(expect.any(String))
    expect(h.tools.size).toBe(0)
    expect(events.at(-1)).toEqual({ type: "unregistered", tools: ["get_weather"], ok: true })
    await expect(fetch(url, { method: "POST", body: "{}" })).rejects.toThrow()
  })

  it("stops within its deadline when the host is gone, and rejects a ready still waiting", async () => {
    const port = await freePort()
    const p = await plugin(`http://127.0.0.1:${port}`)
    const started = Date.now()
    await p.stop({ deadlineMs: 300 })
    expect(Date.now() - started).toBeLessThan(3000)
    await expect(p.ready).rejects.toBeInstanceOf(PluginStopped)
  })

  it("adds and removes tools at run time", async () => {
    const h = await host()
    const p = await plugin(h)
    await p.ready
    p.addTool(remoteTool({ name: "later", execute: () => "added" }))
    await eventually(() => h.tools.has("later"), "the added tool")
    expect((await h.call("later", {})).body).toEqual({ output: "added" })
    await p.removeTool("later")
    expect(h.tools.has("later")).toBe(false)
    expect(() => p.addTool(weather)).toThrow(/already served/)
  })
})

describe("hostile callbacks", () => {
  it("answers any signed JSON value as arguments with exactly one contract body, and stays up", async () => {
    const h = await host()
    const p = await plugin(h)
    await p.ready
    const reg = h.tools.get("get_weather")!
    let n = 0
    await fc.assert(
      fc.asyncProperty(fc.jsonValue({ maxDepth: 6 }), async (args) => {
        const body = JSON.stringify({ name: "get_weather", arguments: args, call_id: `c${n++}`, raw_arguments: "" })
        const r = await post(reg.callbackUrl, body, signedCallbackHeaders(reg.secret, body))
        if (r.status !== 200) return false
        return "output" in r.body ? r.body.output.temp_c === 22 : r.body.is_error === true && typeof r.body.error === "string" && r.body.error.startsWith("InvalidArgument: ")
      }),
      { numRuns: 150 }
    )
    // Repeated headers arrive as one joined string or an array: neither is a valid signature.
    const body = JSON.stringify({ name: "get_weather", arguments: { city: "Kyoto" } })
    const signed = signedCallbackHeaders(reg.secret, body)
    const headers = new Headers({ "content-type": "application/json", ...signed })
    headers.append(SIGNATURE_V2_HEADER, signed[SIGNATURE_V2_HEADER] as string)
    expect((await fetch(reg.callbackUrl, { method: "POST", headers, body })).status).toBe(401)
    expect((await h.call("get_weather", { city: "Kyoto" })).body.output.city).toBe("Kyoto")
  })
})

describe("signals", () => {
  it("one SIGTERM stops every plugin of the process; with another listener present the signal is not raised again", async () => {
    const h = await host()
    const listeners = process.listenerCount("SIGTERM")
    const a = await startPlugin({ source: "a", tools: [weather], host: h.url, healthIntervalMs: 1000 })
    const b = await startPlugin({ source: "b", tools: [remoteTool({ name: "other", execute: () => 1 })], host: h.url, healthIntervalMs: 1000 })
    cleanup.push(() => a.stop(), () => b.stop())
    await Promise.all([a.ready, b.ready])
    expect(process.listenerCount("SIGTERM")).toBe(listeners + 1)
    const keepAlive = () => undefined
    process.on("SIGTERM", keepAlive)
    try {
      process.emit("SIGTERM", "SIGTERM")
      await eventually(() => h.received.filter((r) => r.path === "/api/tools/clear").length === 2, "both sources cleared")
      // The handler decides whether to raise the signal again once both have stopped: keep a listener until then.
      await Promise.all([a.stop(), b.stop()])
      await new Promise((r) => setTimeout(r, 20))
    } finally {
      process.off("SIGTERM", keepAlive)
    }
    expect(h.tools.size).toBe(0)
    expect(process.listenerCount("SIGTERM")).toBe(listeners)
  })
})
