import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { failureText } from "../../src/cli/failure-text.ts"
import { redactUrl, redactUrls } from "../../src/redact/redact-url.ts"
import { LlmNetworkError } from "../../src/llm/llm-error.ts"
import { ClientFailed } from "../../src/worker/worker-error.ts"

describe("credentials in URLs", () => {
  it("hides userinfo and credential parameters, and nothing else", () => {
    expect(redactUrl("http://user:secret@host:8080/v1")).toBe("http://***@host:8080/v1")
    expect(redactUrl("https://token@github.com/a/b.git")).toBe("https://***@github.com/a/b.git")
    expect(redactUrl("http://u:p@ss@host/x")).toBe("http://***@host/x")
    expect(redactUrl("https://g.example/v1beta/m:stream?alt=sse&key=AIzaSECRET")).toBe("https://g.example/v1beta/m:stream?alt=sse&key=***")
    expect(redactUrl("https://h/x?api_key=1&Access_Token=2&client_secret=3&x-goog-api-key=4&sig=5&page=2#token=6")).toBe(
      "https://h/x?api_key=***&Access_Token=***&client_secret=***&x-goog-api-key=***&sig=***&page=2#token=***"
    )
    expect(redactUrl("https://h/x?api%5Fkey=1")).toBe("https://h/x?api%5Fkey=***")
    // An `@` after the host is not userinfo.
    expect(redactUrl("https://h/users/@me?email=a@b")).toBe("https://h/users/@me?email=a@b")
    expect(redactUrl("http://localhost:11434/v1")).toBe("http://localhost:11434/v1")
    // Not a valid URL, still redacted: the text is rewritten as written, never re-encoded.
    expect(redactUrl("http://user:se cret@[bad")).toBe("http://***@[bad")
  })

  it("redacts every URL inside a message and leaves the rest alone", () => {
    expect(
      redactUrls("Request cannot be constructed from a URL that includes credentials: http://user:secret@127.0.0.1:9/v1?key=abc/chat/completions")
    ).toBe("Request cannot be constructed from a URL that includes credentials: http://***@127.0.0.1:9/v1?key=***")
  })

  it("for any credentials, none of them is left in the text shown", () => {
    const secret = fc.stringMatching(/^[A-Za-z0-9._~!$&'()*+,;=:%-]{1,20}$/).map((text) => `S3CR3T${text}`)
    const name = fc.constantFrom("key", "api_key", "token", "access_token", "apiKey", "client_secret", "password")
    fc.assert(
      fc.property(secret, secret, name, fc.boolean(), (user, value, parameter, inText) => {
        const url = `https://${encodeURIComponent(user)}:${user.replace(/[/?#@]/g, "")}@api.example.com/v1/models?alt=sse&${parameter}=${encodeURIComponent(value)}`
        const shown = inText ? redactUrls(`error: HTTP 401 from ${url}: denied`) : redactUrl(url)
        expect(shown).not.toContain("S3CR3T")
        expect(shown).toContain("api.example.com/v1/models?alt=sse&")
      }),
      { numRuns: 500 }
    )
  })

  it("redacts an error line before shortening it, so a cut never leaves part of a secret", () => {
    const long = `${"x".repeat(280)} http://user:S3CR3TPASSWORD@host/v1`
    const error = new ClientFailed({ message: long, error: new LlmNetworkError({ message: long }) })
    expect(failureText(error)).not.toContain("S3CR3T")
  })
})
