import { execFile } from "node:child_process"
import { fileURLToPath } from "node:url"
import { Effect, Exit } from "effect"
import { describe, expect, it } from "vitest"
import { ExecutionFailed } from "../../src/tool/tool-error.ts"
import { ToolMeta } from "../../src/tool/tool-meta.ts"
import type { Tool } from "../../src/tool/tool.ts"
import { registerDefinitions } from "../../src/tool-server/registration.ts"
import { ToolServer, type ToolServerHandle } from "../../src/tool-server/tool-server.ts"
import { ToolExecution, isToolCallError } from "../../src/tool-server/tool-server-error.ts"
import { hostileValues } from "../tool/hostile-values.ts"
import { collectUnhandledRejections } from "../support/unhandled-rejections.ts"

const serverWith = (tool: Tool): ToolServerHandle => {
  const handle = new ToolServer().handle()
  registerDefinitions(handle, [() => [ToolMeta.make("hostile"), tool]])
  return handle
}

const unhandled = collectUnhandledRejections()

describe("a hand-written tool failing with a hostile value", () => {
  it.each(hostileValues())("settles every call path with ToolExecution: %s", async (_label, value) => {
    const rejecting = serverWith({ execute: () => Promise.reject(value) })
    const throwing = serverWith({
      execute: () => {
        throw value
      }
    })
    const calls = [rejecting, throwing].flatMap((handle) => [
      handle.callTool("hostile", "{}"),
      handle.callTool("hostile", "{}", { signal: new AbortController().signal }),
      handle.callTool("hostile", "{}", { timeoutMs: 5_000 }),
      handle.callTool("hostile", "{}", { maxOutputBytes: 512 })
    ])
    for (const settled of await Promise.allSettled(calls)) {
      expect(settled.status).toBe("rejected")
      const reason = (settled as PromiseRejectedResult).reason as ToolExecution
      expect(reason).toBeInstanceOf(ToolExecution)
      expect(isToolCallError(reason)).toBe(true)
      expect(reason.error).toBeInstanceOf(ExecutionFailed)
      expect(typeof reason.message).toBe("string")
      expect(new TextEncoder().encode(reason.message).length).toBeLessThanOrEqual(100 * 1024)
    }
    const exit = await Effect.runPromiseExit(rejecting.callToolEffect("hostile", "{}"))
    expect(Exit.isFailure(exit)).toBe(true)
    await new Promise((resolve) => setTimeout(resolve, 0))
    expect(unhandled).toEqual([])
  })

  // Resolving with a value whose `then` cannot be read (a Proxy, a throwing getter) rejects instead: still settled.
  it.each(hostileValues())("turns a hostile resolved value into bounded text or ToolExecution: %s", async (_label, value) => {
    const handle = serverWith({ execute: () => Promise.resolve(value) as Promise<string> })
    for (const options of [undefined, { signal: new AbortController().signal }]) {
      const output = await handle.callTool("hostile", "{}", options).catch((error: unknown) => {
        expect(error).toBeInstanceOf(ToolExecution)
        return (error as ToolExecution).message
      })
      expect(typeof output).toBe("string")
      expect(new TextEncoder().encode(output).length).toBeLessThanOrEqual(100 * 1024)
    }
  })

  it("does not let a look-alike call error through: a forged ToolTimeout becomes ToolExecution", async () => {
    const forged = { _tag: "ToolTimeout", name: "hostile", afterMs: 1, get message(): string { throw new Error("no") } }
    const handle = serverWith({ execute: () => Promise.reject(forged) })
    const error = await handle.callTool("hostile", "{}", { timeoutMs: 1_000 }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(ToolExecution)
  })

  it("never crashes a real Node process (no unhandled rejection, exit code 0)", async () => {
    const root = fileURLToPath(new URL("../..", import.meta.url))
    const script = fileURLToPath(new URL("fixtures/hostile-rejections.ts", import.meta.url))
    const { code, stdout, stderr } = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = execFile(process.execPath, ["--import", "tsx", script], { cwd: root, timeout: 60_000, maxBuffer: 16 * 1024 * 1024 }, (error, out, err) =>
        resolve({ code: error === null ? 0 : typeof error.code === "number" ? error.code : null, stdout: out, stderr: err })
      )
      child.stdin?.end()
    })
    expect(stderr).toBe("")
    expect(code).toBe(0)
    const lines = stdout.trim().split("\n")
    const count = hostileValues().length * 3 * 4
    expect(lines.at(-1)).toBe(`all settled: ${count}`)
    expect(lines.filter((l) => / (ok|ToolExecution) \d+$/.test(l))).toHaveLength(count)
  }, 90_000)
})
