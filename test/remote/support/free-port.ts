import { createServer } from "node:net"

/** An ephemeral port that was free a moment ago: for a server that must start *after* its client. */
export const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const s = createServer().once("error", reject).listen(0, "127.0.0.1", () => {
      const { port } = s.address() as { port: number }
      s.close(() => resolve(port))
    })
  })
