import { execFileSync } from "node:child_process"
import { describe, expect, it } from "vitest"
import * as api from "../../src/index.ts"

/**
 * `llm-worker/plugin-llm` is its own entry. Probed in real processes, from source and built: it resolves, decodes a
 * config and refuses a gated override with the config key.
 */
const probe = `
  const { createPluginLlm, decodePluginLlmConfig } = await import("llm-worker/plugin-llm")
  const where = new URL(import.meta.resolve("llm-worker/plugin-llm")).pathname.split("/").slice(-3).join("/")
  let decoded = "decoded"
  try { decodePluginLlmConfig({ plugins: { entries: { p: { llm: { allowed_models: "x" } } } } }) } catch (e) { decoded = e._tag }
  const host = createPluginLlm({ active: { provider: "ollama", model: "m" }, audit: false })
  const refused = await host.forPlugin("p").complete({ messages: [{ role: "user", content: "x" }], model: "other" }).catch((e) => e.configKey)
  console.log(where, decoded, refused)`

const run = (flags: ReadonlyArray<string>): string =>
  execFileSync(process.execPath, [...flags, "--input-type=module", "-e", probe], { cwd: new URL("../..", import.meta.url), encoding: "utf8", timeout: 60_000 }).trim()

describe("the llm-worker/plugin-llm entry", () => {
  it("is not part of the main entry", () => {
    expect(api).not.toHaveProperty("createPluginLlm")
    expect(api).toHaveProperty("completeObject")
  })

  it("loads from source", () => {
    expect(run(["--conditions=@llm-worker/source", "--import", "tsx"])).toBe("src/plugin-llm/index.ts PluginLlmConfigError plugins.entries.p.llm.allow_model_override")
  }, 60_000)

  it("loads from the built package in plain Node", () => {
    // dist/ is built by `prepare` on install; run `npm run build` after changing src/.
    expect(run([])).toBe("dist/plugin-llm/index.js PluginLlmConfigError plugins.entries.p.llm.allow_model_override")
  }, 60_000)
})
