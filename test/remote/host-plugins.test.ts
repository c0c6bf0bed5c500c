import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, relative } from "node:path"
import { fileURLToPath } from "node:url"
import { afterEach, describe, expect, it } from "vitest"
import { z } from "zod"
import { defineTool } from "../../src/index.ts"
import { HostConfigError } from "../../src/remote/index.ts"
import { api, closeAll, startHost } from "./support/host.ts"

const FIXTURES = fileURLToPath(new URL("./fixtures/", import.meta.url))
const wordCount = { plugins: { entries: { "word-count": { module: "word-count-plugin.ts" } } } }

afterEach(closeAll)

const refusal = async (promise: Promise<unknown>): Promise<HostConfigError> => {
  const thrown = await promise.then(() => undefined, (error: unknown) => error)
  expect(thrown).toBeInstanceOf(HostConfigError)
  return thrown as HostConfigError
}

describe("the host's plugin layer (in process)", () => {
  it("resolves module paths from the config file's folder and lists the plugin on the status page", async () => {
    const dir = mkdtempSync(join(tmpdir(), "llm-worker-host-plugins-"))
    const path = join(dir, "llm-worker.yaml")
    writeFileSync(path, `plugins:\n  entries:\n    word-count:\n      module: ${JSON.stringify(relative(dir, join(FIXTURES, "word-count-plugin.ts")))}\n`)
    const host = await startHost({ configPath: path })
    expect(host.plugins.map((p) => [p.id, p.version])).toEqual([["word-count", "0.1.0"]])
    const page = await (await fetch(`${host.url}/`)).text()
    expect(page).toMatch(/<tr data-plugin="word-count"><td>word-count<\/td><td>0\.1\.0<\/td><td>Counts words\.<\/td><td>\/stall \/wc<\/td><td>0<\/td><td>0<\/td><\/tr>/)
    expect(page).toContain('<tr data-tool="count_words"><td>count_words</td><td>word-count</td><td>plugin</td>')
  })

  it("a config the plugin layer refuses is a startup error listing every issue", async () => {
    const error = await refusal(
      startHost({
        config: { plugins: { entries: { tldr: { llm: { allow_model_override: "yes", allowed_models: "gpt-4.1" } } } }, llm: { timeout: -1 } }
      })
    )
    expect(error.issues.map((i) => i.path)).toEqual(["plugins.entries.tldr.llm.allowed_models", "plugins.entries.tldr.llm.allow_model_override", "llm.timeout"])
    const missing = await refusal(startHost({ config: { plugins: { entries: { ghost: { module: "no-such-plugin.ts" } } } }, pluginBaseDir: FIXTURES }))
    expect(missing.issues).toEqual([{ path: "plugins", message: expect.stringContaining("no-such-plugin.ts") }])
  })

  it("a plugin tool whose name a built-in tool holds is a startup error, not a silently missing tool", async () => {
    const builtin = defineTool({ name: "count_words", description: "host's", parameters: z.object({}), execute: () => "0" })
    const error = await refusal(startHost({ config: wordCount, pluginBaseDir: FIXTURES, builtinTools: [builtin] }))
    expect(error.message).toContain('plugin "word-count": tool "count_words" is already held by source "builtin"')
  })

  it("keeps the host's gates in front of the lane: access key, body limit, closed bodies", async () => {
    const key = "k".repeat(32)
    const operator = "o".repeat(32)
    const host = await startHost({ config: { ...wordCount, server: { access_key_env: "HOST_KEY", operator_token_env: "HOST_OPERATOR", max_body_bytes: 1024 } }, env: { HOST_KEY: key, HOST_OPERATOR: operator }, pluginBaseDir: FIXTURES })
    expect(await api(host, "POST", "/api/commands/wc", { args: "a b" }, { "x-llm-worker-operator-token": operator })).toMatchObject({ status: 403 })
    expect(await api(host, "POST", "/api/llm/complete", { messages: [] })).toMatchObject({ status: 403 })
    expect(await api(host, "POST", "/api/commands/wc", { args: "a b" }, { "x-llm-worker-access-key": key })).toMatchObject({ status: 401 })
    const auth = { "x-llm-worker-access-key": key, "x-llm-worker-operator-token": operator }
    expect(await api(host, "POST", "/api/commands/wc", { args: "a b" }, auth)).toMatchObject({ status: 200, body: { ok: true, output: "2 words", instance_id: host.instanceId } })
    expect(await api(host, "POST", "/api/commands/wc", { args: "a ".repeat(600) }, auth)).toMatchObject({ status: 413 })
    expect(await api(host, "POST", "/api/commands/wc", { args: "a", extra: 1 }, auth)).toMatchObject({ status: 422, body: { issues: [{ path: "extra", message: "unknown field" }] } })
    expect(await api(host, "POST", "/api/commands/wc", "args=a", { ...auth, "content-type": "application/x-www-form-urlencoded" })).toMatchObject({ status: 422 })
    expect(await api(host, "POST", "/api/llm/complete", { messages: [] }, auth)).toMatchObject({ status: 401 })
  })

  it("a default role without a provider still starts; its plugin calls fail as provider-unavailable, never with a key", async () => {
    const host = await startHost({ config: wordCount, pluginBaseDir: FIXTURES })
    const callback = "http://127.0.0.1:9/tool_invoke"
    const registered = await api(host, "POST", "/api/tools/register", { name: "note", callback_url: callback, source: "remote-x" })
    const token = registered.body["registrant_token"] as string
    const answer = await api(host, "POST", "/api/llm/complete", { messages: [{ role: "user", content: "hi" }] }, { "x-llm-worker-registrant-token": token })
    expect(answer).toMatchObject({ status: 502, body: { ok: false, error_type: "PluginLlmProviderUnavailable", hops: [{ reason: "config" }] } })
    expect(await api(host, "POST", "/api/chat", { message: "hi" })).toMatchObject({ status: 503 })
  })
})
