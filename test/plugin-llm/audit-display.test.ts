import { afterEach, describe, expect, it, vi } from "vitest"
import { createPluginRuntime } from "../../src/plugin-llm/index.ts"
import { reply, startReplayProvider } from "../../src/testing/index.ts"
import type { ReplayProvider } from "../../src/testing/index.ts"

/**
 * 120 input and 12 output tokens at $0.40 / $1.60 per million add up, in binary floating point, to
 * 0.00006720000000000001 USD. The data keeps that number; what is printed for a person shows 0.0000672.
 */

const started: Array<ReplayProvider> = []
afterEach(async () => {
  vi.restoreAllMocks()
  await Promise.all(started.splice(0).map((server) => server.close()))
})

describe("plugin-LLM cost: exact in data, rounded where printed", () => {
  it("the default stderr audit line shows the cost rounded; result.usage and result.audit keep it exact", async () => {
    const server = await startReplayProvider({ scheme: "openai-chat", script: [reply().text("ok").usage({ inputTokens: 120, outputTokens: 12 })] })
    started.push(server)
    const runtime = createPluginRuntime({
      active: { provider: "openai", model: "house-model", apiKey: "sk-test-key-long-enough-1234", baseUrl: server.baseUrl, retry: { maxRetries: 0 } },
      config: { llm: { prices: [{ model: "house-model", input_per_mtok: 0.4, output_per_mtok: 1.6 }] } }
    })
    const lines: Array<string> = []
    vi.spyOn(process.stderr, "write").mockImplementation((chunk: string | Uint8Array) => {
      lines.push(String(chunk))
      return true
    })
    const result = await runtime.llm.forPlugin("p").complete({ messages: [{ role: "user", content: "x" }] })
    vi.restoreAllMocks()
    const exact = (120 * 0.4) / 1_000_000 + (12 * 1.6) / 1_000_000
    expect(exact).toBe(0.00006720000000000001)
    expect(result.usage.costUsd).toBe(exact)
    expect(result.audit.usage.costUsd).toBe(exact)
    const audit = lines.filter((line) => line.startsWith("llm-worker plugin-llm audit "))
    expect(audit).toHaveLength(1)
    expect(audit[0]).toContain('"costUsd":0.0000672,')
    expect(audit[0]).not.toContain("0.00006720000000000001")
    // The rest of the line is the record as it is.
    const printed = JSON.parse(audit[0]!.slice("llm-worker plugin-llm audit ".length)) as { usage: Record<string, unknown> }
    expect(printed).toEqual({ ...JSON.parse(JSON.stringify(result.audit)), usage: { ...result.audit.usage, costUsd: 0.0000672 } })
  })
})
