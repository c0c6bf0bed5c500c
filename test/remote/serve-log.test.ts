import { describe, expect, it } from "vitest"
import { type ReplayProvider, reply, startReplayProvider } from "../../src/testing/index.ts"
import { runCli, startCli, type CliProcess } from "../cli/cli-process.ts"
import { api, json, startCallbackServer, weatherTool } from "./support/host.ts"
import { READY, configFile, serveChildren } from "./support/serve-children.ts"

/**
 * `llm-worker serve` as a newcomer meets it (issue 22): the environment that lets `chat` pick a model lets the
 * host's roles chat too, a role that cannot chat is named at start-up, and every request and tool call leaves one
 * line on stderr — never a body or a key.
 */

const OPENAI_KEY = "sk-serve-log-0123456789abcdef"
const ACCESS_KEY = "access-key-for-the-log-test-42"
const MESSAGE = "what is the weather in Kyoto-Q7?"
const TOOL_OUTPUT = "clear-skies-Z9"

const { children, replays } = serveChildren()

const serve = async (args: ReadonlyArray<string>, env: Readonly<Record<string, string>>): Promise<{ cli: CliProcess; url: string }> => {
  const cli = startCli(["serve", "--port", "0", ...args], env)
  children.push(cli)
  await cli.waitFor(READY)
  const [, port] = READY.exec(cli.stdout()) ?? []
  return { cli, url: `http://127.0.0.1:${port}` }
}

const replay = async (script: Parameters<typeof startReplayProvider>[0]["script"]): Promise<ReplayProvider> => {
  const provider = await startReplayProvider({ scheme: "openai-chat", script })
  replays.push(provider)
  return provider
}

const modelOf = (request: { readonly body: string }): unknown => (JSON.parse(request.body) as { model?: unknown }).model

