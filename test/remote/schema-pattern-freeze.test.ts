import { describe, expect, it } from "vitest"
import { startReplayProvider } from "../../src/testing/index.ts"
import { answerSse } from "../support/answer-sse.ts"
import { startCli } from "../cli/cli-process.ts"
import { api, chatText, chatToolCall, json, startCallbackServer } from "./support/host.ts"
import { READY, configFile, serveChildren } from "./support/serve-children.ts"

const TOKEN_HEADER = "x-llm-worker-registrant-token"
/**
 * The issue's pattern and value, with more `a`s: against a backtracking RegExp 27 took 4–7 s and each one more
 * doubles it, so the unfixed host would not answer anything for hours; the linear-time engine takes microseconds.
 */
const PATTERN = "^(a+)+$"
const HOSTILE = `${"a".repeat(40)}!`
/** Far above what a health check takes on a busy machine, far below the unfixed code's freeze. */
const HEALTH_DEADLINE_MS = 3000

const { children, replays } = serveChildren()

const serveWith = async (script: Parameters<typeof startReplayProvider>[0]["script"]) => {
  const provider = await startReplayProvider({ scheme: "openai-chat", script })
  replays.push(provider)
  const config = configFile("roles:\n  default:\n    provider: openai\n    model: gpt-4.1-mini\n")
  const serve = startCli(["serve", "--config", config, "--port", "0"], { OPENAI_API_KEY: "test-key", OPENAI_BASE_URL: provider.baseUrl })
  children.push(serve)
  await serve.waitFor(READY)
  const [, port] = READY.exec(serve.stdout()) ?? []
  return { provider, host: { url: `http://127.0.0.1:${port}` } }
}

/**
 * Runs `attack` while asking for /api/health again and again until it settles; each health check must answer
 * within the deadline (a frozen event loop answers none). Resolves to the attack's answer and the checks made.
 */
const whileHealthy = async <A>(host: { readonly url: string }, attack: Promise<A>): Promise<{ readonly answer: A; readonly checks: number }> => {
  let settled = false
  const done = attack.finally(() => {
    settled = true
  })
  let checks = 0
  const probe = async (): Promise<void> => {
    while (!settled) {
      const response = await fetch(`${host.url}/api/health`, { signal: AbortSignal.timeout(HEALTH_DEADLINE_MS) }).catch((thrown: unknown) => {
        throw new Error(`GET /api/health did not answer within ${HEALTH_DEADLINE_MS} ms while the hostile value was checked`, { cause: thrown })
      })
      expect(response.status).toBe(200)
      await response.arrayBuffer()
      checks++
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
  }
  const [answer] = await Promise.all([done, probe()])
  return { answer, checks }
}

describe("a schema pattern cannot freeze `llm-worker serve` (a child process)", () => {
  it("a remote tool's `^(a+)+$` against the model's 40 × a and !: health answers throughout, the model gets an argument error; a lookahead is refused at registration", async () => {
    const { provider, host } = await serveWith([
      { kind: "stream", transcript: chatToolCall("match_a", JSON.stringify({ s: HOSTILE })) },
      { kind: "stream", transcript: chatText("The value was refused.") }
    ])
    const plugin = await startCallbackServer((_req, res) => json(res, 200, { output: "matched" }))
    const registered = await api(host, "POST", "/api/tools/register", {
      name: "match_a",
      description: "Takes a run of a",
      parameters: { type: "object", properties: { s: { type: "string", pattern: PATTERN } }, required: ["s"] },
      callback_url: plugin.url,
      source: "hostile-plugin"
    })
    expect(registered.body).toMatchObject({ ok: true })

    const { answer: chat, checks } = await whileHealthy(host, api(host, "POST", "/api/chat", { message: "go" }))
    expect(checks).toBeGreaterThan(0)
    expect(chat.body).toMatchObject({ ok: true, text: "The value was refused.", tool_calls: [{ name: "match_a", status: "error" }] })
    // The model reads which rule the value broke; the plugin is never called with it.
    const sentBack = provider.requests[1]?.body ?? ""
    expect(sentBack).toContain("expected a string matching ^(a+)+$")
    expect(plugin.calls).toHaveLength(0)

    // A pattern the linear-time engine cannot run is refused at registration, naming it.
    const refused = await api(host, "POST", "/api/tools/register", {
      name: "lookahead",
      parameters: { type: "object", properties: { s: { type: "string", pattern: "^(?=a)(a+)+$" } } },
      callback_url: plugin.url,
      source: "hostile-plugin"
    })
    expect(refused).toMatchObject({ status: 422, body: { ok: false } })
    expect(JSON.stringify(refused.body)).toContain("lookahead ((?=…) or (?!…)) is not supported by the linear-time engine")
    // A pattern too large to parse (8,000 nested groups; 64 KiB of pattern) is refused by its size, before any parser.
    for (const [pattern, said] of [[`${"(".repeat(8_000)}a${")".repeat(8_000)}`, "nest deeper than 100 levels"], ["a".repeat(65_536), "at most 16384 are read"]] as const) {
      const tooLarge = await api(host, "POST", "/api/tools/register", {
        name: "too_large",
        parameters: { type: "object", properties: { s: { type: "string", pattern } } },
        callback_url: plugin.url,
        source: "hostile-plugin"
      }, {})
      expect(tooLarge.status).toBe(422)
      expect(JSON.stringify(tooLarge.body)).toContain(said)
      expect(JSON.stringify(tooLarge.body)).not.toContain("Maximum call stack")
    }
    const tools = (await api(host, "GET", "/api/tools")).body as { roles: { default: ReadonlyArray<{ name: string }> } }
    expect(tools.roles.default.map((t) => t.name)).toEqual(["match_a"])
  })

  it("POST /api/llm/complete-structured with that pattern and the model's hostile answer: health answers throughout, the answer is refused", async () => {
    const { provider, host } = await serveWith([{ kind: "stream", transcript: answerSse("openai-chat", JSON.stringify({ s: HOSTILE })) }])
    const plugin = await startCallbackServer((_req, res) => json(res, 200, { output: "x" }))
    const registered = await api(host, "POST", "/api/tools/register", { name: "any_tool", callback_url: plugin.url, source: "hostile-plugin" })
    const token = registered.body["registrant_token"] as string
    const ask = {
      instructions: "Give a run of a.",
      input: [{ type: "text", text: "a" }],
      json_schema: { type: "object", properties: { s: { type: "string", pattern: PATTERN } }, required: ["s"] }
    }
    const { answer: structured, checks } = await whileHealthy(host, api(host, "POST", "/api/llm/complete-structured", ask, { [TOKEN_HEADER]: token }))
    expect(checks).toBeGreaterThan(0)
    expect(structured).toMatchObject({ status: 200, body: { ok: true, content_type: "text", parsed: null, issues: [{ path: ["s"] }] } })
    expect(JSON.stringify(structured.body)).toContain("expected a string matching ^(a+)+$")
    expect(provider.requests).toHaveLength(1)

    // A pattern the linear-time engine cannot run: refused before any provider request.
    const lookbehind = await api(host, "POST", "/api/llm/complete-structured", { ...ask, json_schema: { type: "object", properties: { s: { type: "string", pattern: "(?<=a)b" } } } }, { [TOKEN_HEADER]: token })
    expect(lookbehind).toMatchObject({ status: 422, body: { ok: false } })
    expect(lookbehind.body.error).toContain("lookbehind ((?<=…) or (?<!…)) is not supported by the linear-time engine")
    expect(provider.requests).toHaveLength(1)
  })
})
