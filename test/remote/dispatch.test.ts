import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { afterEach, describe, expect, it } from "vitest"
import { jsonSchema, makeArgumentCodec, Worker } from "../../src/index.ts"
import { checkCallbackUrl, INSTANCE_HEADER, SIGNATURE_HEADER, TIMESTAMP_HEADER, verifyCallback } from "../../src/remote/index.ts"
import { type RemoteRegistration, remoteToolDefinition } from "../../src/remote/host/remote-tool.ts"
import { ScriptedClient } from "../worker/support/scripted-client.ts"
import { type CallbackServer, closeAll, json, startCallbackServer } from "./support/host.ts"

afterEach(closeAll)

const SCHEMA = { type: "object", properties: { city: { type: "string" } }, required: ["city"] } as const

const registration = (url: string, overrides: Partial<RemoteRegistration> = {}): RemoteRegistration => {
  const check = checkCallbackUrl(url)
  if (!check.ok) throw new Error(check.reason)
  return {
    kind: "remote",
    name: "get_weather",
    description: "weather",
    parameters: SCHEMA,
    codec: makeArgumentCodec(jsonSchema(SCHEMA)) as RemoteRegistration["codec"],
    callbackUrl: check.url,
    callbackHost: check.hostLabel,
    source: "test",
    timeoutSeconds: 5,
    secret: "s".repeat(64),
    stats: { calls: 0, errors: 0, lastError: undefined, consecutiveConnectionFailures: 0 },
    ...overrides
  }
}

/** The registration as a tool of a real Worker, called through the Worker's handle. */
const toolFor = (reg: RemoteRegistration, failures: Array<number> = [], maxResponseBytes = 1024 * 1024) => {
  const worker = Worker.create({ client: new ScriptedClient([], "openai-chat") })
  worker.registerTool(remoteToolDefinition(reg, { instanceId: "inst-1", maxResponseBytes, onConnectionFailure: (_r, n) => void failures.push(n) }))
  const handle = worker.toolServerHandle()
  return (args = '{"city":"東京"}', options: { signal?: AbortSignal; maxOutputBytes?: number } = {}) => handle.callTool("get_weather", args, { callId: "call_abc", ...options })
}

const answering = (status: number, body: string, headers: Record<string, string> = {}): Promise<CallbackServer> =>
  startCallbackServer((_req, res) => {
    res.writeHead(status, { "content-type": "application/json", ...headers })
    res.end(body)
  })

const failure = async (promise: Promise<string>): Promise<string> => {
  try {
    await promise
  } catch (error) {
    return (error as { message: string }).message
  }
  throw new Error("the call succeeded")
}

