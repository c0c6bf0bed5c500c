import { execFileSync } from "node:child_process"
import { describe, expect, it } from "vitest"
import * as api from "../../src/index.ts"

/**
 * `llm-worker/isolated` is its own entry (it needs Node built-ins the main entry must stay free of). Probed in
 * real processes, built and from source: the entry resolves, and a busy loop under a deadline is stopped there
 * too (which also proves the thread entry is shipped next to the compiled code).
 */
const probe = `
  const { defineIsolatedTool, IsolationPool } = await import("llm-worker/isolated")
  const { ToolServer } = await import("llm-worker")
  const where = new URL(import.meta.resolve("llm-worker/isolated")).pathname.split("/").slice(-3).join("/")
  const pool = new IsolationPool({ maxThreads: 1 })
  const spin = defineIsolatedTool({ name: "spin", description: "", module: new URL("test/isolation/fixtures/handlers.mjs", "file://" + process.cwd() + "/"), export: "spin", pool })
  const client = (await import("llm-worker")).createLlmClient({ provider: "ollama", model: "m" })
  const server = new ToolServer()
  const w = (await import("llm-worker")).Worker.create({ client, toolServer: server })
  w.registerTool(spin)
  const tag = await server.handle().callTool("spin", "{}", { timeoutMs: 100 }).then(() => "ok", (e) => e._tag)
  await pool.close()
  console.log(where, tag)`

const run = (flags: ReadonlyArray<string>): string =>
  execFileSync(process.execPath, [...flags, "--input-type=module", "-e", probe], { cwd: new URL("../..", import.meta.url), encoding: "utf8", timeout: 60_000 }).trim()

describe("the llm-worker/isolated entry", () => {
  it("is not part of the main entry", () => {
    expect(api).not.toHaveProperty("defineIsolatedTool")
    expect(api).not.toHaveProperty("IsolationPool")
  })

  it("loads from source and stops a busy loop at its deadline", () => {
    expect(run(["--conditions=@llm-worker/source", "--import", "tsx"])).toBe("src/isolation/index.ts ToolTimeout")
  }, 60_000)

  it("loads from the built package in plain Node and stops a busy loop at its deadline", () => {
    // dist/ is built by `prepare` on install; run `npm run build` after changing src/.
    expect(run([])).toBe("dist/isolation/index.js ToolTimeout")
  }, 60_000)
})
