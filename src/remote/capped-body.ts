import type { IncomingMessage } from "node:http"

/**
 * Reads an HTTP message body up to `maxBytes`, for both sides of the remote contract: the host reading a plugin's
 * callback answer and the plugin reading the host's callback. Resolves with the exact bytes (signatures are checked
 * over them), or `undefined` as soon as the body passes the limit — nothing past it is kept, and the caller decides
 * whether to answer or drop the connection. Rejects when the stream fails or closes before its end.
 */
export const readCappedBody = (message: IncomingMessage, maxBytes: number): Promise<Buffer | undefined> =>
  new Promise((resolve, reject) => {
    const chunks: Array<Buffer> = []
    let size = 0
    let settled = false
    message.on("data", (chunk: Buffer) => {
      if (settled) return
      size += chunk.length
      if (size > maxBytes) {
        settled = true
        chunks.length = 0
        resolve(undefined)
        return
      }
      chunks.push(chunk)
    })
    message.on("end", () => {
      if (settled) return
      settled = true
      resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks))
    })
    const broken = (error?: unknown): void => {
      if (settled) return
      settled = true
      reject(error ?? Object.assign(new Error("the connection closed before the message ended"), { code: "ECONNRESET" }))
    }
    message.on("error", broken)
    message.on("close", () => broken())
  })