describe("callback dispatch", () => {
  it("POSTs {name, arguments, call_id, raw_arguments}, signed, and returns body.output", async () => {
    const server = await startCallbackServer((_req, res) => json(res, 200, { output: { temp_c: 22, weather: "晴れ" }, is_error: false }))
    const reg = registration(server.url)
    const call = toolFor(reg)
    expect(await call('{"city": "東京"}')).toBe('{"temp_c":22,"weather":"晴れ"}')
    const [recorded] = server.calls
    expect(JSON.parse(recorded!.body)).toEqual({ name: "get_weather", arguments: { city: "東京" }, call_id: "call_abc", raw_arguments: '{"city": "東京"}' })
    expect(recorded!.headers["content-type"]).toBe("application/json")
    expect(recorded!.headers[INSTANCE_HEADER]).toBe("inst-1")
    const check = verifyCallback(reg.secret, recorded!.headers[TIMESTAMP_HEADER] as string, recorded!.headers[SIGNATURE_HEADER] as string, recorded!.body)
    expect(check).toEqual({ ok: true })
    expect(verifyCallback("another secret", recorded!.headers[TIMESTAMP_HEADER] as string, recorded!.headers[SIGNATURE_HEADER] as string, recorded!.body)).toEqual({ ok: false, reason: "mismatch" })
    expect(reg.stats).toMatchObject({ calls: 1, errors: 0 })
  })

  it("a body without `output` is the output whole; a string output is passed as it is", async () => {
    const whole = await answering(200, '{"temp_c":22}')
    expect(await toolFor(registration(whole.url))()).toBe('{"temp_c":22}')
    const text = await answering(200, '{"output":"sunny"}')
    expect(await toolFor(registration(text.url))()).toBe("sunny")
  })

  it("is_error with output reaches the model as an error carrying error and the output", async () => {
    const server = await answering(200, '{"output":{"reason":"city not found"},"is_error":true,"error":"CITY_NOT_FOUND"}')
    const reg = registration(server.url)
    expect(await failure(toolFor(reg)())).toBe('CITY_NOT_FOUND\noutput: {"reason":"city not found"}')
    expect(reg.stats).toMatchObject({ calls: 1, errors: 1, lastError: expect.stringContaining("CITY_NOT_FOUND") })
  })

  it("is_error without output (or with output null) is an error carrying error", async () => {
    const bare = await answering(200, '{"is_error":true,"error":"ValueError: city not found"}')
    expect(await failure(toolFor(registration(bare.url))())).toBe("ValueError: city not found")
    const nulled = await answering(200, '{"output":null,"is_error":true,"error":"city not found"}')
    expect(await failure(toolFor(registration(nulled.url))())).toBe("city not found")
    const silent = await answering(200, '{"is_error":true}')
    expect(await failure(toolFor(registration(silent.url))())).toMatch(/without a message/)
  })

  it.each([
    [500, '{"detail":"boom"}', /answered HTTP 500: "\{\\"detail\\":\\"boom\\"\}"/],
    [404, "", /answered HTTP 404$/],
    [200, "<html>not json</html>", /body that is not JSON: "<html>not json<\/html>"/]
  ])("HTTP %i with %j is a short readable error result", async (status, body, pattern) => {
    const server = await answering(status, body)
    expect(await failure(toolFor(registration(server.url))())).toMatch(pattern)
  })

  it("a redirect is an error, never followed", async () => {
    const target = await answering(200, '{"output":"followed"}')
    const server = await answering(302, "", { location: target.url })
    expect(await failure(toolFor(registration(server.url))())).toMatch(/answered HTTP 302 \(redirect to ".*"\); redirects are not followed/)
    expect(target.calls).toHaveLength(0)
  })

  it("one total deadline: a callback that hangs (or trickles) past timeout_seconds is a timeout error", async () => {
    const hanging = await startCallbackServer(() => undefined)
    const started = Date.now()
    expect(await failure(toolFor(registration(hanging.url, { timeoutSeconds: 0.3 }))())).toBe("callback to " + `127.0.0.1:${hanging.port}` + " timed out after 0.3 s")
    expect(Date.now() - started).toBeLessThan(4000)
    // Headers at once, then one byte at a time: a per-phase timeout would never fire; the total one does.
    const trickle = await startCallbackServer((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" })
      const timer = setInterval(() => res.write(" "), 50)
      res.once("close", () => clearInterval(timer))
    })
    expect(await failure(toolFor(registration(trickle.url, { timeoutSeconds: 0.4 }))())).toMatch(/timed out after 0.4 s/)
    await hanging.calls[0]?.closed
  })

  it("a body larger than the read cap is cut off and reported; a long output is truncated with a visible marker", async () => {
    const huge = await answering(200, JSON.stringify({ output: "x".repeat(3 * 1024 * 1024) }))
    expect(await failure(toolFor(registration(huge.url), [], 1024 * 1024)())).toMatch(/larger than 1048576 bytes; it was cut off there and not used/)
    const long = await answering(200, JSON.stringify({ output: "y".repeat(200_000) }))
    const output = await toolFor(registration(long.url))(undefined, { maxOutputBytes: 4096 })
    expect(Buffer.byteLength(output)).toBeLessThanOrEqual(4096)
    expect(output.startsWith("yyyy")).toBe(true)
    // The core's marker, after the kept prefix: it says how much was dropped.
    expect(output.slice(-60)).toMatch(/\n\[… output truncated: \d+ of 200000 bytes dropped\]$/)
  })

  it("connection refused is a readable error and counts towards eviction; an answer resets the count", async () => {
    const probe = createServer()
    await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve))
    const port = (probe.address() as AddressInfo).port
    await new Promise<void>((resolve) => probe.close(() => resolve()))
    const failures: Array<number> = []
    const reg = registration(`http://127.0.0.1:${port}/x`)
    const call = toolFor(reg, failures)
    expect(await failure(call())).toBe(`callback to 127.0.0.1:${port} failed: connection refused (is the plugin running?)`)
    await failure(call())
    expect(failures).toEqual([1, 2])
    expect(reg.stats.consecutiveConnectionFailures).toBe(2)
  })

  it("invalid arguments never reach the callback: the model gets the schema's complaint", async () => {
    const server = await answering(200, '{"output":"x"}')
    expect(await failure(toolFor(registration(server.url))('{"town":"x"}'))).toMatch(/city/)
    expect(await failure(toolFor(registration(server.url))("not json"))).toMatch(/not valid JSON/)
    expect(server.calls).toHaveLength(0)
  })

  it("cancelling the call aborts its HTTP request", async () => {
    const server = await startCallbackServer(() => undefined)
    const controller = new AbortController()
    const running = toolFor(registration(server.url, { timeoutSeconds: 60 }))(undefined, { signal: controller.signal })
    while (server.calls.length === 0) await new Promise((resolve) => setTimeout(resolve, 10))
    controller.abort()
    await expect(running).rejects.toMatchObject({ _tag: "ToolCancelled" })
    await server.calls[0]!.closed
  })

  it("ignores proxy environment variables", async () => {
    const proxied: Array<string> = []
    const proxy = await startCallbackServer((req, res) => {
      proxied.push(req.url ?? "")
      json(res, 200, { output: "via proxy" })
    })
    const server = await answering(200, '{"output":"direct"}')
    const saved = { HTTP_PROXY: process.env["HTTP_PROXY"], http_proxy: process.env["http_proxy"], NO_PROXY: process.env["NO_PROXY"] }
    process.env["HTTP_PROXY"] = `http://127.0.0.1:${proxy.port}`
    process.env["http_proxy"] = `http://127.0.0.1:${proxy.port}`
    delete process.env["NO_PROXY"]
    try {
      expect(await toolFor(registration(server.url))()).toBe("direct")
    } finally {
      for (const [key, value] of Object.entries(saved)) if (value === undefined) delete process.env[key]
      else process.env[key] = value
    }
    expect(proxied).toEqual([])
  })

  it("parallel calls on one run signal each get their own result", async () => {
    const server = await startCallbackServer((_req, res, body) => {
      const { arguments: args } = JSON.parse(body) as { arguments: { city: string } }
      setTimeout(() => json(res, 200, { output: args.city.toUpperCase() }), 20)
    })
    const call = toolFor(registration(server.url))
    const signal = new AbortController().signal
    const cities = Array.from({ length: 40 }, (_, i) => `city${i}`)
    const results = await Promise.all(cities.map((city) => call(JSON.stringify({ city }), { signal })))
    expect(results).toEqual(cities.map((c) => c.toUpperCase()))
  })
})

