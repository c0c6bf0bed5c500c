import { readdirSync, readFileSync } from "node:fs"
import { join, relative } from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { createLlmClient, Item } from "../../src/index.ts"
import type { SchemeName } from "../../src/index.ts"
import { reply, startReplayProvider } from "../../src/testing/index.ts"

/**
 * Browsers offer `crypto.randomUUID` only in secure contexts (HTTPS, localhost); a page served over plain http
 * has `crypto.getRandomValues` but no `randomUUID`. Every id the library makes up goes through
 * `src/llm/random-uuid.ts`, which falls back to random bytes.
 */

const PROVIDERS: Readonly<Record<SchemeName, string>> = { "openai-chat": "openai", "openai-responses": "openai-responses", anthropic: "anthropic", gemini: "gemini" }

const withoutRandomUuid = (): (() => void) => {
  const webCrypto = globalThis.crypto
  const own = Object.getOwnPropertyDescriptor(webCrypto, "randomUUID")
  Object.defineProperty(webCrypto, "randomUUID", { value: undefined, configurable: true, writable: true })
  return () => {
    if (own === undefined) delete (webCrypto as { randomUUID?: unknown }).randomUUID
    else Object.defineProperty(webCrypto, "randomUUID", own)
  }
}

let restore: (() => void) | undefined
afterEach(() => {
  restore?.()
  restore = undefined
})

describe("without crypto.randomUUID (a plain-http page)", () => {
  it.each(Object.keys(PROVIDERS) as Array<SchemeName>)("%s: a stream decodes, and calls without an id get made-up ones", async (scheme) => {
    const replay = await startReplayProvider({ scheme, script: [reply().text("Checking.").toolCall("get_weather", { city: "Oslo" })] })
    try {
      const client = createLlmClient({ provider: PROVIDERS[scheme], model: "m", apiKey: "test", baseUrl: replay.baseUrl, retry: { maxRetries: 0 } })
      restore = withoutRandomUuid()
      expect(globalThis.crypto.randomUUID).toBeUndefined()
      const ids: Array<string> = []
      for await (const event of client.stream({ model: "m", items: [Item.userText("Weather?")], tools: [], config: {} })) {
        if (event.type === "block_start" && event.block.kind === "tool_use") ids.push(event.block.id)
      }
      expect(ids).toHaveLength(1)
      expect(ids[0]).toMatch(/\S/)
    } finally {
      restore?.()
      restore = undefined
      await replay.close()
    }
  })

  it("no module but the helper calls crypto.randomUUID", () => {
    const root = join(import.meta.dirname, "../../src")
    const files = (readdirSync(root, { recursive: true }) as Array<string>).filter((file) => /\.[cm]?tsx?$/.test(file))
    const offenders = files
      .filter((file) => relative(root, join(root, file)) !== join("llm", "random-uuid.ts"))
      .filter((file) => /\brandomUUID\b/.test(readFileSync(join(root, file), "utf8")))
    expect(offenders).toEqual([])
  })
})
