import { readFileSync } from "node:fs"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { checkCallbackUrl, MAX_CALLBACK_URL_CHARS } from "../../src/remote/index.ts"
import { GOOD_CALLBACK_URLS, HOSTILE_CALLBACK_URLS } from "./fixtures/callback-urls.ts"

const LOOPBACK_HOSTNAME = /^(localhost|\[::1\]|127\.\d{1,3}\.\d{1,3}\.\d{1,3})$/

describe("callback URL gate", () => {
  it.each(HOSTILE_CALLBACK_URLS)("refuses %j (%s)", (url) => {
    const check = checkCallbackUrl(url)
    expect(check.ok).toBe(false)
    if (!check.ok) expect(check.reason).toMatch(/^(is|contains|scheme|must|host|has|port) /)
  })

  it.each(GOOD_CALLBACK_URLS)("accepts %j", (url) => {
    const check = checkCallbackUrl(url)
    expect(check).toMatchObject({ ok: true })
    if (check.ok) expect(check.url.hostname).toMatch(LOOPBACK_HOSTNAME)
  })

  it("refuses overlong URLs", () => {
    expect(checkCallbackUrl(`http://127.0.0.1/${"a".repeat(MAX_CALLBACK_URL_CHARS)}`)).toMatchObject({ ok: false })
  })

  it("never accepts a URL whose parsed host is not loopback, whatever the text (property)", () => {
    const pieces = fc.constantFrom("http://", "https://", "HTTP://", "http:", "//", "@", ":", "/", "#", "?", "%2e", "%31", ".", "[", "]", "::1", "::ffff:", "127", "0", "0x7f", "1", "localhost", "evil", "\\", "9876", "00", "65536")
    fc.assert(
      fc.property(fc.array(pieces, { maxLength: 12 }), fc.webUrl(), (parts, web) => {
        for (const candidate of [parts.join(""), web, `http://${parts.join("")}`]) {
          const check = checkCallbackUrl(candidate)
          if (check.ok) expect(new URL(candidate).hostname).toMatch(LOOPBACK_HOSTNAME)
        }
      }),
      { numRuns: 2000 }
    )
  })

  it("docs/security.md lists every hostile URL tested", () => {
    const doc = readFileSync(new URL("../../docs/security.md", import.meta.url), "utf8")
    const missing = HOSTILE_CALLBACK_URLS.filter(([url]) => url !== "" && !doc.includes(`\`${JSON.stringify(url).slice(1, -1)}\``))
    expect(missing).toEqual([])
  })
})
