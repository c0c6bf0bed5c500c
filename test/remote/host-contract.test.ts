import { afterEach, describe, expect, it } from "vitest"
import { z } from "zod"
import { defineTool } from "../../src/index.ts"
import { BUILTIN_SOURCE, INSTANCE_HEADER, REGISTRANT_TOKEN_HEADER, ACCESS_KEY_HEADER } from "../../src/remote/index.ts"
import { api, closeAll, startHost, weatherTool } from "./support/host.ts"

afterEach(closeAll)

const CALLBACK = "http://127.0.0.1:9876/tool_invoke"
const twoRoles = { roles: { 小八: { model: "m" }, other: { model: "m" } } }

describe("the HTTP contract", () => {
  it("registers for every role, lists, and carries the instance id in a header and every body", async () => {
    const host = await startHost({ config: twoRoles })
    const registered = await api(host, "POST", "/api/tools/register", weatherTool(CALLBACK))
    expect(registered.status).toBe(200)
    expect(registered.headers.get(INSTANCE_HEADER)).toBe(host.instanceId)
    expect(registered.body).toMatchObject({
      ok: true,
      registered: "get_weather",
      affected_roles: ["小八", "other"],
      failed_roles: [],
      pending_roles: [],
      instance_id: host.instanceId,
      source: "my_plugin"
    })
    expect(registered.body["callback_secret"]).toMatch(/^[0-9a-f]{64}$/)
    expect(registered.body["registrant_token"]).toEqual(expect.any(String))
    const list = await api(host, "GET", "/api/tools")
    expect(list.body["instance_id"]).toBe(host.instanceId)
    const roles = list.body["roles"] as Record<string, Array<Record<string, unknown>>>
    expect(Object.keys(roles)).toEqual(["小八", "other"])
    expect(roles["小八"]).toEqual([
      expect.objectContaining({ name: "get_weather", source: "my_plugin", timeout_seconds: 30, callback_host: "127.0.0.1:9876", state: "active", calls: 0 })
    ])
    const one = await api(host, "GET", `/api/tools?role=${encodeURIComponent("小八")}`)
    expect(Object.keys(one.body["roles"] as object)).toEqual(["小八"])
    const health = await api(host, "GET", "/api/health")
    // The test's environment names no provider: both roles hold tools but cannot chat, and health says so.
    expect(health.body).toEqual({
      ok: true,
      roles: ["小八", "other"],
      roles_without_model: [
        { role: "小八", problem: expect.stringMatching(/^no provider configured/) },
        { role: "other", problem: expect.stringMatching(/^no provider configured/) }
      ],
      instance_id: host.instanceId
    })
  })

  it("a new start has a new instance id", async () => {
    const a = await startHost()
    const b = await startHost()
    expect(a.instanceId).not.toBe(b.instanceId)
    expect((await api(b, "GET", "/api/health")).headers.get(INSTANCE_HEADER)).toBe(b.instanceId)
  })

  it("registers for one role; an unknown role is 404 `unknown role: <role>`", async () => {
    const host = await startHost({ config: twoRoles })
    const one = await api(host, "POST", "/api/tools/register", weatherTool(CALLBACK, { role: "other" }))
    expect(one.body).toMatchObject({ ok: true, affected_roles: ["other"] })
    const unknown = await api(host, "POST", "/api/tools/register", weatherTool(CALLBACK, { role: "nobody" }))
    expect(unknown.status).toBe(404)
    expect(unknown.body).toMatchObject({ ok: false, error: "unknown role: nobody", instance_id: host.instanceId })
    expect((await api(host, "GET", "/api/tools?role=nobody")).status).toBe(404)
    expect((await api(host, "POST", "/api/tools/unregister", { name: "get_weather", role: "nobody" })).status).toBe(404)
    expect((await api(host, "POST", "/api/tools/clear", { source: "x", role: "nobody" })).status).toBe(404)
  })

  it("defaults: no parameters means no arguments, source external, timeout 30; role \"\" means every role", async () => {
    const host = await startHost({ config: twoRoles })
    const r = await api(host, "POST", "/api/tools/register", { name: "ping", callback_url: CALLBACK, role: "" })
    expect(r.body).toMatchObject({ ok: true, affected_roles: ["小八", "other"], source: "external" })
    const tool = (((await api(host, "GET", "/api/tools")).body["roles"] as Record<string, Array<Record<string, unknown>>>)["other"] ?? [])[0]
    expect(tool).toMatchObject({ name: "ping", source: "external", timeout_seconds: 30, parameters: { type: "object", properties: {}, additionalProperties: false } })
  })

  it.each([
    [{ callback_url: CALLBACK }, "name"],
    [{ name: "", callback_url: CALLBACK }, "name"],
    [{ name: "a".repeat(65), callback_url: CALLBACK }, "name"],
    [{ name: "get weather", callback_url: CALLBACK }, "name"],
    [{ name: "ok" }, "callback_url"],
    [{ name: "ok", callback_url: "http://10.0.0.1/" }, "callback_url"],
    [{ name: "ok", callback_url: CALLBACK, timeout_seconds: 0 }, "timeout_seconds"],
    [{ name: "ok", callback_url: CALLBACK, timeout_seconds: 301 }, "timeout_seconds"],
    [{ name: "ok", callback_url: CALLBACK, timeout_seconds: "30" }, "timeout_seconds"],
    [{ name: "ok", callback_url: CALLBACK, parameters: [] }, "parameters"],
    [{ name: "ok", callback_url: CALLBACK, parameters: { type: "array" } }, "parameters"],
    [{ name: "ok", callback_url: CALLBACK, source: "" }, "source"],
    [{ name: "ok", callback_url: CALLBACK, role: 7 }, "role"],
    [{ name: "ok", callback_url: CALLBACK, extra: true }, "extra"]
  ])("422 for %j, naming the field %s", async (body, field) => {
    const host = await startHost()
    const r = await api(host, "POST", "/api/tools/register", body)
    expect(r.status).toBe(422)
    expect(r.body).toMatchObject({ ok: false, instance_id: host.instanceId })
    expect((r.body["issues"] as Array<{ path: string }>).map((i) => i.path.split(".")[0])).toContain(field)
  })

  it("lints against every provider at registration: what one of them refuses is 422 with the provider and the field", async () => {
    // Every role here uses OpenAI, which would take the name; Gemini would not, and the host lints for all four.
    const host = await startHost({ config: { roles: { a: { provider: "openai", model: "m" } } }, env: { OPENAI_API_KEY: "k" } })
    const name = await api(host, "POST", "/api/tools/register", { name: "1st_tool", callback_url: CALLBACK })
    expect(name.status).toBe(422)
    expect(name.body["issues"]).toEqual([{ path: "name", message: expect.stringContaining("gemini") }])
    const ref = await api(host, "POST", "/api/tools/register", { name: "lookup", callback_url: CALLBACK, parameters: { type: "object", properties: { a: { $ref: "#/$defs/nowhere" } } } })
    expect(ref.status).toBe(422)
    expect(ref.body["issues"]).toEqual([expect.objectContaining({ path: expect.stringMatching(/^parameters/) })])
    const deep = await api(host, "POST", "/api/tools/register", { name: "deep", callback_url: CALLBACK, parameters: { type: "object", properties: { a: JSON.parse(`${"{\"type\":\"array\",\"items\":".repeat(40)}{}${"}".repeat(40)}`) } } })
    expect(deep.status).toBe(200)
    expect((await api(host, "GET", "/api/tools")).body["roles"]).toEqual({ a: [expect.objectContaining({ name: "deep" })] })
  })

  it("a body that is not JSON is 422, never read as a form; oversized is 413; too deep is 422", async () => {
    const host = await startHost({ config: { server: { max_body_bytes: 2048 } } })
    for (const body of ["name=x&callback_url=http://127.0.0.1:1/", "", "[1]", "null", "{\"name\":"]) {
      const response = await fetch(`${host.url}/api/tools/register`, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body })
      expect(response.status).toBe(422)
      expect(((await response.json()) as { issues: unknown }).issues).toEqual([expect.objectContaining({ path: "" })])
    }
    const big = await fetch(`${host.url}/api/tools/register`, { method: "POST", body: JSON.stringify({ name: "x", description: "d".repeat(5000), callback_url: CALLBACK }) })
    expect(big.status).toBe(413)
    expect(big.headers.get(INSTANCE_HEADER)).toBe(host.instanceId)
    const deep = await fetch(`${host.url}/api/tools/register`, { method: "POST", body: `${"[".repeat(200)}${"]".repeat(200)}` })
    expect(deep.status).toBe(422)
  })

  it("clear needs a source of at least one character (422), and builtin cannot be cleared (403)", async () => {
    const builtin = defineTool({ name: "host_clock", description: "the host's clock", parameters: z.object({}), execute: () => "now" })
    const host = await startHost({ builtinTools: [builtin] })
    expect((await api(host, "POST", "/api/tools/clear", { role: null, source: "" })).status).toBe(422)
    const missing = await api(host, "POST", "/api/tools/clear", { role: null })
    expect(missing.status).toBe(422)
    expect(missing.body["issues"]).toEqual([expect.objectContaining({ path: "source" })])
    const cleared = await api(host, "POST", "/api/tools/clear", { role: null, source: BUILTIN_SOURCE })
    expect(cleared.status).toBe(403)
    expect((await api(host, "POST", "/api/tools/register", { name: "x", callback_url: CALLBACK, source: BUILTIN_SOURCE })).status).toBe(403)
    const replace = await api(host, "POST", "/api/tools/register", { name: "host_clock", callback_url: CALLBACK })
    expect(replace.status).toBe(409)
    expect(replace.body["error"]).toContain("builtin")
    expect((await api(host, "POST", "/api/tools/unregister", { name: "host_clock" })).status).toBe(409)
    const list = await api(host, "GET", "/api/tools")
    expect((list.body["roles"] as Record<string, Array<{ name: string; source: string }>>)["default"]).toEqual([
      expect.objectContaining({ name: "host_clock", source: "builtin" })
    ])
  })

  it("unregister: 404 for an unknown tool, removes from every role that has it", async () => {
    const host = await startHost({ config: twoRoles })
    expect((await api(host, "POST", "/api/tools/unregister", { name: "nope", role: null })).body).toMatchObject({ ok: false, error: "unknown tool: nope" })
    await api(host, "POST", "/api/tools/register", weatherTool(CALLBACK))
    const r = await api(host, "POST", "/api/tools/unregister", { name: "get_weather", role: null })
    expect(r.body).toMatchObject({ ok: true, unregistered: "get_weather", affected_roles: ["小八", "other"] })
    expect((await api(host, "POST", "/api/tools/unregister", { name: "get_weather" })).status).toBe(404)
  })

  it("registering a name again replaces it (hot schema update) with a new callback secret", async () => {
    const host = await startHost()
    const first = await api(host, "POST", "/api/tools/register", weatherTool(CALLBACK))
    const second = await api(host, "POST", "/api/tools/register", weatherTool(CALLBACK, { description: "v2", parameters: { type: "object", properties: { town: { type: "string" } } } }))
    expect(second.body).toMatchObject({ ok: true })
    expect(second.body["registrant_token"]).toBeUndefined()
    expect(second.body["callback_secret"]).not.toBe(first.body["callback_secret"])
    const tools = (await api(host, "GET", "/api/tools")).body["roles"] as Record<string, Array<Record<string, unknown>>>
    expect(tools["default"]).toEqual([expect.objectContaining({ description: "v2", parameters: { type: "object", properties: { town: { type: "string" } } } })])
  })

  it("unknown endpoints are JSON 404s with the instance id", async () => {
    const host = await startHost()
    const r = await api(host, "GET", "/api/nothing")
    expect(r.status).toBe(404)
    expect(r.body).toMatchObject({ ok: false, instance_id: host.instanceId })
  })

  it("an access key, when configured, is required on every request (403 otherwise)", async () => {
    const host = await startHost({ config: { server: { access_key_env: "HOST_KEY" } }, env: { HOST_KEY: "k".repeat(32) } })
    expect((await api(host, "GET", "/api/health")).status).toBe(403)
    expect((await api(host, "GET", "/api/health", undefined, { [ACCESS_KEY_HEADER]: "wrong" })).status).toBe(403)
    expect((await api(host, "GET", "/api/health", undefined, { [ACCESS_KEY_HEADER]: "k".repeat(32) })).status).toBe(200)
    await expect(startHost({ config: { server: { access_key_env: "HOST_KEY" } }, env: { HOST_KEY: "short" } })).rejects.toThrow(/at least 16/)
  })

  it("refuses browsers from other origins and DNS-rebinding Host headers (403)", async () => {
    const host = await startHost()
    expect((await api(host, "POST", "/api/tools/register", weatherTool(CALLBACK), { origin: "https://evil.example" })).status).toBe(403)
    expect((await api(host, "GET", "/api/health", undefined, { origin: host.url })).status).toBe(200)
    const { request } = await import("node:http")
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(`${host.url}/api/health`, { headers: { host: "evil.example:48911" } }, (res) => {
        res.resume()
        resolve(res.statusCode ?? 0)
      })
      req.on("error", reject)
      req.end()
    })
    expect(status).toBe(403)
  })
})

