import { afterEach, describe, expect, it } from "vitest"
import { ContractHost, eventually } from "../../../bench/support/contract-host.ts"
import { freePort } from "../support/free-port.ts"
import { eventsOf, killChild, spawnChild, spawnPlugin, type Child } from "../support/processes.ts"

/**
 * Plugins as separate processes (the decorator form under tsx; a Python standard-library client) against the
 * contract stand-in host, so the process-level lifecycle is covered before the real host is merged. The same
 * scenarios against `llm-worker serve` are in ../cross-process.test.ts.
 */
let children: Array<Child> = []
let hosts: Array<ContractHost> = []
afterEach(async () => {
  await Promise.all(children.map((c) => killChild(c)))
  await Promise.all(hosts.map((h) => h.close()))
  children = []
  hosts = []
})

const startHost = async (port = 0) => {
  const h = await ContractHost.start(port)
  hosts.push(h)
  return h
}

describe("plugin processes against the contract", () => {
  it("a decorated plugin started before the host registers once it is up, serves, survives a restart, and cleans up on SIGTERM", async () => {
    const port = await freePort()
    const plugin = spawnPlugin(`http://127.0.0.1:${port}`)
    children.push(plugin)
    await plugin.waitFor(/"type":"registration_failed".*ECONNREFUSED/)
    const h = await startHost(port)
    await plugin.waitFor(/"type":"ready"/)
    expect((await h.call("get_weather", { city: "Kyoto" })).body).toEqual({ output: { city: "Kyoto", temp_c: 22, weather: "sunny" } })
    expect((await h.call("get_weather", { city: "Atlantis" })).body).toEqual({ is_error: true, error: "RangeError: no forecast for Atlantis" })
    const first = h.instanceId
    h.restart()
    await plugin.waitFor((l) => l.includes('"type":"host_restarted"') && l.includes(first))
    await eventually(() => eventsOf(plugin).filter((e) => e.type === "registered").length === 2, "re-registration")
    expect((await h.call("get_weather", { city: "Oslo" })).body.output.city).toBe("Oslo")
    plugin.process.kill("SIGTERM")
    expect(await plugin.exited).toEqual({ code: null, signal: "SIGTERM" })
    const clear = h.received.find((r) => r.path === "/api/tools/clear")
    expect(clear).toMatchObject({ body: { role: null, source: "plugin:weather" }, token: expect.any(String) })
    expect(h.tools.size).toBe(0)
  })

  it("the seed's lifecycle from Python's standard library: register with retry, callback, unregister", async () => {
    const port = await freePort()
    const py = spawnChild("python3", ["test/remote/fixtures/lifecycle.py", `http://127.0.0.1:${port}`])
    children.push(py)
    await py.waitFor(/^waiting for the host$/)
    const h = await startHost(port)
    expect(await py.waitFor(/^registered/)).toBe("registered after-retry True")
    expect((await h.call("get_weather", { city: "Kyoto" })).body).toEqual({ output: { city: "Kyoto", temp_c: 22 }, is_error: false })
    expect(await py.waitFor(/^unregistered/)).toBe("unregistered 200 True")
    expect(py.lines).toContain('called {"city": "Kyoto"}')
    expect(await py.exited).toEqual({ code: 0, signal: null })
    expect(h.tools.size).toBe(0)
  })
})