/** Waits until stderr has a line matching `pattern` (the log is written after the answer is sent). */
const stderrLine = async (cli: CliProcess, pattern: RegExp, ms = 10_000): Promise<string> => {
  const until = Date.now() + ms
  for (;;) {
    const found = cli.stderr().split("\n").find((line) => pattern.test(line))
    if (found !== undefined) return found
    if (Date.now() > until) throw new Error(`no stderr line matching ${String(pattern)}; stderr:\n${cli.stderr()}`)
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
}

const requestLines = (text: string): Array<string> => text.split("\n").filter((line) => /^llm-worker host: (GET|POST|DELETE|PUT) |^llm-worker host: tool /.test(line))

describe("llm-worker serve: defaults as for chat, roles that cannot chat named at start-up", () => {
  it("with only OPENAI_API_KEY (no config file) the default role chats, on the model `llm-worker chat` picks", async () => {
    const forServe = await replay([reply().text("served answer")])
    const { cli, url } = await serve([], { OPENAI_API_KEY: OPENAI_KEY, OPENAI_BASE_URL: forServe.baseUrl })
    const health = await api({ url }, "GET", "/api/health")
    expect(health.body).toMatchObject({ ok: true, roles: ["default"], roles_without_model: [] })
    const chat = await api({ url }, "POST", "/api/chat", { message: "hello" })
    expect(chat.status).toBe(200)
    expect(chat.body).toMatchObject({ ok: true, role: "default", text: "served answer" })

    const forChat = await replay([reply().text("chat answer")])
    const chatRun = await runCli(["chat"], { OPENAI_API_KEY: OPENAI_KEY, OPENAI_BASE_URL: forChat.baseUrl }, "hello\n")
    expect(chatRun.code).toBe(0)
    expect(forChat.requests).toHaveLength(1)
    expect(forServe.requests).toHaveLength(1)
    expect(modelOf(forServe.requests[0]!)).toBe(modelOf(forChat.requests[0]!))
    expect(cli.stderr()).not.toMatch(/cannot chat/)
  })

  it("a role without a provider, or without its key, is named on stderr before any request, and health lists it", async () => {
    const config = configFile(["roles:", "  writer:", "    provider: anthropic", "  tools_only: {}", "default_role: writer", ""].join("\n"))
    const { cli, url } = await serve(["--config", config], {})
    // Before the first request: the lines are there once the ready line is.
    const lines = cli.stderr().split("\n")
    expect(lines).toContain(
      'llm-worker host: role "writer" cannot chat: no API key for anthropic: set ANTHROPIC_API_KEY (tools can still be registered; POST /api/chat answers 503 until it is configured)'
    )
    expect(lines.find((line) => line.startsWith('llm-worker host: role "tools_only" cannot chat: no provider configured'))).toBeDefined()
    const health = await api({ url }, "GET", "/api/health")
    expect(health.body["roles_without_model"]).toEqual([
      { role: "writer", problem: "no API key for anthropic: set ANTHROPIC_API_KEY" },
      { role: "tools_only", problem: expect.stringMatching(/^no provider configured: set provider in the role, LLM_WORKER_PROVIDER, or an API key/) }
    ])
    // Tools still register in a role that cannot chat; its chat is a 503 with the same reason, and the log says so.
    const plugin = await startCallbackServer((_req, res) => json(res, 200, { output: "x" }))
    expect((await api({ url }, "POST", "/api/tools/register", weatherTool(plugin.url))).status).toBe(200)
    const chat = await api({ url }, "POST", "/api/chat", { message: MESSAGE })
    expect(chat.status).toBe(503)
    expect(await stderrLine(cli, /^llm-worker host: POST \/api\/chat 503 /)).toMatch(
      /^llm-worker host: POST \/api\/chat 503 \d+ms - role "writer" has no model: no API key for anthropic: set ANTHROPIC_API_KEY$/
    )
  })
})

describe("llm-worker serve: the request log on stderr", () => {
  /** A host with an access key, a replayed model calling a plugin's tool, and everything a log must not show. */
  const scenario = async (flags: ReadonlyArray<string>, toolFails = false) => {
    const provider = await replay([reply().toolCall("get_weather", { city: "Kyoto-Q7" }), reply().text("It is clear.")])
    const plugin = await startCallbackServer((_req, res) =>
      json(res, 200, toolFails ? { is_error: true, error: "station offline" } : { output: TOOL_OUTPUT })
    )
    const config = configFile(["server:", "  access_key_env: LOG_TEST_ACCESS_KEY", "roles:", "  小八:", "    provider: openai", "    model: gpt-test", ""].join("\n"))
    const { cli, url } = await serve(["--config", config, ...flags], { OPENAI_API_KEY: OPENAI_KEY, OPENAI_BASE_URL: provider.baseUrl, LOG_TEST_ACCESS_KEY: ACCESS_KEY })
    const headers = { "x-llm-worker-access-key": ACCESS_KEY }
    expect((await api({ url }, "GET", "/api/health", undefined, headers)).status).toBe(200)
    expect((await api({ url }, "POST", "/api/tools/register", weatherTool(plugin.url), headers)).status).toBe(200)
    const chat = await api({ url }, "POST", "/api/chat", { message: MESSAGE }, headers)
    expect(chat.status).toBe(200)
    expect((await api({ url }, "GET", `/api/nothing-here?key=${ACCESS_KEY}`, undefined, headers)).status).toBe(404)
    expect((await api({ url }, "GET", "/api/tools")).status).toBe(403) // no access key
    return { cli, url, headers }
  }

  const neverLeaks = (stderr: string): void => {
    for (const secret of [OPENAI_KEY, ACCESS_KEY, MESSAGE, "Kyoto-Q7", TOOL_OUTPUT, "It is clear."]) expect(stderr, `stderr shows ${secret}`).not.toContain(secret)
  }

  it("by default: one line per request (method, path, status, duration) and per tool call (tool, role, status, duration), no health checks, no body, no key", async () => {
    const { cli } = await scenario([])
    await stderrLine(cli, /GET \/api\/tools 403/)
    const lines = requestLines(cli.stderr())
    expect(lines).toEqual([
      expect.stringMatching(/^llm-worker host: POST \/api\/tools\/register 200 \d+ms$/),
      expect.stringMatching(/^llm-worker host: tool get_weather role "小八" ok \d+ms$/),
      expect.stringMatching(/^llm-worker host: POST \/api\/chat 200 \d+ms$/),
      expect.stringMatching(/^llm-worker host: GET \/api\/nothing-here 404 \d+ms$/),
      expect.stringMatching(/^llm-worker host: GET \/api\/tools 403 \d+ms$/)
    ])
    neverLeaks(cli.stderr())
    expect(cli.stdout().split("\n").filter((line) => line !== "")).toHaveLength(1) // the ready line alone
  })

  it("a streamed chat is logged when its stream ends", async () => {
    const { cli, url, headers } = await scenario([])
    const response = await fetch(`${url}/api/chat`, { method: "POST", headers: { ...headers, "content-type": "application/json", accept: "text/event-stream" }, body: JSON.stringify({ message: MESSAGE }) })
    expect(response.status).toBe(200)
    expect(await response.text()).toContain("event: result")
    expect(await stderrLine(cli, /POST \/api\/chat 200 .*stream/)).toMatch(/^llm-worker host: POST \/api\/chat 200 \d+ms \(stream\)$/)
    neverLeaks(cli.stderr())
  })

  it("--verbose adds health checks, the role, the body size, the tool's source and call id, and error texts — still no key or body", async () => {
    const { cli } = await scenario(["--verbose"], true)
    await stderrLine(cli, /GET \/api\/tools 403/)
    const lines = requestLines(cli.stderr())
    expect(lines).toEqual([
      expect.stringMatching(/^llm-worker host: GET \/api\/health 200 \d+ms$/),
      expect.stringMatching(/^llm-worker host: POST \/api\/tools\/register 200 \d+ms \(\d+ bytes in\)$/),
      expect.stringMatching(/^llm-worker host: tool get_weather role "小八" error \d+ms \(source "my_plugin", call call_\w+\) - .*station offline/),
      expect.stringMatching(/^llm-worker host: POST \/api\/chat 200 \d+ms \(role "小八", \d+ bytes in\)$/),
      expect.stringMatching(/^llm-worker host: GET \/api\/nothing-here 404 \d+ms - no such endpoint: GET \/api\/nothing-here$/),
      expect.stringMatching(/^llm-worker host: GET \/api\/tools 403 \d+ms - missing or wrong x-llm-worker-access-key$/)
    ])
    neverLeaks(cli.stderr())
  })

  it("--quiet writes no request log, but still names a role that cannot chat", async () => {
    const { cli } = await scenario(["--quiet"])
    expect(requestLines(cli.stderr())).toEqual([])
    const config = configFile("roles:\n  lonely: {}\n")
    const quiet = await serve(["--config", config, "--quiet"], {})
    expect(quiet.cli.stderr()).toMatch(/^llm-worker host: role "lonely" cannot chat: no provider configured/m)
    expect((await api({ url: quiet.url }, "GET", "/api/nothing")).status).toBe(404)
    expect(requestLines(quiet.cli.stderr())).toEqual([])
  })

  it("server.request_log in the config sets the level; the flags override it, and both flags at once are refused", async () => {
    const config = configFile("server:\n  request_log: quiet\nroles:\n  r: {}\n")
    const fromConfig = await serve(["--config", config], {})
    expect((await api({ url: fromConfig.url }, "GET", "/api/nothing")).status).toBe(404)
    const overridden = await serve(["--config", config, "--verbose"], {})
    expect((await api({ url: overridden.url }, "GET", "/api/health")).status).toBe(200)
    await stderrLine(overridden.cli, /^llm-worker host: GET \/api\/health 200 \d+ms$/)
    expect(requestLines(fromConfig.cli.stderr())).toEqual([])
    const both = await runCli(["serve", "--port", "0", "--verbose", "--quiet"])
    expect(both.code).toBe(2)
    expect(both.stderr).toMatch(/--verbose and --quiet/)
    const wrong = await runCli(["serve", "--port", "0", "--config", configFile("server:\n  request_log: loud\n")])
    expect(wrong.code).toBe(2)
    expect(wrong.stderr).toMatch(/server\.request_log/)
  })
})