describe("ownership", () => {
  const register = (host: { url: string }, extra: Record<string, unknown> = {}, token?: string) =>
    api(host, "POST", "/api/tools/register", weatherTool(CALLBACK, extra), token === undefined ? {} : { [REGISTRANT_TOKEN_HEADER]: token })

  it("token-less clients (the seed's) keep working for their own tools", async () => {
    const host = await startHost()
    expect((await register(host)).body["ok"]).toBe(true)
    expect((await register(host)).body["ok"]).toBe(true)
    expect((await api(host, "POST", "/api/tools/unregister", { name: "get_weather", role: null })).body["ok"]).toBe(true)
    expect((await register(host)).body["ok"]).toBe(true)
    expect((await api(host, "POST", "/api/tools/clear", { role: null, source: "my_plugin" })).body).toMatchObject({ ok: true, cleared: ["get_weather"] })
  })

  it("another source cannot overwrite a tool (409), even unclaimed; with the owner's token it can", async () => {
    const host = await startHost()
    const first = await register(host)
    const token = first.body["registrant_token"] as string
    const stolen = await register(host, { source: "intruder", callback_url: "http://127.0.0.1:6666/steal" })
    expect(stolen.status).toBe(409)
    expect(stolen.body["error"]).toBe(`tool "get_weather" belongs to source "my_plugin"; present its registrant token`)
    const owned = await register(host, { source: "my_plugin", description: "owner update" }, token)
    expect(owned.status).toBe(200)
    // The token acts as its source; naming another source with it is refused.
    expect((await register(host, { source: "intruder" }, token)).status).toBe(409)
  })

  it("once the token was presented, the source is claimed: token-less replace / unregister / clear are 409", async () => {
    const host = await startHost()
    const token = (await register(host)).body["registrant_token"] as string
    expect((await register(host, {}, token)).status).toBe(200)
    expect((await register(host)).status).toBe(409)
    expect((await api(host, "POST", "/api/tools/unregister", { name: "get_weather" })).status).toBe(409)
    const clear = await api(host, "POST", "/api/tools/clear", { source: "my_plugin" })
    expect(clear.status).toBe(409)
    expect(clear.body["error"]).toContain("registrant token")
    const withToken = await api(host, "POST", "/api/tools/clear", { source: "my_plugin" }, { [REGISTRANT_TOKEN_HEADER]: token })
    expect(withToken.body).toMatchObject({ ok: true, cleared: ["get_weather"] })
    expect((await api(host, "GET", "/api/tools", undefined)).body["roles"]).toEqual({ default: [] })
  })

  it("clear across owners removes only the named source's tools", async () => {
    const host = await startHost()
    await register(host, { name: "a", source: "one" })
    await register(host, { name: "b", source: "two" })
    const r = await api(host, "POST", "/api/tools/clear", { source: "one" })
    expect(r.body).toMatchObject({ ok: true, cleared: ["a"] })
    const names = ((await api(host, "GET", "/api/tools")).body["roles"] as Record<string, Array<{ name: string }>>)["default"]?.map((t) => t.name)
    expect(names).toEqual(["b"])
  })

  it("a token the host does not hold claims an unclaimed source at once; a different one is refused until the source's last tool is gone", async () => {
    const host = await startHost()
    const mine = "m".repeat(43)
    const fresh = await register(host, {}, mine)
    expect(fresh.body).toMatchObject({ ok: true, source: "my_plugin", owner: "claimed" })
    expect(fresh.body["registrant_token"]).toBeUndefined()
    expect((await register(host, { description: "update" }, mine)).status).toBe(200)
    const tokenless = await register(host)
    expect(tokenless).toMatchObject({ status: 409, body: { code: "source_claimed", error: `source "my_plugin" is claimed; present its registrant token` } })
    const other = await register(host, {}, "o".repeat(43))
    expect(other).toMatchObject({ status: 409, body: { code: "source_claimed" } })
    expect(other.body["error"]).toMatch(/^source "my_plugin" is claimed by a different registrant token/)
    // A short word is never a claim.
    expect(await register(host, { source: "another" }, "token-from-a-previous-instance")).toMatchObject({ status: 422, body: { error: expect.stringContaining("32-256 characters") } })
    // The owner's clear removes the last tool: the source is released, and the next token claims it.
    expect((await api(host, "POST", "/api/tools/clear", { source: "my_plugin" }, { [REGISTRANT_TOKEN_HEADER]: mine })).body).toMatchObject({ ok: true, cleared: ["get_weather"] })
    expect(await register(host, {}, "o".repeat(43))).toMatchObject({ status: 200, body: { owner: "claimed" } })
  })

  it("a token-less first registration leaves the source unclaimed: the first token presented claims it", async () => {
    const host = await startHost()
    const issued = (await register(host)).body["registrant_token"] as string
    expect(issued).toMatch(/^[A-Za-z0-9_-]{32}$/)
    expect(await register(host, {}, "c".repeat(40))).toMatchObject({ status: 200, body: { owner: "claimed" } })
    // The token issued but never presented was replaced by the claim.
    expect(await register(host, {}, issued)).toMatchObject({ status: 409, body: { code: "source_claimed" } })
  })

  it("concurrent register / unregister storms on one name leave one consistent state", async () => {
    const host = await startHost({ config: twoRoles })
    const requests = Array.from({ length: 120 }, (_, i) =>
      i % 3 === 2
        ? api(host, "POST", "/api/tools/unregister", { name: "get_weather", role: null })
        : register(host, { description: `v${i}`, role: i % 2 === 0 ? null : "other" })
    )
    const responses = await Promise.all(requests)
    for (const r of responses) {
      expect([200, 404]).toContain(r.status)
      expect(r.body["instance_id"]).toBe(host.instanceId)
    }
    const roles = (await api(host, "GET", "/api/tools")).body["roles"] as Record<string, Array<{ name: string; state: string }>>
    for (const tools of Object.values(roles)) {
      expect(tools.length).toBeLessThanOrEqual(1)
      for (const tool of tools) expect(tool).toMatchObject({ name: "get_weather", state: "active" })
    }
    // One more of each settles it both ways.
    expect((await register(host)).body).toMatchObject({ ok: true, affected_roles: ["小八", "other"] })
    expect((await api(host, "POST", "/api/tools/unregister", { name: "get_weather" })).body["ok"]).toBe(true)
    expect((await api(host, "GET", "/api/tools")).body["roles"]).toEqual({ 小八: [], other: [] })
  })
})

