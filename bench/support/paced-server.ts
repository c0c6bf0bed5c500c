/**
 * The server side of bench/stream-transport.ts, in a child process of its own so its work is not counted in the
 * client's CPU time. It serves one SSE body (sent by the parent over IPC) over loopback, as an HTTP/1.1 response
 * (`node:http`, chunked, as providers stream) and as bare bytes on a TCP socket (no HTTP at all: the least any
 * Node transport reads), cut into the requested chunk size.
 *
 * How writes become reads. The client's socket read takes whatever has arrived, so writes made faster than the
 * client reads arrive coalesced. Two pacings, chosen per request (`?pace=`):
 * - `loop`: one chunk per turn of the server's event loop (write, wait for its callback, `setImmediate`): as fast
 *   as a Node server writes. The client sees the chunk size only if it reads as fast; what it saw is counted.
 * - `timer`: one chunk per timer tick (`setTimeout(0)`, about 1 ms): every chunk arrives alone, so every read is
 *   one chunk and costs a wake-up of the client's event loop — a token-by-token stream. Slow, so the parent asks
 *   for fewer chunks (`?chunks=`).
 * Nagle's algorithm is off on every socket (`noDelay`), so the kernel sends each write as it comes.
 */
import http from "node:http"
import net from "node:net"
import type { AddressInfo } from "node:net"

let body = new Uint8Array(0)

const wait = (pace: string): Promise<void> =>
  new Promise((resolve) => (pace === "timer" ? setTimeout(resolve, 0) : setImmediate(resolve)))

/** Writes the body's first `chunks` chunks of `size` bytes, one per `pace` step, each waiting for its callback. */
const writeChunks = async (
  write: (chunk: Uint8Array, done: () => void) => void,
  size: number,
  chunks: number,
  pace: string
): Promise<void> => {
  const end = Math.min(body.length, size * chunks)
  for (let at = 0; at < end; at += size) {
    await new Promise<void>((resolve) => write(body.subarray(at, Math.min(end, at + size)), resolve))
    await wait(pace)
  }
}

const parse = (query: string): { size: number; chunks: number; pace: string } => {
  const params = new URLSearchParams(query)
  return {
    size: Number(params.get("size") ?? 256),
    chunks: Number(params.get("chunks") ?? Number.MAX_SAFE_INTEGER),
    pace: params.get("pace") ?? "loop"
  }
}

const httpServer = http.createServer({ noDelay: true }, (req, res) => {
  const { size, chunks, pace } = parse((req.url ?? "").split("?")[1] ?? "")
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-store" })
  res.flushHeaders()
  void writeChunks((chunk, done) => res.write(chunk, () => done()), size, chunks, pace).then(() => res.end())
})

/** Bare TCP: the client sends one line `size=…&chunks=…&pace=…\n`; the server writes the chunks and closes. */
const tcpServer = net.createServer({ noDelay: true }, (socket) => {
  let head = ""
  const onData = (data: Buffer): void => {
    head += data.toString("latin1")
    const nl = head.indexOf("\n")
    if (nl === -1) return
    socket.off("data", onData)
    const { size, chunks, pace } = parse(head.slice(0, nl))
    void writeChunks((chunk, done) => socket.write(chunk, () => done()), size, chunks, pace).then(() => socket.end())
  }
  socket.on("data", onData)
})

const listen = (server: net.Server): Promise<number> =>
  new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve((server.address() as AddressInfo).port)))

process.on("message", (message: { readonly body?: Uint8Array }) => {
  if (message.body === undefined) return
  body = new Uint8Array(message.body)
  process.send?.({ ready: true })
})
process.on("disconnect", () => process.exit(0))

const [httpPort, tcpPort] = await Promise.all([listen(httpServer), listen(tcpServer)])
process.send?.({ httpPort, tcpPort })
