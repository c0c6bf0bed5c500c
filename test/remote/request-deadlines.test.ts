import { mkdtempSync, writeFileSync } from "node:fs"
import { connect } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import { remoteTool, startPlugin, type Plugin } from "../../src/remote/plugin/index.ts"
import { type ReplayProvider, startReplayProvider } from "../../src/testing/index.ts"
import { startCli, type CliProcess } from "../cli/cli-process.ts"
import { api, closeAll, startHost } from "./support/host.ts"

// Deadlines as a slow client meets them: real `llm-worker serve` children and a real plugin callback server,
// driven over raw sockets that send a byte at a time. Node enforces these deadlines only when it sweeps its
// unfinished requests, by default every 30 s: 10 s headers then lasted 30 s, a 30 s request 60 s, and a plugin's
// 2 s callback body ~30 s. The bounds below leave 1.5 s for a loaded machine; the broken sweep misses them by
// tens of seconds.

const READY = /llm-worker host listening on http:\/\/127\.0\.0\.1:(\d+) \(instance ([0-9a-f]+)\)\n/
const SLACK_MS = 1500
/** The longest a trickle is kept up: well past every bound asserted, far short of the broken 30 s. */
const GIVE_UP_MS = 8000

const plugins: Array<Plugin> = []
afterEach(async () => {
  await Promise.all(plugins.splice(0).map((p) => p.stop()))
  await closeAll()
})

const serve = async (server: string, env: Record<string, string> = {}): Promise<{ cli: CliProcess; port: number }> => {
  const dir = mkdtempSync(join(tmpdir(), "llm-worker-deadlines-"))
  const config = join(dir, "llm-worker.yaml")
  writeFileSync(config, `${server}roles:\n  helper:\n    provider: openai\n    model: replay-model\n`)
  const cli = startCli(["serve", "--config", config, "--port", "0"], { OPENAI_API_KEY: "sk-test", ...env })
  await cli.waitFor(READY)
  return { cli, port: Number(READY.exec(cli.stdout())?.[1]) }
}

interface Trickled {
  /** From connecting to the server closing the socket; `undefined` when the client gave up first. */
  readonly closedAfterMs: number | undefined
  /** What the server sent back (its first line). */
  readonly answer: string
}

/** Sends `head`, then `drip` every `everyMs` until the server closes the socket (or `GIVE_UP_MS` passes). */
const trickle = (port: number, head: string, drip: string, everyMs = 500): Promise<Trickled> =>
  new Promise((resolve) => {
    const started = Date.now()
    let answer = ""
    let gaveUp = false
    const socket = connect(port, "127.0.0.1", () => socket.write(head))
    const timer = setInterval(() => void (socket.writable && socket.write(drip)), everyMs)
    const giveUp = setTimeout(() => ((gaveUp = true), socket.destroy()), GIVE_UP_MS)
    socket.on("data", (chunk: Buffer) => void (answer += chunk.toString("latin1")))
    socket.on("error", () => undefined)
    socket.on("close", () => {
      clearInterval(timer)
      clearTimeout(giveUp)
      resolve({ closedAfterMs: gaveUp ? undefined : Date.now() - started, answer: answer.split("\r\n", 1)[0] ?? "" })
    })
  })

/** Sends a request's headers and half its body, waits until the server has read them, then hangs up. */
const hangUpHalfway = (port: number, path: string, extraHeaders = ""): Promise<void> =>
  new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1", () => {
      socket.write(`POST ${path} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: 100\r\n${extraHeaders}\r\n{"message":"hal`)
      setTimeout(() => socket.destroy(), 200)
    })
    socket.on("error", () => undefined)
    socket.on("close", () => resolve())
  })

const unexpectedLines = (text: string): Array<string> => text.split("\n").filter((line) => /unexpected error|aborted/i.test(line))

