import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { decodePluginLlmConfig } from "../../src/plugin-llm/config.ts"
import { createPluginLlm } from "../../src/plugin-llm/plugin-llm.ts"
import { PluginLlmConfigError } from "../../src/plugin-llm/errors.ts"

const issuesOf = (sections: Parameters<typeof decodePluginLlmConfig>[0]): ReadonlyArray<{ path: string; message: string }> => {
  try {
    decodePluginLlmConfig(sections)
  } catch (thrown) {
    expect(thrown).toBeInstanceOf(PluginLlmConfigError)
    return (thrown as PluginLlmConfigError).issues
  }
  return []
}

const llmEntry = (llm: unknown) => ({ entries: { tldr: { llm } } })

describe("decoding the operator's plugins / auxiliary / llm sections", () => {
  it("is closed by default: no sections, no grants", () => {
    const config = decodePluginLlmConfig({})
    expect(config.plugins).toEqual({})
    expect(config.llm).toMatchObject({ timeoutMs: 60_000, fallback: [], priceTable: "genai-prices", defaultMaxConcurrent: 4 })
    expect(decodePluginLlmConfig({ plugins: llmEntry({}) }).plugins["tldr"]?.llm).toEqual({
      allowProviderOverride: false, allowModelOverride: false, allowAgentIdOverride: false, allowProfileOverride: false, allowTaskOverride: false
    })
  })

  it("refuses an allowlist written as a string, never reading it as a list or as open", () => {
    expect(issuesOf({ plugins: llmEntry({ allow_model_override: true, allowed_models: "gpt-4o-mini" }) })).toEqual([
      { path: "plugins.entries.tldr.llm.allowed_models", message: 'must be a list of strings, got the string "gpt-4o-mini"; write ["gpt-4o-mini"]' }
    ])
  })

  it('refuses "false" and "true" as flags (quoted text is not a boolean)', () => {
    expect(issuesOf({ plugins: llmEntry({ allow_provider_override: "false" }) })).toEqual([
      { path: "plugins.entries.tldr.llm.allow_provider_override", message: 'must be true or false, got the string "false" (quoted text is not a boolean)' }
    ])
    expect(issuesOf({ plugins: llmEntry({ allow_task_override: 1 }) })[0]?.message).toBe("must be true or false, got number 1")
  })

  it("reports unknown keys at every level, with the keys it knows", () => {
    const issues = issuesOf({ plugins: { entries: { tldr: { llm: { allow_model_overide: true } }, x: { modul: "a.mjs" } }, extra: 1 }, llm: { timeoutt: 3 } })
    expect(issues.map((i) => i.path)).toEqual(["plugins.extra", "plugins.entries.tldr.llm.allow_model_overide", "plugins.entries.x.modul", "llm.timeoutt"])
    expect(issues[1]?.message).toMatch(/^unknown key; expected one of: allow_provider_override, allowed_providers, allow_model_override/)
  })

  it("collects every wrong type in one error", () => {
    const issues = issuesOf({
      plugins: { entries: { tldr: { enabled: "yes", llm: { max_calls: 2.5, allowed_providers: ["openai", 3, ""] } } } },
      auxiliary: { classifier: { provider: 7, timeout: -1 }, other: "openai" },
      llm: { timeout: "30", fallback: { provider: "a" }, vision: { provider: "openai" }, prices: [{ model: "m", input_per_mtok: -1 }], price_table: "litellm" }
    })
    expect(issues).toEqual([
      { path: "plugins.entries.tldr.enabled", message: 'must be true or false, got the string "yes" (quoted text is not a boolean)' },
      { path: "plugins.entries.tldr.llm.allowed_providers[1]", message: "must be a string, got number 3" },
      { path: "plugins.entries.tldr.llm.allowed_providers[2]", message: "must not be empty" },
      { path: "plugins.entries.tldr.llm.max_calls", message: "must be a positive integer, got number 2.5" },
      { path: "auxiliary.classifier.provider", message: "must be a string, got number 7" },
      { path: "auxiliary.classifier.timeout", message: "must be a positive number, got number -1" },
      { path: "auxiliary.other", message: 'must be a mapping, got the string "openai"' },
      { path: "llm.fallback", message: "must be a list, got a mapping" },
      { path: "llm.vision.model", message: "is required" },
      { path: "llm.prices[0].input_per_mtok", message: "must be a number ≥ 0, got number -1" },
      { path: "llm.prices[0].output_per_mtok", message: "is required" },
      { path: "llm.timeout", message: 'must be a positive number, got the string "30"' },
      { path: "llm.price_table", message: 'must be one of "genai-prices", "none", got the string "litellm"' }
    ])
  })

  it("reads tasks, providers, profiles, fallback and prices", () => {
    const config = decodePluginLlmConfig({
      auxiliary: { classifier: { provider: "auto", model: "cheap", timeout: 2.5 } },
      llm: {
        timeout: 30, max_retries: 0,
        providers: { local: { type: "ollama", base_url: "http://127.0.0.1:11434/v1" } },
        profiles: { work: { api_key_env: "WORK_KEY", provider: "openai" } },
        fallback: [{ provider: "local", model: "qwen3" }],
        vision: { provider: "openai", model: "gpt-4.1" },
        prices: [{ model: "qwen3", input_per_mtok: 0, output_per_mtok: 0 }]
      }
    })
    expect(config.auxiliary["classifier"]).toEqual({ model: "cheap", timeoutMs: 2500 })
    expect(config.llm).toMatchObject({
      timeoutMs: 30_000, maxRetries: 0,
      providers: { local: { type: "ollama", baseUrl: "http://127.0.0.1:11434/v1" } },
      profiles: { work: { apiKeyEnv: "WORK_KEY", provider: "openai" } },
      fallback: [{ provider: "local", model: "qwen3" }],
      vision: { provider: "openai", model: "gpt-4.1" }
    })
  })

  it("a profile or provider names its key one way only", () => {
    expect(issuesOf({ llm: { profiles: { a: { provider: "openai" }, b: { api_key_env: "X", api_key_file: "k" } }, providers: { p: { api_key_env: "X", api_key_file: "k" } } } })).toEqual([
      { path: "llm.providers.p", message: "give api_key_env or api_key_file, not both" },
      { path: "llm.profiles.a", message: "needs exactly one of api_key_env, api_key_file" },
      { path: "llm.profiles.b", message: "needs exactly one of api_key_env, api_key_file" }
    ])
  })

  it("a look-alike of a decoded config is decoded, not trusted", () => {
    expect(() => createPluginLlm({ active: { provider: "ollama", model: "m" }, config: { llm: { timeoutMs: 5 } } as never, audit: false })).toThrow("llm.timeoutMs: unknown key")
    const decoded = decodePluginLlmConfig({ llm: { timeout: 5 } })
    expect(createPluginLlm({ active: { provider: "ollama", model: "m" }, config: decoded, audit: false }).config).toBe(decoded)
  })

  it("never throws anything but PluginLlmConfigError, whatever the YAML held", () => {
    fc.assert(
      fc.property(fc.anything({ maxDepth: 4 }), fc.anything({ maxDepth: 4 }), fc.anything({ maxDepth: 4 }), (plugins, auxiliary, llm) => {
        try {
          decodePluginLlmConfig({ plugins, auxiliary, llm })
        } catch (thrown) {
          expect(thrown).toBeInstanceOf(PluginLlmConfigError)
        }
      }),
      { numRuns: 300 }
    )
  })
})
