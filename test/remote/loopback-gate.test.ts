import { request } from "node:http"
import { networkInterfaces } from "node:os"
import { afterEach, describe, expect, it } from "vitest"
import { isLoopbackAddress } from "../../src/remote/index.ts"
import { api, closeAll, startHost } from "./support/host.ts"

afterEach(closeAll)

/** A non-loopback IPv4 address of this machine, if it has one. */
const externalAddress = (): string | undefined =>
  Object.values(networkInterfaces())
    .flat()
    .find((entry) => entry !== undefined && entry.family === "IPv4" && !entry.internal)?.address

const get = (url: string, headers: Record<string, string>, localAddress?: string): Promise<{ status: number; body: Record<string, unknown> }> =>
  new Promise((resolve, reject) => {
    const req = request(url, { headers, ...(localAddress === undefined ? {} : { localAddress }) }, (res) => {
      let text = ""
      res.setEncoding("utf8").on("data", (chunk: string) => (text += chunk))
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as Record<string, unknown> }))
    })
    req.on("error", reject)
    req.end()
  })

describe("the caller gate", () => {
  it.each([
    ["127.0.0.1", true],
    ["127.255.3.4", true],
    ["::1", true],
    ["0:0:0:0:0:0:0:1", true],
    ["::ffff:127.0.0.1", true],
    ["::ffff:127.9.9.9", true],
    ["::ffff:10.0.0.1", false],
    ["10.0.0.1", false],
    ["192.0.2.2", false],
    ["0.0.0.0", false],
    ["::", false],
    ["fe80::1", false],
    ["128.0.0.1", false],
    ["127.0.0.1.evil", false],
    ["", false],
    [undefined, false]
  ])("isLoopbackAddress(%j) is %s", (address, expected) => {
    expect(isLoopbackAddress(address)).toBe(expected)
  })

  const external = externalAddress()
  it.skipIf(external === undefined)("answers 403 to a peer on a non-loopback interface, whatever its headers claim", async () => {
    const host = await startHost({ host: "0.0.0.0" })
    const url = `http://${external}:${host.port}/api/health`
    const refused = await get(url, { "x-forwarded-for": "127.0.0.1", forwarded: "for=127.0.0.1", host: `127.0.0.1:${host.port}` }, external)
    expect(refused.status).toBe(403)
    expect(refused.body).toMatchObject({ ok: false, error: "only loopback callers are accepted", instance_id: host.instanceId })
    // The same host answers a loopback peer, whatever X-Forwarded-For says.
    const local = await get(`http://127.0.0.1:${host.port}/api/health`, { "x-forwarded-for": "10.1.2.3" })
    expect(local.status).toBe(200)
  })

  it("binds 127.0.0.1 by default", async () => {
    const host = await startHost()
    expect(host.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
    expect((await api(host, "GET", "/api/health")).status).toBe(200)
  })
})
