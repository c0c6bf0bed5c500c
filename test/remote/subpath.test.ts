import { execFileSync } from "node:child_process"
import { describe, expect, expectTypeOf, it } from "vitest"
import * as api from "../../src/index.ts"
import type { HostConfigInput, ToolHost, ToolHostOptions } from "../../src/remote/index.ts"

/**
 * `llm-worker/remote` is its own entry: the HTTP server and YAML parser stay out of the main entry. Probed in real
 * processes, from source and built: the entry resolves, starts a host on a free port and answers its health check.
 */
const probe = `
  const { startToolHost } = await import("llm-worker/remote")
  const where = new URL(import.meta.resolve("llm-worker/remote")).pathname.split("/").slice(-3).join("/")
  const host = await startToolHost({ port: 0, env: {}, log: () => {} })
  const health = await (await fetch(host.url + "/api/health")).json()
  await host.close()
  console.log(where, health.ok, health.instance_id === host.instanceId)`

const run = (flags: ReadonlyArray<string>): string =>
  execFileSync(process.execPath, [...flags, "--input-type=module", "-e", probe], { cwd: new URL("../..", import.meta.url), encoding: "utf8", timeout: 60_000 }).trim()

describe("the llm-worker/remote entry", () => {
  it("is not part of the main entry", () => {
    expect(api).not.toHaveProperty("startToolHost")
  })

  it("loads from source and serves", () => {
    expect(run(["--conditions=@llm-worker/source", "--import", "tsx"])).toBe("src/remote/index.ts true true")
  }, 60_000)

  it("loads from the built package in plain Node and serves", () => {
    // dist/ is built by `prepare` on install; run `npm run build` after changing src/.
    expect(run([])).toBe("dist/remote/index.js true true")
  }, 60_000)

  it("types the options and the config as written", () => {
    expectTypeOf<ToolHostOptions["port"]>().toEqualTypeOf<number | undefined>()
    expectTypeOf<ToolHost["close"]>().returns.resolves.toBeVoid()
    const config: HostConfigInput = { roles: { a: { provider: "openai", model: "m", cache_lock: true } }, server: { max_body_bytes: 2048 } }
    void config
    // @ts-expect-error: cache_lock is a boolean, not a string
    const wrong: HostConfigInput = { roles: { a: { cache_lock: "false" } } }
    void wrong
    // @ts-expect-error: unknown keys do not compile either
    const unknown: HostConfigInput = { roles: { a: { sytem_prompt: "x" } } }
    void unknown
  })
})