describe("request deadlines hold as configured (llm-worker serve)", () => {
  // One child for the suite (a start costs seconds on a busy machine); its model endpoint accepts and never answers.
  let host: { cli: CliProcess; port: number; url: string }
  let provider: ReplayProvider
  beforeAll(async () => {
    provider = await startReplayProvider({ scheme: "openai-chat", script: [{ kind: "no_headers" }] })
    const started = await serve("server:\n  headers_timeout_seconds: 1\n  request_timeout_seconds: 2\n", { OPENAI_BASE_URL: provider.baseUrl })
    host = { ...started, url: `http://127.0.0.1:${started.port}` }
  }, 60_000)
  afterAll(async () => {
    host.cli.child.kill("SIGKILL")
    await provider.close()
  })
  afterEach(() => {
    expect(unexpectedLines(host.cli.stderr())).toEqual([])
    expect(host.cli.stdout().split("\n").filter((line) => line !== "" && !READY.test(`${line}\n`))).toEqual([])
  })

  it("trickled headers (or none) are closed with 408 at server.headers_timeout_seconds, not at Node's 30 s sweep", async () => {
    const [headers, idle] = await Promise.all([trickle(host.port, "GET /api/health HTTP/1.1\r\n", "X"), trickle(host.port, "", "")])
    for (const result of [headers, idle]) {
      expect(result.answer).toBe("HTTP/1.1 408 Request Timeout")
      expect(result.closedAfterMs).toBeGreaterThanOrEqual(900)
      expect(result.closedAfterMs).toBeLessThan(1000 + SLACK_MS)
    }
    expect((await api(host, "GET", "/api/health")).status).toBe(200)
  })

  it("a trickled body is closed with 408 at server.request_timeout_seconds and nothing is logged", async () => {
    const head = "POST /api/chat HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: 100000\r\n\r\n"
    const body = await trickle(host.port, head, " ")
    expect(body.answer).toBe("HTTP/1.1 408 Request Timeout")
    expect(body.closedAfterMs).toBeGreaterThanOrEqual(1800)
    expect(body.closedAfterMs).toBeLessThan(2000 + SLACK_MS)
    expect((await api(host, "GET", "/api/health")).status).toBe(200)
  })

  it("50 clients that send half a body and hang up leave no line on stderr, and the host still answers", async () => {
    await Promise.all(Array.from({ length: 50 }, () => hangUpHalfway(host.port, "/api/chat")))
    await Promise.all(Array.from({ length: 10 }, () => hangUpHalfway(host.port, "/api/tools/register")))
    const health = await api(host, "GET", "/api/health")
    expect(health.body).toMatchObject({ ok: true, roles: ["helper"] })
    // Give a log line that would follow the hang-ups time to arrive before concluding there is none (afterEach).
    await new Promise((resolve) => setTimeout(resolve, 500))
  })

  it("a client hanging up during a turn cancels the turn's model request and logs nothing (plain and SSE)", async () => {
    for (const accept of ["application/json", "text/event-stream"]) {
      const before = provider.requests.length
      const socket = connect(host.port, "127.0.0.1", () => {
        const body = JSON.stringify({ message: "hello" })
        socket.write(`POST /api/chat HTTP/1.1\r\nhost: 127.0.0.1\r\naccept: ${accept}\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body}`)
      })
      socket.on("error", () => undefined)
      await expect.poll(() => provider.requests.length, { timeout: 10_000 }).toBe(before + 1)
      socket.destroy()
      // The host drops its model request as soon as its own client has gone.
      await provider.requests[before]?.disconnected
    }
    await new Promise((resolve) => setTimeout(resolve, 300))
  })

  it("refuses a headers deadline longer than the request deadline, naming the key", async () => {
    const { startToolHost } = await import("../../src/remote/index.ts")
    await expect(startToolHost({ port: 0, env: {}, config: { server: { headers_timeout_seconds: 40, request_timeout_seconds: 30 } } })).rejects.toThrow(
      /server\.headers_timeout_seconds: must not be longer than request_timeout_seconds/
    )
  })
})

