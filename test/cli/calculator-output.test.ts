import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import { type ReplayProvider, startReplayProvider } from "../../src/testing/index.ts"
import { chatText, chatToolCall } from "../remote/support/host.ts"
import { runCli } from "./cli-process.ts"

let root: string
const servers: Array<ReplayProvider> = []
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "llm-worker-calculator-"))
})
afterAll(() => rm(root, { recursive: true, force: true }))
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()))
})

/** The tool result the model read: the `tool` message of the request after the call. */
const toolResultSent = (server: ReplayProvider): string => {
  const body = JSON.parse(server.requests[1]?.body ?? "{}") as { messages?: Array<{ role: string; content: string }> }
  return body.messages?.find((m) => m.role === "tool")?.content ?? ""
}

describe("llm-worker chat's calculator, as the model sees its refusals", () => {
  it.each([
    ["1 MiB of '('", "(".repeat(1 << 20)],
    ["a long sum with a bad character near its end", `${"1+".repeat(450)}x+1`]
  ])("%s: a short error quoting a prefix of the expression, not the whole of it", async (_name, expression) => {
    const server = await startReplayProvider({
      scheme: "openai-chat",
      script: [
        { kind: "stream", transcript: chatToolCall("calculator", JSON.stringify({ expression })) },
        { kind: "stream", transcript: chatText("That expression is not valid.") }
      ]
    })
    servers.push(server)
    const { code, stdout } = await runCli(["chat", "--provider", "openai", "--base-url", server.baseUrl, "--root", root], { OPENAI_API_KEY: "sk-test-dummy" }, "compute it\n")
    expect(code).toBe(0)
    const result = toolResultSent(server)
    expect(result).toMatch(/^\[tool error\] .* at character \d+ of "[(1+]{80}… \(\d+ more characters\)"/)
    expect(result.length).toBeLessThan(400)
    expect(stdout.length).toBeLessThan(4000)
  }, 30_000)

  it("a refusal past the quoted prefix names the text around it", async () => {
    const server = await startReplayProvider({
      scheme: "openai-chat",
      script: [
        { kind: "stream", transcript: chatToolCall("calculator", JSON.stringify({ expression: `${"1+".repeat(100)}x` })) },
        { kind: "stream", transcript: chatText("ok") }
      ]
    })
    servers.push(server)
    await runCli(["chat", "--provider", "openai", "--base-url", server.baseUrl, "--root", root], { OPENAI_API_KEY: "sk-test-dummy" }, "compute it\n")
    expect(toolResultSent(server)).toContain(`at character 201 of "${"1+".repeat(40)}… (121 more characters)", near "${"1+".repeat(10)}x"`)
  }, 30_000)
})
