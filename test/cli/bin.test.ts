import { execFile } from "node:child_process"
import { promisify } from "node:util"
import { describe, expect, it } from "vitest"

const run = promisify(execFile)

describe("the installed command", () => {
  it("runs the built CLI from bin/ in plain Node (no TypeScript loader)", async () => {
    // dist/ is built by `prepare` on install; run `npm run build` after changing src/.
    const { stdout } = await run(process.execPath, ["bin/llm-worker.mjs", "demo", "--provider", "gemini"], {
      cwd: new URL("../../", import.meta.url),
      env: { ...process.env, OPENAI_API_KEY: "", ANTHROPIC_API_KEY: "", GEMINI_API_KEY: "" },
      timeout: 60_000
    })
    expect(stdout).toContain("REPLAY — no model is called")
    expect(stdout).toMatch(/← calculator ok/)
  })
})