describe("remote tools inside a Worker, through a real provider stream", () => {
  it("run in parallel, pass through hooks, and each call gets exactly one result", async () => {
    const { createLlmClient, PreToolCall, PostToolCall } = await import("../../src/index.ts")
    const { startReplayProvider } = await import("../../src/testing/index.ts")
    const { loadTranscript } = await import("../support/sse-fixtures.ts")
    const replay = await startReplayProvider({
      scheme: "openai-chat",
      script: [
        { kind: "stream", transcript: loadTranscript("openai-chat", "parallel-tool-calls") },
        { kind: "stream", transcript: loadTranscript("openai-chat", "text") }
      ]
    })
    try {
      // Each callback waits until both have arrived: only parallel dispatch lets either answer.
      let arrived = 0
      let bothArrived!: () => void
      const both = new Promise<void>((resolve) => (bothArrived = resolve))
      const server = await startCallbackServer(async (_req, res, body) => {
        if (++arrived === 2) bothArrived()
        await both
        const { name, arguments: args } = JSON.parse(body) as { name: string; arguments: Record<string, string> }
        json(res, 200, { output: `${name}:${JSON.stringify(args)}` })
      })
      const client = createLlmClient({ provider: "openai", model: "m", apiKey: "k", baseUrl: replay.baseUrl, retry: { maxRetries: 0 } })
      const worker = Worker.create({ client })
      const weatherSchema = { type: "object", properties: { city: { type: "string" }, unit: { type: "string" } }, required: ["city"] }
      const filesSchema = { type: "object", properties: { path: { type: "string" } }, required: ["path"] }
      for (const [name, schema] of [["get_weather", weatherSchema], ["files.read", filesSchema]] as const) {
        worker.registerTool(remoteToolDefinition(registration(server.url, { name, parameters: schema, codec: makeArgumentCodec(jsonSchema(schema)) as RemoteRegistration["codec"] }), { instanceId: "i", maxResponseBytes: 1 << 20, onConnectionFailure: () => undefined }))
      }
      const seen: Array<string> = []
      worker.addHook("PreToolCall", ({ call }) => {
        seen.push(`pre ${call.name}`)
        return call.name === "get_weather" ? PreToolCall.rewriteArguments('{"city":"Paris, FR","unit":"c"}') : PreToolCall.continue()
      })
      worker.addHook("PostToolCall", ({ call, result }) => PostToolCall.rewriteResult(`${result.output} [seen by PostToolCall for ${call.name}]`))
      const result = await worker.run("weather and notes?")
      const outputs = result.items.filter((item) => item.type === "function_call_output")
      expect(outputs).toHaveLength(2)
      expect(outputs.map((o) => (o as { output: string }).output)).toEqual([
        'get_weather:{"city":"Paris, FR","unit":"c"} [seen by PostToolCall for get_weather]',
        'files.read:{"path":"notes.txt"} [seen by PostToolCall for files.read]'
      ])
      expect(seen).toEqual(["pre get_weather", "pre files.read"])
      expect(server.calls).toHaveLength(2)
    } finally {
      await replay.close()
    }
  })
})
