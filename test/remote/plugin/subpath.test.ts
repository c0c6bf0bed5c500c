import { execFileSync } from "node:child_process"
import { describe, expect, it } from "vitest"
import * as api from "../../../src/index.ts"

/** `llm-worker/remote/plugin` is its own entry (Node only), from source and from the built package. */
const probe = `
  const m = await import("llm-worker/remote/plugin")
  const where = new URL(import.meta.resolve("llm-worker/remote/plugin")).pathname.split("/").slice(-4).join("/")
  const tool = m.remoteTool({ name: "ping", execute: () => "pong" })
  const p = await m.startPlugin({ source: "probe", tools: [tool], host: "http://127.0.0.1:9", shutdown: { signals: false } })
  const served = p.callbackOrigin.startsWith("http://127.0.0.1:")
  await p.stop({ deadlineMs: 100 })
  console.log(where, typeof m.llmTool, served)`

const run = (flags: ReadonlyArray<string>): string =>
  execFileSync(process.execPath, [...flags, "--input-type=module", "-e", probe], { cwd: new URL("../../..", import.meta.url), encoding: "utf8", timeout: 60_000 }).trim()

describe("the llm-worker/remote/plugin entry", () => {
  it("is not part of the main entry", () => {
    expect(api).not.toHaveProperty("startPlugin")
    expect(api).not.toHaveProperty("llmTool")
  })

  it("loads from source", () => {
    expect(run(["--conditions=@llm-worker/source", "--import", "tsx"])).toBe("src/remote/plugin/index.ts function true")
  })

  it("loads from the built package in plain Node", () => {
    // dist/ is built by `prepare` on install; run `npm run build` after changing src/.
    expect(run([])).toBe("dist/remote/plugin/index.js function true")
  })
})
