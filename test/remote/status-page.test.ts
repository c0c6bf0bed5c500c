import { existsSync } from "node:fs"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import type { Browser } from "playwright-core"
import { type ReplayProvider, startReplayProvider } from "../../src/testing/index.ts"
import { api, chatText, chatToolCall, closeAll, startCallbackServer, startHost, weatherTool } from "./support/host.ts"

/** Debian's chromium; CI installs it (`apt-get install -y chromium`). */
const CHROMIUM = "/usr/bin/chromium"
const haveChromium = existsSync(CHROMIUM)
if (!haveChromium) console.warn(`status page test skipped: ${CHROMIUM} is missing (apt-get install -y chromium)`)

let browser: Browser | undefined
const replays: Array<ReplayProvider> = []

beforeAll(async () => {
  if (!haveChromium) return
  const { chromium } = await import("playwright-core")
  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ["--no-sandbox"] })
}, 60_000)
afterAll(async () => {
  await browser?.close()
})
afterEach(async () => {
  await closeAll()
  await Promise.all(replays.splice(0).map((r) => r.close()))
})

describe.skipIf(!haveChromium)("status page in headless chromium", () => {
  it("shows each role's tools, the instance id and the OpenAPI link; everything untrusted is escaped", async () => {
    const hostileRole = `<b id="injected">猫</b>`
    const hostileSource = `<script>window.pwned = 1</script>`
    const provider = await startReplayProvider({
      scheme: "openai-chat",
      script: [
        { kind: "stream", transcript: chatToolCall("get_weather", '{"city":"Paris"}') },
        { kind: "stream", transcript: chatText("failed") }
      ]
    })
    replays.push(provider)
    const plugin = await startCallbackServer((_req, res) => {
      res.writeHead(500, { "content-type": "text/html" })
      res.end(`<img src=x onerror="window.pwned = 2">`)
    })
    const host = await startHost({
      config: { roles: { [hostileRole]: { provider: "openai", model: "gpt-test" }, plain: { provider: "openai", model: "gpt-test", cache_lock: true } } },
      env: { OPENAI_API_KEY: "k", OPENAI_BASE_URL: provider.baseUrl }
    })
    await api(host, "POST", "/api/tools/register", weatherTool(plugin.url, { source: hostileSource, role: hostileRole, timeout_seconds: 12 }))
    await api(host, "POST", "/api/tools/register", weatherTool(plugin.url, { name: "lookup", source: "other", role: null }))
    await api(host, "POST", "/api/chat", { role: hostileRole, message: "weather?" })

    const page = await (browser as Browser).newPage()
    const dialogs: Array<string> = []
    page.on("dialog", (dialog) => {
      dialogs.push(dialog.message())
      void dialog.dismiss()
    })
    const response = await page.goto(`${host.url}/`)
    expect(response?.status()).toBe(200)
    expect(response?.headers()["content-security-policy"]).toContain("default-src 'none'")
    expect(await page.title()).toBe("llm-worker tool host")
    expect(await page.locator("#instance").textContent()).toBe(host.instanceId)

    const roles = await page.locator("section.role h2").allTextContents()
    expect(roles).toEqual([hostileRole, "plain"].map((r) => expect.stringContaining(r)))
    expect(await page.locator("#injected").count()).toBe(0)

    const hostileSection = page.locator("section.role").first()
    const row = hostileSection.locator('tr[data-tool="get_weather"] td')
    const cells = await row.allTextContents()
    expect(cells.slice(0, 7)).toEqual(["get_weather", hostileSource, "unclaimed", "12 s", `127.0.0.1:${plugin.port}`, "1", "1"])
    expect(cells[7]).toContain(`answered HTTP 500`)
    expect(cells[7]).toContain(`<img src=x`)
    expect(cells[8]).toBe("active")
    expect(await page.locator("img").count()).toBe(0)
    expect(await page.locator("script").count()).toBe(0)
    expect(await page.evaluate("typeof window.pwned")).toBe("undefined")
    expect(dialogs).toEqual([])

    const plain = page.locator('section.role[data-role="plain"]')
    expect(await plain.locator(".flags").textContent()).toContain("cache-locked")
    expect(await plain.locator("tbody tr").allTextContents()).toEqual([expect.stringContaining("lookup")])

    await page.getByRole("link", { name: "OpenAPI document" }).click()
    const document = JSON.parse((await page.locator("body").textContent()) ?? "{}") as { openapi?: string; paths?: Record<string, unknown> }
    expect(document.openapi).toBe("3.1.0")
    expect(Object.keys(document.paths ?? {})).toEqual(expect.arrayContaining(["/api/tools/register", "/api/chat"]))
    await page.close()
  }, 60_000)
})
