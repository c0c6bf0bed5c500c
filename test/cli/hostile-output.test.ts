import { mkdtemp, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import { type ReplayProvider, type ReplayStep, startReplayProvider } from "../../src/testing/replay-provider.ts"
import { runCli } from "./cli-process.ts"

/** Clear screen, OSC 52 clipboard write, window title, 8-bit CSI, cursor up, bidi override and isolate, CR, BEL. */
const HOSTILE = "\u001b[2J\u001b[H\u001b]52;c;cm0gLXJmIH4=\u0007\u001b]0;pwned\u001b\\\u009b31m\u001b[1A\r\u202etxt.exe\u202c\u2066x\u2069\u200f\u061c\u0008\u007f"

/** Raw in what the CLI printed: any control character but newline, or a bidi control. */
const RAW = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/u

const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
  `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", model: "m", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`

const stream = (...events: ReadonlyArray<string>): ReplayStep => ({ kind: "stream", transcript: `${events.join("")}data: [DONE]\n\n` })

let root: string
const servers: Array<ReplayProvider> = []

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "llm-worker-hostile-"))
  await writeFile(join(root, "evil.txt"), `file says ${HOSTILE}\n`)
})
afterAll(() => rm(root, { recursive: true, force: true }))
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()))
})

const chat = async (script: ReadonlyArray<ReplayStep>, input: string, baseUrl = (server: ReplayProvider) => server.baseUrl) => {
  const server = await startReplayProvider({ scheme: "openai-chat", script })
  servers.push(server)
  const args = ["chat", "--provider", "openai", "--base-url", baseUrl(server), "--root", root]
  return runCli(args, { OPENAI_API_KEY: "sk-test-dummy" }, input)
}

describe("llm-worker chat against a hostile provider (child process)", () => {
  it("prints the model's text, tool calls, tool results, error bodies and in-stream errors with every control shown, none raw", async () => {
    const script: ReadonlyArray<ReplayStep> = [
      // Turn 1: hostile answer text, then a call whose name and arguments are hostile, and one reading a hostile file.
      stream(
        chunk({ role: "assistant", content: `text ${HOSTILE}` }),
        chunk({ tool_calls: [{ index: 0, id: "call_1", type: "function", function: { name: `read_file${HOSTILE}`, arguments: JSON.stringify({ path: HOSTILE }) } }] }),
        chunk({ tool_calls: [{ index: 1, id: "call_2", type: "function", function: { name: "read_file", arguments: JSON.stringify({ path: "evil.txt" }) } }] }),
        chunk({}, "tool_calls")
      ),
      stream(chunk({ role: "assistant", content: "done" }, "stop")),
      // Turn 2: an HTTP error whose body carries the controls (400: not retried).
      { kind: "status", status: 400, body: JSON.stringify({ error: { message: `bad request ${HOSTILE}`, type: "invalid_request_error" } }) },
      // Turn 3: an error event inside a 200 stream.
      stream(chunk({ role: "assistant", content: "" }), `data: ${JSON.stringify({ error: { message: `in-stream ${HOSTILE}`, code: "invalid_request_error" } })}\n\n`)
    ]
    const { code, stdout, stderr } = await chat(script, "one\ntwo\nthree\n")
    expect(stderr).toBe("")
    expect(code).toBe(0)
    expect(stdout).not.toMatch(RAW)
    expect(stdout).toContain("text \\u001b[2J\\u001b[H\\u001b]52;c;cm0gLXJmIH4=\\u0007")
    expect(stdout).toMatch(/→ read_file\\u001b\[2J.*\\u202etxt\.exe\\u202c/)
    expect(stdout).toMatch(/← read_file ok: file says \\u001b\[2J.*\\u2066x\\u2069\\u200f\\u061c\\u0008\\u007f\\n\n/)
    expect(stdout).toMatch(/error: .*bad request \\u001b\[2J\\u001b\[H\\u001b\]52;c;/)
    expect(stdout).toMatch(/error: .*in-stream \\u001b\[2J/)
    // Each error stayed on its own line and the chat went on to the next question.
    expect(stdout).toMatch(/you› two\nerror: [^\n]*\nyou› three\nerror: [^\n]*\nyou› /)
  })

  it("refuses a --base-url with credentials at once, without printing them", async () => {
    const { code, stdout, stderr } = await runCli(["chat", "--provider", "openai", "--base-url", "http://user:S3CR3T-PASSWORD@127.0.0.1:9/v1"], {
      OPENAI_API_KEY: "sk-test-dummy"
    })
    expect(code).toBe(2)
    expect(stdout).toBe("")
    expect(stderr).toBe("llm-worker: --base-url http://***@127.0.0.1:9/v1 contains credentials, which are never sent; pass the key in OPENAI_API_KEY\n")
  })

  it("never prints a key passed in the base URL's query, in an error line or anywhere else", async () => {
    // The query moves the endpoint path past the replay server's route, so it answers 404: an error line naming the URL.
    const { code, stdout, stderr } = await chat([{ kind: "status", status: 404 }], "hi\n", (server) => `${server.baseUrl}?key=S3CR3T-KEY&alt=json`)
    expect(code).toBe(0)
    expect(stdout).toMatch(/error: HTTP 404 from http:\/\/127\.0\.0\.1:\d+\/v1\?key=\*\*\*&alt=json/)
    expect(`${stdout}${stderr}`).not.toContain("S3CR3T")
  })

  it("exits 2 without echoing the credentials of a base URL that does not parse", async () => {
    const { code, stdout, stderr } = await runCli(["chat", "--provider", "openai", "--base-url", "http://user:S3CR3T@[::1"], { OPENAI_API_KEY: "sk-test-dummy" })
    expect(code).toBe(2)
    expect(stdout).toBe("")
    expect(stderr).toBe('llm-worker: Base URL "http://***@[::1" for provider "openai" is not a valid URL\n')
  })

  it("shows a hostile command line in its error as visible escapes", async () => {
    const { code, stderr } = await runCli([`\u001b]52;c;cm0=\u0007\u202e`])
    expect(code).toBe(2)
    expect(stderr).not.toMatch(RAW)
    expect(stderr).toContain('llm-worker: unknown command "\\u001b]52;c;cm0=\\u0007\\u202e"')
  })
})
