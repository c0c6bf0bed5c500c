import { execFileSync } from "node:child_process"
import { describe, expect, it } from "vitest"
import * as api from "../src/index.ts"

describe("the public surface", () => {
  it("exposes the documented entry points", () => {
    for (const name of ["defineTool", "toolGroup", "ToolMeta", "ToolServer", "Worker", "createLlmClient", "Timeline", "Tool"]) {
      expect(api).toHaveProperty(name)
    }
  })

  it("does not expose registration outside the Worker", () => {
    expect(api).not.toHaveProperty("registerDefinitions")
    expect(api).not.toHaveProperty("registryOf")
    expect(api).not.toHaveProperty("ToolRegistry")
    const handle = new api.ToolServer().handle()
    expect("registerTool" in handle).toBe(false)
    expect("registerTools" in handle).toBe(false)
    // @ts-expect-error: registration is not part of the handle's type
    void handle.registerTool
    // @ts-expect-error: nor of the server's
    void new api.ToolServer().registerTools
  })

  const probe = `
    const out = []
    const m = await import("llm-worker")
    out.push(typeof m.defineTool, new URL(import.meta.resolve("llm-worker")).pathname.split("/").slice(-2).join("/"))
    for (const deep of ["llm-worker/src/tool-server/registration.ts", "llm-worker/dist/tool-server/registration.js"]) {
      try { await import(deep); out.push("leak") } catch (e) { out.push(e.code) }
    }
    console.log(out.join(","))`
  const runProbe = (flags: ReadonlyArray<string>): string =>
    execFileSync(process.execPath, [...flags, "--input-type=module", "-e", probe], {
      cwd: new URL("..", import.meta.url),
      encoding: "utf8"
    }).trim()

  it("refuses deep imports through the package's exports map (sources, under the `@llm-worker/source` condition)", () => {
    expect(runProbe(["--conditions=@llm-worker/source", "--import", "tsx"])).toBe(
      "function,src/index.ts,ERR_PACKAGE_PATH_NOT_EXPORTED,ERR_PACKAGE_PATH_NOT_EXPORTED"
    )
  })

  it("loads the built package in plain Node, without tsx, and refuses deep imports there too", () => {
    // dist/ is built by `prepare` on install; run `npm run build` after changing src/.
    expect(runProbe([])).toBe("function,dist/index.js,ERR_PACKAGE_PATH_NOT_EXPORTED,ERR_PACKAGE_PATH_NOT_EXPORTED")
  })
})
