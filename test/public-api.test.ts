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

  it("refuses deep imports through the package's exports map, in a real Node process", () => {
    const script = `
      const out = []
      const m = await import("llm-worker")
      out.push(typeof m.defineTool)
      try { await import("llm-worker/src/tool-server/registration.ts"); out.push("leak") } catch (e) { out.push(e.code) }
      console.log(out.join(","))`
    const printed = execFileSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
      cwd: new URL("..", import.meta.url),
      encoding: "utf8"
    })
    expect(printed.trim()).toBe("function,ERR_PACKAGE_PATH_NOT_EXPORTED")
  })
})