describe("the plugin's callback server holds callback.bodyTimeoutMs", () => {
  const echo = remoteTool({ name: "echo", execute: () => "ok" })

  const plugin = async (): Promise<{ port: number }> => {
    const host = await startHost()
    const p = await startPlugin({ source: "deadlines", tools: [echo], host: host.url, callback: { bodyTimeoutMs: 2000 }, shutdown: { signals: false, deadlineMs: 200 }, healthIntervalMs: 1000 })
    plugins.push(p)
    return { port: Number(new URL(p.callbackOrigin).port) }
  }

  it("a trickled callback body, or trickled headers, are closed near 2 s, not ~30 s", async () => {
    const { port } = await plugin()
    const head = "POST /tools/echo HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: 100000\r\n\r\n"
    const [body, headers] = await Promise.all([trickle(port, head, " "), trickle(port, "POST /tools/echo HTTP/1.1\r\n", "X")])
    for (const result of [body, headers]) {
      expect(result.answer).toBe("HTTP/1.1 408 Request Timeout")
      expect(result.closedAfterMs).toBeGreaterThanOrEqual(1800)
      expect(result.closedAfterMs).toBeLessThan(2000 + SLACK_MS)
    }
  })

  it("50 half-sent callbacks that hang up are dropped quietly and the server keeps serving", async () => {
    const { port } = await plugin()
    const printed: Array<unknown> = []
    const spies = (["error", "warn", "info", "log"] as const).map((level) => {
      const original = console[level]
      console[level] = (...args: Array<unknown>) => void printed.push(args)
      return () => (console[level] = original)
    })
    try {
      await Promise.all(Array.from({ length: 50 }, () => hangUpHalfway(port, "/tools/echo")))
      const refused = await fetch(`http://127.0.0.1:${port}/tools/echo`)
      expect(refused.status).toBe(405)
    } finally {
      for (const restore of spies) restore()
    }
    expect(printed).toEqual([])
  })
})

/** Opens a socket that sends nothing; resolves once connected. */
const holdOpen = (port: number): Promise<import("node:net").Socket> =>
  new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1", () => resolve(socket))
    socket.on("error", () => undefined)
  })

/** Whether a new connection is closed by the server without a byte of answer, within `ms`. */
const droppedAtOnce = (port: number, ms = 3000): Promise<boolean> =>
  new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1", () => socket.write("GET /api/health HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n"))
    const settle = (dropped: boolean): void => {
      clearTimeout(timer)
      socket.destroy()
      resolve(dropped)
    }
    const timer = setTimeout(() => settle(false), ms)
    socket.on("data", () => settle(false))
    socket.on("error", () => undefined)
    socket.on("close", () => settle(true))
  })

describe("connections are bounded", () => {
  it("server.max_connections: past it a new connection is closed at once; a freed slot is served again", async () => {
    const host = await startHost({ config: { server: { max_connections: 3 } } })
    const held = await Promise.all([holdOpen(host.port), holdOpen(host.port), holdOpen(host.port)])
    expect(await droppedAtOnce(host.port)).toBe(true)
    held[0]?.destroy()
    await expect.poll(() => droppedAtOnce(host.port), { timeout: 5000 }).toBe(false)
    for (const socket of held) socket.destroy()
  })

  it("callback.maxConnections bounds the plugin's callback server the same way", async () => {
    const host = await startHost()
    const p = await startPlugin({ source: "bounded", tools: [remoteTool({ name: "echo", execute: () => "ok" })], host: host.url, callback: { maxConnections: 2 }, shutdown: { signals: false, deadlineMs: 200 }, healthIntervalMs: 1000 })
    plugins.push(p)
    const port = Number(new URL(p.callbackOrigin).port)
    const held = await Promise.all([holdOpen(port), holdOpen(port)])
    expect(await droppedAtOnce(port)).toBe(true)
    held[0]?.destroy()
    await expect.poll(() => droppedAtOnce(port), { timeout: 5000 }).toBe(false)
    for (const socket of held) socket.destroy()
    await expect(startPlugin({ source: "x", tools: [], callback: { maxConnections: 0 } })).rejects.toThrow(/callback\.maxConnections must be an integer >= 1/)
  })
})