describe("hostile request bodies (property)", () => {
  it("any JSON, or any mix of the contract's fields with values of any type, is answered 200/4xx — never 500", async () => {
    const fc = (await import("fast-check")).default
    const host = await startHost({ config: twoRoles })
    const field = fc.constantFrom("name", "description", "parameters", "callback_url", "role", "source", "timeout_seconds", "__proto__", "constructor")
    const value = fc.oneof(fc.jsonValue({ maxDepth: 4 }), fc.constantFrom("get_weather", CALLBACK, "小八", "", null, 30, 0.0001, 300.5, { type: "object" }))
    const body = fc.oneof(fc.jsonValue({ maxDepth: 5 }).map((v) => JSON.stringify(v)), fc.dictionary(field, value, { maxKeys: 7 }).map((v) => JSON.stringify(v)), fc.string())
    const path = fc.constantFrom("/api/tools/register", "/api/tools/unregister", "/api/tools/clear", "/api/chat")
    await fc.assert(
      fc.asyncProperty(path, body, async (target, text) => {
        const response = await fetch(`${host.url}${target}`, { method: "POST", headers: { "content-type": "application/json" }, body: text })
        const answer = (await response.json()) as { ok: boolean; instance_id: string; error?: string }
        expect([200, 403, 404, 409, 413, 422, 429, 503]).toContain(response.status)
        expect(answer.instance_id).toBe(host.instanceId)
        if (response.status !== 200) expect(answer.error).toMatch(/^[^\n]+$/)
      }),
      { numRuns: 150 }
    )
    // Nothing but the request log (one line per request, in its format) and the start-up notes on the roles.
    const requestLine = /^llm-worker host: POST \/api\/(tools\/(register|unregister|clear)|chat) \d{3} \d+ms( - [^\n]+)?$/
    expect(host.logs.filter((line) => !requestLine.test(line) && !/^llm-worker host: role "[^"]+" cannot chat: /.test(line))).toEqual([])
    expect(host.logs.filter((line) => requestLine.test(line)).length).toBeGreaterThanOrEqual(150)
    expect((await api(host, "GET", "/api/health")).status).toBe(200)
  })
})
