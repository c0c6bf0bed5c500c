import { spawn } from "node:child_process"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"

const fixture = fileURLToPath(new URL("./fixtures/cancel-replayed-stream.ts", import.meta.url))

/**
 * Runs the fixture and reports whether it exited by itself after printing "closed". The bound is generous (the
 * scripted pauses left would hold a lingering process for a minute); it tells "exits on its own" from "is kept
 * alive by a timer or socket", and asserts nothing about how fast.
 */
const exitsOnItsOwn = (mode: string): Promise<{ readonly stdout: string; readonly exited: boolean }> =>
  new Promise((resolve) => {
    const child = spawn(process.execPath, ["--conditions=source", "--import", "tsx", fixture, mode], { stdio: ["ignore", "pipe", "inherit"] })
    let stdout = ""
    let guard: NodeJS.Timeout | undefined
    child.stdout.on("data", (data: Buffer) => {
      stdout += data.toString()
      if (stdout.includes("closed") && guard === undefined) guard = setTimeout(() => child.kill("SIGKILL"), 20_000)
    })
    child.on("exit", (code, signal) => {
      clearTimeout(guard)
      resolve({ stdout, exited: signal === null && code === 0 })
    })
  })

describe("a cancelled replayed stream leaves nothing behind", () => {
  it.concurrent.each(["script", "raw"])("the process exits on its own after close() (%s step with pauses ahead)", async (mode) => {
    const { stdout, exited } = await exitsOnItsOwn(mode)
    expect(stdout).toBe("LlmCancelled\nclosed\n")
    expect(exited).toBe(true)
  }, 90_000)
})
