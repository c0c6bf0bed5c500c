import fc from "fast-check"
import { afterEach, describe, expect, it } from "vitest"
import { type AuditRecord, createPluginLlm, SecretRedactor } from "../../src/plugin-llm/index.ts"
import { type ReplayProvider, startReplayProvider } from "../../src/testing/index.ts"
import { keyArbitrary, leaks, placementArbitrary, PROVIDER_OF, surfacesOf, transcriptWithKey } from "../support/key-in-provider-errors.ts"

const servers: Array<ReplayProvider> = []
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()))
})

describe("no configured credential leaves ctx.llm, wherever a provider's error event puts it", () => {
  it("property: the key in any field of each provider's genuine error event never reaches the error, its hops or the audit record", async () => {
    await fc.assert(
      fc.asyncProperty(placementArbitrary(), keyArbitrary, async (placement, key) => {
        const server = await startReplayProvider({ scheme: placement.scheme, script: [{ kind: "stream", transcript: transcriptWithKey(placement, key) }] })
        servers.push(server)
        const audit: Array<AuditRecord> = []
        const host = createPluginLlm({
          active: { provider: PROVIDER_OF[placement.scheme], model: "replay-model", apiKey: key, baseUrl: server.baseUrl },
          config: { plugins: { entries: { tldr: {} } }, llm: { max_retries: 0 } },
          env: {},
          audit: (record) => void audit.push(record)
        })
        const thrown = await host
          .forPlugin("tldr")
          .complete({ messages: [{ role: "user", content: "hi" }], purpose: "redaction" })
          .then(
            () => undefined,
            (error: unknown) => error
          )
        const shown = `${thrown === undefined ? "" : surfacesOf(thrown)}\n${JSON.stringify(audit)}`
        expect(audit).toHaveLength(1)
        expect(leaks(shown, key), shown).toBe(false)
      }),
      { numRuns: 80 }
    )
  })

  it("the key as a stream error's code: a typed error that says a provider error happened, with the key as ***", async () => {
    const key = "sk-proj-Q2xhdWRlIHNheXMgbm8gbGVha3M/Pz8rKys="
    const transcript = transcriptWithKey({ scheme: "openai-chat", fixture: "error-mid-stream", place: 5, wrap: 0 }, key)
    expect(transcript).toContain(`"code":"${key}"`)
    const server = await startReplayProvider({ scheme: "openai-chat", script: [{ kind: "stream", transcript }] })
    servers.push(server)
    const audit: Array<AuditRecord> = []
    const host = createPluginLlm({
      active: { provider: "openai", model: "gpt-4.1-mini", apiKey: key, baseUrl: server.baseUrl },
      config: { plugins: { entries: { tldr: {} } }, llm: { max_retries: 0 } },
      env: {},
      audit: (record) => void audit.push(record)
    })
    const error = await host.forPlugin("tldr").complete({ messages: [{ role: "user", content: "hi" }] }).catch((e: unknown) => e)
    expect(error).toMatchObject({
      _tag: "PluginLlmProviderUnavailable",
      message: 'no route answered (openai/gpt-4.1-mini: provider error "***")',
      hops: [{ provider: "openai", model: "gpt-4.1-mini", reason: "provider_error", message: 'provider error "***"' }]
    })
    expect(audit[0]?.hops).toEqual([{ provider: "openai", model: "gpt-4.1-mini", reason: "provider_error", message: 'provider error "***"' }])
  })
})

describe("SecretRedactor", () => {
  it("property: a secret in any of its spellings (raw, JSON-escaped once or twice, percent-encoded, HTML-escaped) is replaced", () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 8, maxLength: 40 }).filter((s) => s.trim() === s && s.trim().length >= 8),
        fc.string({ maxLength: 20 }),
        fc.string({ maxLength: 20 }),
        fc.constantFrom<(s: string) => string>(
          (s) => s,
          (s) => JSON.stringify(s).slice(1, -1),
          (s) => JSON.stringify(JSON.stringify(s)).slice(1, -1),
          (s) => encodeURIComponent(s),
          (s) => encodeURIComponent(s).replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase()),
          (s) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&#39;")
        ),
        (secret, before, after, spell) => {
          let spelled: string
          try {
            spelled = spell(secret)
          } catch {
            return // a lone surrogate has no percent-encoding
          }
          const redactor = new SecretRedactor([secret])
          expect(redactor.redactSecrets(`${before}${spelled}${after}`)).not.toContain(spelled)
        }
      )
    )
  })

  it("ignores values too short to be a credential and hides URL credentials by their shape", () => {
    const redactor = new SecretRedactor(["short", undefined, "  sk-live-0123456789  "])
    expect(redactor.size).toBe(1)
    expect(redactor.redact("short sk-live-0123456789 http://u:p@h/x?key=abc&a=1")).toBe("short *** http://***@h/x?key=***&a=1")
    expect(redactor.redactSecrets("http://u:p@h/x?key=abc")).toBe("http://u:p@h/x?key=abc")
  })
})
