import { createServer, type Server, type Socket } from "node:net"
import type { AddressInfo } from "node:net"
import fc from "fast-check"
import { afterEach, describe, expect, it } from "vitest"
import { CALLBACK_CONNECTIONS_PER_ORIGIN, sendCallback, type CallbackRequest } from "../../src/remote/host/callback-transport.ts"

/**
 * The host's callback transport against raw TCP servers on loopback, for what an ordinary HTTP server cannot be
 * made to do on cue: drop a kept-alive connection as the next request arrives, send 1xx answers first, cut a body
 * short, hold more connections than the pool has.
 */

const servers: Array<Server> = []
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise<void>((resolve) => s.close(() => resolve()))))
})

interface RawServer {
  readonly url: URL
  /** Requests seen, per connection (connection index → request count). */
  readonly perConnection: Array<number>
  /** Most connections open at once. */
  readonly peak: () => number
}

/**
 * A server that answers the `n`-th request of the `c`-th connection as `answer(c, n, socket, total)` decides
 * (`total`: requests before this one, over every connection).
 */
const rawServer = async (answer: (connection: number, request: number, socket: Socket, total: number) => void): Promise<RawServer> => {
  const perConnection: Array<number> = []
  const sockets = new Set<Socket>()
  let total = 0
  let peak = 0
  const server = createServer((socket) => {
    const connection = perConnection.length
    perConnection.push(0)
    sockets.add(socket)
    peak = Math.max(peak, sockets.size)
    socket.on("close", () => sockets.delete(socket))
    socket.on("error", () => undefined)
    let buffered = ""
    socket.on("data", (chunk) => {
      buffered += chunk.toString("latin1")
      // One request = headers + a content-length body; the transport sends exactly that.
      for (;;) {
        const end = buffered.indexOf("\r\n\r\n")
        if (end < 0) return
        const length = Number(/content-length: (\d+)/i.exec(buffered.slice(0, end))?.[1] ?? 0)
        if (buffered.length < end + 4 + length) return
        buffered = buffered.slice(end + 4 + length)
        answer(connection, perConnection[connection]!++, socket, total++)
      }
    })
  })
  const close = server.close.bind(server)
  server.close = ((cb?: (err?: Error) => void) => {
    for (const s of sockets) s.destroy()
    return close(cb)
  }) as Server["close"]
  servers.push(server)
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return { url: new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/tools/t`), perConnection, peak: () => peak }
}

const ok = (socket: Socket, body = '{"output":"fine"}'): void => {
  socket.write(`HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: keep-alive\r\n\r\n${body}`)
}

const call = (url: URL, overrides: Partial<CallbackRequest> = {}) =>
  sendCallback({ url, headers: { "x-test": "1" }, body: '{"name":"t"}', timeoutMs: 2000, maxResponseBytes: 1024, signal: new AbortController().signal, ...overrides })

describe("callback transport", () => {
  it("sends a call once more on a new connection when a kept-alive one was dropped before answering", async () => {
    // Connection 0 answers its first request and drops the second unanswered; connection 1 answers.
    const server = await rawServer((connection, request, socket) => {
      if (connection === 0 && request === 1) socket.destroy()
      else ok(socket, `{"output":"c${connection}r${request}"}`)
    })
    expect(await call(server.url)).toMatchObject({ kind: "response", status: 200, body: '{"output":"c0r0"}' })
    // Once the first connection is idle in the pool, the next call takes it.
    await new Promise((resolve) => setTimeout(resolve, 50))
    expect(await call(server.url)).toMatchObject({ kind: "response", status: 200, body: '{"output":"c1r0"}' })
    expect(server.perConnection).toEqual([2, 1])
  })

  it("does not send again when a fresh connection is dropped (the plugin may have seen the call)", async () => {
    const server = await rawServer((_connection, _request, socket) => socket.destroy())
    const result = await call(server.url)
    expect(result.kind).toBe("failed")
    expect(server.perConnection).toEqual([1])
  })

  it("does not send again once the plugin began answering, even with a 1xx only", async () => {
    const server = await rawServer((connection, request, socket) => {
      if (connection === 0 && request === 1) {
        socket.write("HTTP/1.1 103 Early Hints\r\n\r\n")
        setTimeout(() => socket.destroy(), 20)
      } else ok(socket)
    })
    expect((await call(server.url)).kind).toBe("response")
    await new Promise((resolve) => setTimeout(resolve, 50))
    expect((await call(server.url)).kind).toBe("failed")
    expect(server.perConnection).toEqual([2])
  })

  it("skips 1xx answers and reads the final one", async () => {
    const server = await rawServer((_c, _r, socket) => {
      socket.write("HTTP/1.1 103 Early Hints\r\nlink: </x>; rel=preload\r\n\r\n")
      ok(socket, '{"output":"after hints"}')
    })
    expect(await call(server.url)).toMatchObject({ kind: "response", status: 200, body: '{"output":"after hints"}' })
  })

  it("a body cut short is a failure, never a success with the part that came", async () => {
    const server = await rawServer((_c, _r, socket) => {
      socket.write('HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{"output":')
      setTimeout(() => socket.destroy(), 20)
    })
    expect((await call(server.url)).kind).toBe("failed")
  })

  it("a redirect's location is reported, not followed; a chunked body past the cap is too_large", async () => {
    const server = await rawServer((_c, _r, socket, total) => {
      if (total === 0) return void socket.write("HTTP/1.1 307 Temporary Redirect\r\nlocation: http://127.0.0.1:1/elsewhere\r\ncontent-length: 0\r\n\r\n")
      socket.write("HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n")
      const chunk = "x".repeat(600)
      socket.write(`${chunk.length.toString(16)}\r\n${chunk}\r\n${chunk.length.toString(16)}\r\n${chunk}\r\n`)
    })
    expect(await call(server.url)).toEqual({ kind: "response", status: 307, location: "http://127.0.0.1:1/elsewhere", body: "" })
    expect(await call(server.url)).toEqual({ kind: "too_large", status: 200, limit: 1024 })
  })

  it("calls waiting for a connection keep their own deadline and cancellation", async () => {
    // Holds every request unanswered: the pool fills, the rest wait for a connection that never frees.
    const server = await rawServer(() => undefined)
    const sent = () => server.perConnection.reduce((x, y) => x + y, 0)
    const release = new AbortController()
    const busy = Array.from({ length: CALLBACK_CONNECTIONS_PER_ORIGIN }, () => call(server.url, { timeoutMs: 30_000, signal: release.signal }))
    for (const until = Date.now() + 10_000; sent() < CALLBACK_CONNECTIONS_PER_ORIGIN && Date.now() < until; ) await new Promise((r) => setTimeout(r, 10))
    expect(sent()).toBe(CALLBACK_CONNECTIONS_PER_ORIGIN)
    const waiting = Array.from({ length: 4 }, () => call(server.url, { timeoutMs: 200 }))
    const cancel = new AbortController()
    const cancelled = call(server.url, { signal: cancel.signal })
    cancel.abort()
    expect(await cancelled).toEqual({ kind: "cancelled" })
    expect(await Promise.all(waiting)).toEqual(Array.from({ length: 4 }, () => ({ kind: "timeout", timeoutMs: 200 })))
    // The calls that waited for a connection were never sent; the pool never held more than its bound.
    expect(sent()).toBe(CALLBACK_CONNECTIONS_PER_ORIGIN)
    expect(server.peak()).toBeLessThanOrEqual(CALLBACK_CONNECTIONS_PER_ORIGIN)
    release.abort()
    expect((await Promise.all(busy)).every((r) => r.kind === "cancelled")).toBe(true)
  })

  it("reads any answer exactly as it was sent, however it is split into writes and chunks, up to the cap", async () => {
    let next: { status: number; body: string; chunked: boolean; cuts: Array<number> } = { status: 200, body: "", chunked: false, cuts: [] }
    const server = await rawServer((_c, _r, socket) => {
      const { status, body, chunked, cuts } = next
      const bytes = Buffer.from(body, "utf8")
      const pieces: Array<Buffer> = []
      let at = 0
      for (const cut of [...cuts.map((c) => Math.floor(c * bytes.length)), bytes.length].sort((a, b) => a - b)) {
        pieces.push(bytes.subarray(at, cut))
        at = cut
      }
      socket.write(`HTTP/1.1 ${status} X\r\ncontent-type: application/json\r\n${chunked ? "transfer-encoding: chunked" : `content-length: ${bytes.length}`}\r\n\r\n`)
      for (const piece of pieces) {
        if (piece.length === 0) continue
        socket.write(chunked ? Buffer.concat([Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from("\r\n")]) : piece)
      }
      if (chunked) socket.write("0\r\n\r\n")
    })
    await fc.assert(
      fc.asyncProperty(
        // 204 and 205 carry no body by definition (a body after them is a protocol error, a failure).
        fc.integer({ min: 200, max: 599 }).filter((s) => (s < 300 || s >= 400) && s !== 204 && s !== 205),
        fc.string({ unit: "grapheme", maxLength: 400 }),
        fc.boolean(),
        fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 4 }),
        async (status, body, chunked, cuts) => {
          next = { status, body, chunked, cuts }
          const result = await call(server.url, { maxResponseBytes: 1024 })
          if (Buffer.byteLength(body) > 1024) expect(result).toEqual({ kind: "too_large", status, limit: 1024 })
          else expect(result).toEqual({ kind: "response", status, location: undefined, body })
        }
      ),
      { numRuns: 60 }
    )
  })
})
