import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import fc from "fast-check"
import { afterEach, describe, expect, it } from "vitest"
import { createRemotePluginLlm } from "../../src/plugin-llm/index.ts"
import { type ReplayProvider, startReplayProvider } from "../../src/testing/index.ts"
import { startCli, type CliProcess } from "../cli/cli-process.ts"
import { type ErrorScheme, leaks, type Placement, placementArbitrary, transcriptWithKey } from "../support/key-in-provider-errors.ts"

const READY = /llm-worker host listening on (http:\/\/127\.0\.0\.1:\d+) \(instance [0-9a-f]+\)\n/

const children: Array<CliProcess> = []
const replays: Array<ReplayProvider> = []
afterEach(async () => {
  for (const child of children.splice(0)) if (child.child.exitCode === null) child.child.kill("SIGKILL")
  await Promise.all(replays.splice(0).map((r) => r.close()))
})

const SCHEMES: ReadonlyArray<ErrorScheme> = ["openai-chat", "openai-responses", "anthropic", "gemini"]
const PROVIDER: Readonly<Record<ErrorScheme, string>> = { "openai-chat": "openai", "openai-responses": "openai-responses", anthropic: "anthropic", gemini: "gemini" }
const ROLE: Readonly<Record<ErrorScheme, string>> = { "openai-chat": "chat", "openai-responses": "responses", anthropic: "claude", gemini: "gemini" }

// One key per provider variable, each in the base64 alphabet (so JSON and URL spellings differ from the raw one).
const KEYS = {
  OPENAI_API_KEY: "sk-proj-T3BlbkFJ+a/b=c_d-e0123456789abcdef",
  ANTHROPIC_API_KEY: "sk-ant-api03-Zm9v/YmFy+YmF6=qux_0123456789",
  GEMINI_API_KEY: "AIzaSyD-0123456789/abcdef+ghijkl=mnop"
} as const
const KEY_OF: Readonly<Record<ErrorScheme, string>> = {
  "openai-chat": KEYS.OPENAI_API_KEY,
  "openai-responses": KEYS.OPENAI_API_KEY,
  anthropic: KEYS.ANTHROPIC_API_KEY,
  gemini: KEYS.GEMINI_API_KEY
}

const anyLeak = (text: string): boolean => Object.values(KEYS).some((key) => leaks(text, key))

describe("llm-worker serve (a child process): a provider's error event carrying the API key", () => {
  it("property over where each provider puts it: never in the HTTP body a remote plugin gets, its typed error, a chat answer or the host's stderr", async () => {
    // The placements are drawn first: each provider's replay plays them in order, one per request.
    const placements: Array<Placement> = [
      // The reported case first: the key as an OpenAI stream error's `code`.
      { scheme: "openai-chat", fixture: "error-mid-stream", place: 5, wrap: 0 },
      ...fc.sample(placementArbitrary(SCHEMES), { numRuns: 40, seed: 20 })
    ]
    const scripts = new Map<ErrorScheme, Array<{ kind: "stream"; transcript: string }>>()
    for (const placement of placements) {
      const script = scripts.get(placement.scheme) ?? []
      script.push({ kind: "stream", transcript: transcriptWithKey(placement, KEY_OF[placement.scheme]) })
      scripts.set(placement.scheme, script)
    }
    const servers = new Map<ErrorScheme, ReplayProvider>()
    for (const scheme of SCHEMES) {
      const server = await startReplayProvider({ scheme, script: scripts.get(scheme) ?? [{ kind: "stream", transcript: transcriptWithKey({ scheme, fixture: "error-mid-stream", place: 0, wrap: 0 }, KEY_OF[scheme]) }] })
      replays.push(server)
      servers.set(scheme, server)
    }
    const roles = SCHEMES.flatMap((scheme) => [
      `  ${ROLE[scheme]}:`,
      `    provider: ${PROVIDER[scheme]}`,
      "    model: replay-model",
      `    base_url: ${(servers.get(scheme) as ReplayProvider).baseUrl}`
    ])
    const config = [
      "roles:",
      ...roles,
      "default_role: chat",
      "plugins:",
      "  entries:",
      "    remote-x:",
      "      llm:",
      "        allow_agent_id_override: true",
      "llm:",
      "  max_retries: 0",
      ""
    ].join("\n")
    const dir = mkdtempSync(join(tmpdir(), "llm-worker-redaction-"))
    const path = join(dir, "llm-worker.yaml")
    writeFileSync(path, config)
    const serve = startCli(["serve", "--config", path, "--port", "0"], KEYS)
    children.push(serve)
    await serve.waitFor(READY)
    const url = (READY.exec(serve.stdout()) as RegExpExecArray)[1] as string

    const registered = await fetch(`${url}/api/tools/register`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name: "note", callback_url: "http://127.0.0.1:9/tool_invoke", source: "remote-x" })
    })
    const token = ((await registered.json()) as { registrant_token: string }).registrant_token

    const bodies: Array<string> = []
    for (const placement of placements) {
      const answer = await fetch(`${url}/api/llm/complete`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-llm-worker-registrant-token": token },
        body: JSON.stringify({ messages: [{ role: "user", content: "hi" }], agent_id: ROLE[placement.scheme] })
      })
      const text = await answer.text()
      bodies.push(text)
      expect(anyLeak(text), `${JSON.stringify(placement)}: ${text}`).toBe(false)
    }
    // The reported case: a 502 naming a provider error, the key shown as ***.
    expect(JSON.parse(bodies[0] as string)).toMatchObject({
      ok: false,
      error_type: "PluginLlmProviderUnavailable",
      error: 'no route answered (openai/replay-model: provider error "***")',
      hops: [{ reason: "provider_error", message: 'provider error "***"' }]
    })

    // The same lane as a remote plugin sees it: a typed error without the key.
    const lane = createRemotePluginLlm({ baseUrl: url, registrantToken: token })
    const error = await lane.complete({ messages: [{ role: "user", content: "hi" }] }).catch((e: unknown) => e)
    expect(error).toMatchObject({ _tag: "PluginLlmProviderUnavailable" })
    expect(anyLeak(`${String(error)} ${JSON.stringify(error)} ${(error as Error).stack}`)).toBe(false)

    // A chat turn of the default role fails on the same stream: its 502 and its SSE failure event are clean too.
    const chat = await fetch(`${url}/api/chat`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ message: "hi" }) })
    const chatText = await chat.text()
    expect(chat.status).toBe(502)
    expect(anyLeak(chatText), chatText).toBe(false)
    const streamed = await fetch(`${url}/api/chat`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "text/event-stream" },
      body: JSON.stringify({ message: "hi" })
    })
    const streamedText = await streamed.text()
    expect(streamedText).toContain("event: failure")
    expect(anyLeak(streamedText), streamedText).toBe(false)

    serve.child.kill("SIGTERM")
    await serve.exited
    const stderr = serve.stderr()
    // Every lane call wrote its audit line; none holds a key.
    expect(stderr.match(/llm-worker plugin-llm audit /g)?.length).toBeGreaterThanOrEqual(placements.length)
    expect(anyLeak(stderr), stderr).toBe(false)
  }, 120_000)
})
