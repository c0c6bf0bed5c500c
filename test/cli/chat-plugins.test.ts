import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterEach, describe, expect, it } from "vitest"
import { parseCommand } from "../../src/cli/args.ts"
import { type ReplayProvider, startReplayProvider } from "../../src/testing/replay-provider.ts"
import { answerSse } from "../support/answer-sse.ts"
import { runCli, startCli } from "./cli-process.ts"

const EXAMPLES = fileURLToPath(new URL("../../docs/examples/plugins/", import.meta.url))
const FIXTURES = fileURLToPath(new URL("../remote/fixtures/", import.meta.url))

const servers: Array<ReplayProvider> = []
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()))
})

const configFile = (text: string): string => {
  const dir = mkdtempSync(join(tmpdir(), "llm-worker-chat-plugins-"))
  const path = join(dir, "llm-worker.yaml")
  writeFileSync(path, text)
  return path
}

const PLUGINS = `plugins:\n  entries:\n    tldr:\n      module: ${JSON.stringify(join(EXAMPLES, "tldr.ts"))}\n    word-count:\n      module: ${JSON.stringify(join(FIXTURES, "word-count-plugin.ts"))}\n`

describe("llm-worker chat --config (plugins in the terminal chat, a child process)", () => {
  it("runs /tldr on the chat's model, a model-free command, refuses an unknown one, and gives the model the plugins' tools", async () => {
    const server = await startReplayProvider({
      scheme: "openai-chat",
      script: [
        { kind: "stream", transcript: answerSse("openai-chat", "Ana ships Friday.") },
        { kind: "stream", transcript: answerSse("openai-chat", "Hello there.") }
      ]
    })
    servers.push(server)
    const args = ["chat", "--provider", "openai", "--base-url", server.baseUrl, "--config", configFile(PLUGINS)]
    const { code, stdout, stderr } = await runCli(args, { OPENAI_API_KEY: "sk-test-dummy" }, "/tldr Ana ships the release on Friday.\n/wc one two three\n/nope x\nhello\n")
    expect(code).toBe(0)
    expect(stdout).toContain("plugins: tldr, word-count · commands: /stall /tldr /wc\n")
    expect(stdout).toContain("you› /tldr Ana ships the release on Friday.\nAna ships Friday.\n")
    expect(stdout).toContain("you› /wc one two three\n3 words\n")
    expect(stdout).toContain("you› /nope x\nerror: unknown command: /nope (commands: /stall /tldr /wc)\n")
    expect(stdout).toContain("you› hello\nHello there.")
    expect(server.requests).toHaveLength(2)
    const tldr = JSON.parse(server.requests[0]?.body ?? "{}") as { messages: Array<{ content: unknown }>; tools?: unknown }
    expect(JSON.stringify(tldr.messages)).toContain("Ana ships the release on Friday.")
    expect(tldr.tools).toBeUndefined()
    const chat = JSON.parse(server.requests[1]?.body ?? "{}") as { tools: Array<{ function: { name: string } }> }
    expect(chat.tools.map((t) => t.function.name)).toEqual(["calculator", "clock", "count_words", "read_file"])
    // One audit line for the one plugin call.
    expect(stderr.split("\n").filter((line) => line.startsWith("llm-worker plugin-llm audit "))).toHaveLength(1)
    expect(stderr).toContain('"pluginId":"tldr"')
  })

  it("Ctrl-C stops waiting for a command that hangs and returns to the prompt", async () => {
    const cli = startCli(["chat", "--provider", "openai", "--config", configFile(PLUGINS)], { OPENAI_API_KEY: "sk-test-dummy" })
    cli.child.stdin.write("/stall\n")
    await cli.waitFor(/you› \/stall\n/)
    cli.child.kill("SIGINT")
    await cli.waitFor(/\/stall\n\(cancelled\)\nyou› /)
    cli.child.stdin.end("/wc still here\n")
    expect(await cli.exited).toBe(0)
    expect(cli.stdout()).toContain("you› /wc still here\n2 words\n")
  })

  it("refuses a config the host would refuse, with one line (exit 2)", async () => {
    const bad = configFile("plugins:\n  entries:\n    tldr:\n      llm:\n        allowed_models: gpt-4.1\n")
    const refused = await runCli(["chat", "--provider", "openai", "--config", bad], { OPENAI_API_KEY: "sk-test-dummy" }, "")
    expect(refused.code).toBe(2)
    expect(refused.stderr).toMatch(/^llm-worker: .*plugins\.entries\.tldr\.llm\.allowed_models: must be a list of strings, got the string "gpt-4\.1"/)
    expect(parseCommand(["chat", "--config", "x.yaml"])).toEqual({ kind: "chat", config: "x.yaml" })
  })
})
