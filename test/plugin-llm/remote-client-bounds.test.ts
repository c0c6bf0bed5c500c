/**
 * `createRemotePluginLlm` against a host that misbehaves, over real loopback HTTP: an oversized answer is cut at
 * `maxResponseBytes`, and a cancel ends the call even when `fetch` never hears of it (decision 0092).
 */
import { createServer } from "node:http"
import type { Server, ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { afterEach, describe, expect, it } from "vitest"
import { createRemotePluginLlm } from "../../src/plugin-llm/remote-client.ts"

/** A fetch that never hears of an abort: the request goes out without the caller's signal. */
const deafFetch: typeof globalThis.fetch = (input, init) => {
  const { signal: _dropped, ...rest } = init ?? {}
  return globalThis.fetch(input, rest)
}

let server: Server | undefined
afterEach(async () => {
  server?.closeAllConnections()
  await new Promise<void>((resolve) => (server === undefined ? resolve() : server.close(() => resolve())))
  server = undefined
})

const host = async (reply: (response: ServerResponse) => void): Promise<{ readonly base: string; readonly closed: Promise<void> }> => {
  let closed!: Promise<void>
  server = createServer((request, response) => {
    closed = new Promise((resolve) => response.once("close", () => resolve()))
    request.resume()
    request.once("end", () => reply(response))
  })
  await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve))
  return { base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, get closed() { return closed } }
}

const ask = { messages: [{ role: "user" as const, content: "hi" }] }

describe("createRemotePluginLlm against a misbehaving host", () => {
  it("an answer over maxResponseBytes is cut there and reported as unreadable", async () => {
    const { base } = await host((response) => {
      response.writeHead(200, { "content-type": "application/json" })
      response.end(JSON.stringify({ ok: true, text: "x".repeat(4 * 1024 * 1024) }))
    })
    const remote = createRemotePluginLlm({ baseUrl: base, registrantToken: "t", maxResponseBytes: 1024 })
    await expect(remote.complete(ask)).rejects.toMatchObject({ _tag: "PluginLlmProviderUnavailable", message: expect.stringMatching(/without a readable JSON body/) })
  })

  it("a cancel while the host withholds its headers ends the call, though fetch never hears of it", async () => {
    const { base } = await host(() => undefined)
    const remote = createRemotePluginLlm({ baseUrl: base, registrantToken: "t", fetch: deafFetch })
    await expect(remote.complete({ ...ask, signal: AbortSignal.timeout(50) })).rejects.toMatchObject({ _tag: "PluginLlmCancelled" })
  })

  it("a cancel while the host's answer stops half way ends the call and hangs up", async () => {
    const served = await host((response) => {
      response.writeHead(200, { "content-type": "application/json" })
      response.write(`{"ok":true,"text":"par`)
    })
    const remote = createRemotePluginLlm({ baseUrl: served.base, registrantToken: "t", fetch: deafFetch })
    await expect(remote.complete({ ...ask, signal: AbortSignal.timeout(50) })).rejects.toMatchObject({ _tag: "PluginLlmCancelled" })
    await served.closed
  })
})
