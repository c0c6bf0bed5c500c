import { mkdtemp, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import { loadRecording } from "../../src/cli/recordings.ts"
import { type ReplayProvider, type ReplayStep, startReplayProvider } from "../../src/testing/replay-provider.ts"
import { runCli, startCli } from "./cli-process.ts"

let root: string
const servers: Array<ReplayProvider> = []

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "llm-worker-chat-"))
  await writeFile(join(root, "notes.txt"), "Pack the demo, ship on Friday.\n")
})
afterAll(() => rm(root, { recursive: true, force: true }))
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()))
})

const openAi = async (script: ReadonlyArray<ReplayStep>) => {
  const server = await startReplayProvider({ scheme: "openai-chat", script })
  servers.push(server)
  return { server, args: ["chat", "--provider", "openai", "--base-url", server.baseUrl, "--root", root], env: { OPENAI_API_KEY: "sk-test-dummy" } }
}

const stream = (transcript: string, more: Partial<Extract<ReplayStep, { kind: "stream" }>> = {}): ReplayStep => ({ kind: "stream", transcript, ...more })

describe("llm-worker chat (child process against a replay provider)", () => {
  it("streams the answer, shows each tool call and its real result, and exits 0 at the end of input", async () => {
    const { server, args, env } = await openAi([stream(loadRecording("openai-chat", "tool-calls")), stream(loadRecording("openai-chat", "answer"))])
    const { code, stdout, stderr } = await runCli(args, env, "What does notes.txt say?\n")
    expect(stderr).toBe("")
    expect(code).toBe(0)
    expect(stdout).toContain("llm-worker chat · openai · gpt-4.1-mini")
    expect(stdout).toContain("you› What does notes.txt say?\n")
    expect(stdout).toContain('→ read_file {"path":"notes.txt"}')
    expect(stdout).toContain("← read_file ok: Pack the demo, ship on Friday.\\n")
    expect(stdout).toContain('← calculator ok: {"expression":"(17.5 * 4) - 2^3","value":62}')
    expect(stdout).toMatch(/= 62, and notes\.txt says: "Pack the demo, ship on Friday\."\nyou› \n?$/)

    expect(server.requests).toHaveLength(2)
    expect(server.requests[0]?.headers.authorization).toBe("Bearer sk-test-dummy")
    const first = JSON.parse(server.requests[0]?.body ?? "{}") as { model: string; stream: boolean; tools: ReadonlyArray<{ function: { name: string } }> }
    expect(first.model).toBe("gpt-4.1-mini")
    expect(first.tools.map((tool) => tool.function.name)).toEqual(["calculator", "clock", "read_file"])
    // The tool results went back to the model: the second request carries them, paired by call id.
    const second = server.requests[1]?.body ?? ""
    expect(second).toContain('"tool_call_id":"call_Bq9wE4rT6yU1iO3pA8sD2fG5"')
    expect(second).toContain("Pack the demo, ship on Friday.")
  })

  it("cancels the turn on SIGINT during a stalled stream, returns to the prompt, and forgets the cancelled turn", async () => {
    const answer = loadRecording("openai-chat", "answer")
    const { server, args, env } = await openAi([stream(answer, { stallAfterEvents: 4 }), stream(answer)])
    const cli = startCli(args, env)
    cli.child.stdin.write("first question\n")
    // Text that arrived before the stall is on screen while the response is still open: it streams.
    await cli.waitFor(/Here is what the tools/)
    expect(server.requests).toHaveLength(1)
    const mark = cli.stdout().length
    cli.child.kill("SIGINT")
    await cli.waitFor(/\(cancelled\)\nyou› /, mark)
    await server.requests[0]?.disconnected
    cli.child.stdin.end("second question\n")
    expect(await cli.exited).toBe(0)
    expect(cli.stdout().slice(mark)).toMatch(/you› second question\nHere is what the tools returned: .*Friday\."\n/)
    expect(cli.stderr()).toBe("")
    const second = server.requests[1]?.body ?? ""
    expect(second).toContain("second question")
    expect(second).not.toContain("first question")
  })

  it("quits on a second Ctrl-C at the prompt", async () => {
    const { args, env } = await openAi([stream(loadRecording("openai-chat", "answer"))])
    const cli = startCli(args, env)
    await cli.waitFor(/you› $/)
    cli.child.kill("SIGINT")
    await cli.waitFor(/\(Ctrl-C again to quit\)\nyou› $/)
    cli.child.kill("SIGINT")
    expect(await cli.exited).toBe(0)
  })

  it("shows a provider error as one line and keeps the conversation going", async () => {
    const { args, env } = await openAi([
      { kind: "status", status: 401, body: JSON.stringify({ error: { message: "Incorrect API key provided: sk-test-dummy.", type: "invalid_request_error", param: null, code: "invalid_api_key" } }) },
      stream(loadRecording("openai-chat", "answer"))
    ])
    const { code, stdout, stderr } = await runCli(args, env, "hello\nhello again\n")
    expect(code).toBe(0)
    expect(stderr).toBe("")
    expect(stdout).toMatch(/you› hello\nerror: .*Incorrect API key provided.*\nyou› hello again\nHere is what/)
    expect(stdout).not.toMatch(/\n\s+at /)
  })

  it("exits 2 with one precise line when the provider's key is missing", async () => {
    const runs = await Promise.all([
      runCli(["chat", "--provider", "anthropic"]),
      runCli(["chat"]),
      runCli(["chat", "--provider", "gemini"], { LLM_WORKER_MODEL: "gemini-2.5-pro" })
    ])
    expect(runs.map((run) => [run.code, run.stdout, run.stderr])).toEqual([
      [2, "", "llm-worker: no API key for anthropic: set ANTHROPIC_API_KEY\n"],
      [
        2,
        "",
        "llm-worker: no provider configured: set OPENAI_API_KEY, ANTHROPIC_API_KEY or GEMINI_API_KEY, or pass --provider (e.g. --provider ollama); `llm-worker demo` runs offline\n"
      ],
      [2, "", "llm-worker: no API key for gemini: set GEMINI_API_KEY or GOOGLE_API_KEY\n"]
    ])
  })

  it("picks the provider from the key in the environment and needs no key for a local server", async () => {
    const server = await startReplayProvider({ scheme: "anthropic", script: [stream(loadRecording("anthropic", "answer"))] })
    servers.push(server)
    const anthropic = await runCli(["chat", "--base-url", server.baseUrl, "--root", root], { ANTHROPIC_API_KEY: "test-key", LLM_WORKER_MODEL: "claude-haiku-4-5" }, "hi\n")
    expect(anthropic.code).toBe(0)
    expect(anthropic.stdout).toContain("llm-worker chat · anthropic · claude-haiku-4-5")
    expect(server.requests[0]?.headers["x-api-key"]).toBe("test-key")

    const { server: local, args } = await openAi([stream(loadRecording("openai-chat", "answer"))])
    const ollama = await runCli(["chat", "--provider", "ollama", "--model", "qwen3", ...args.slice(3)], {}, "hi\n")
    expect(ollama.code).toBe(0)
    expect(ollama.stdout).toContain("Here is what the tools returned")
    expect(local.requests[0]?.headers.authorization).toBeUndefined()
  })
})
