import { describe, expect, it } from "vitest"
import { answering, endpoint, rejection, runtimeOn, SECRET } from "./support.ts"

const messages = [{ role: "user" as const, content: "ping" }]

/** Three routes on loopback: the active role, a second provider, another agent (host role). */
const setup = async (llm: Record<string, unknown> | undefined, extra: { auxiliary?: unknown } = {}) => {
  const active = await answering("openai-chat", "from active")
  const other = await answering("openai-chat", "from other")
  const agent = await answering("anthropic", "from agent")
  const { runtime, audit } = runtimeOn(active, {
    agents: { researcher: { provider: "anthropic", model: "claude-sonnet-4-5", apiKey: SECRET, baseUrl: agent.baseUrl, retry: { maxRetries: 0 } } },
    config: {
      plugins: llm === undefined ? undefined : { entries: { tldr: { llm } } },
      auxiliary: extra.auxiliary,
      llm: { providers: { other: endpoint(other) }, profiles: { work: { api_key_env: "WORK_KEY" } } }
    }
  })
  const sent = () => active.requests.length + other.requests.length + agent.requests.length
  return { runtime, audit, active, other, agent, sent, llm: runtime.llm.forPlugin("tldr") }
}

describe("the trust gate, closed by default (the seed's table)", () => {
  it("without config: the active provider and model with shape arguments", async () => {
    const { llm, active } = await setup(undefined)
    const result = await llm.complete({ messages: [{ role: "system", content: "Be brief." }, ...messages], temperature: 0.3, maxTokens: 64, timeout: 5, purpose: "tldr" })
    expect(result).toMatchObject({ text: "from active", provider: "openai", requestedModel: "gpt-4.1-mini", agentId: "default" })
    expect(JSON.parse(active.requests[0]?.body ?? "{}")).toMatchObject({ temperature: 0.3, max_completion_tokens: 64, messages: [{ role: "system", content: "Be brief." }, { role: "user", content: "ping" }] })
  })

  const refusals = [
    { override: "provider", call: { provider: "other" }, key: "allow_provider_override" },
    { override: "model", call: { model: "gpt-4.1" }, key: "allow_model_override" },
    { override: "agentId", call: { agentId: "researcher" }, key: "allow_agent_id_override" },
    { override: "profile", call: { profile: "work" }, key: "allow_profile_override" },
    { override: "task", call: { task: "summary" }, key: "allow_task_override" }
  ] as const

  describe.each([
    ["no entry", undefined],
    ["an empty llm entry", {}],
    ["every flag false", { allow_provider_override: false, allow_model_override: false, allow_agent_id_override: false, allow_profile_override: false, allow_task_override: false }]
  ])("with %s", (_, llm) => {
    it.each(refusals)("$override= is refused before any call, naming $key", async ({ override, call, key }) => {
      const { llm: ctx, sent, audit } = await setup(llm)
      const error = await rejection(ctx.complete({ messages, ...call }))
      expect(error).toMatchObject({ _tag: "PluginLlmTrustError", override, configKey: `plugins.entries.tldr.llm.${key}`, pluginId: "tldr" })
      expect(error.message).toContain(`plugins.entries.tldr.llm.${key}: true`)
      expect(sent()).toBe(0)
      expect(audit.map((a) => a.outcome)).toEqual(["PluginLlmTrustError"])
    })
  })

  it("each grant opens only its own override", async () => {
    const { llm, sent } = await setup({ allow_model_override: true })
    expect(await rejection(llm.complete({ messages, provider: "other", model: "gpt-4.1" }))).toMatchObject({ override: "provider" })
    expect(sent()).toBe(0)
    const result = await llm.complete({ messages, model: "gpt-4.1" })
    // The model grant keeps the plugin on the active provider.
    expect(result).toMatchObject({ provider: "openai", requestedModel: "gpt-4.1", text: "from active" })
  })

  it("provider + model when both are granted", async () => {
    const { llm, other } = await setup({ allow_provider_override: true, allow_model_override: true })
    const result = await llm.complete({ messages, provider: "other", model: "gpt-4o-mini" })
    expect(result).toMatchObject({ provider: "other", requestedModel: "gpt-4o-mini", text: "from other" })
    expect(other.requests[0]?.headers.authorization).toBe(`Bearer ${SECRET}`)
  })

  it("agentId uses that agent's model and credentials", async () => {
    const { llm, agent } = await setup({ allow_agent_id_override: true })
    const result = await llm.complete({ messages, agentId: "researcher" })
    expect(result).toMatchObject({ agentId: "researcher", provider: "anthropic", requestedModel: "claude-sonnet-4-5", text: "from agent" })
    expect(agent.requests).toHaveLength(1)
    expect(await rejection(llm.complete({ messages, agentId: "nobody" }))).toMatchObject({ _tag: "PluginLlmInputError", field: "agentId" })
  })

  it("profile uses that stored credential", async () => {
    const { llm, active } = await setup({ allow_profile_override: true })
    await llm.complete({ messages, profile: "work" })
    expect(active.requests[0]?.headers.authorization).toBe(`Bearer ${SECRET}-work`)
    expect(await rejection(llm.complete({ messages, profile: "home" }))).toMatchObject({ _tag: "PluginLlmInputError", field: "profile" })
  })

  it("a built-in task with allow_task_override, routed by auxiliary.<task>", async () => {
    const { llm, other } = await setup({ allow_task_override: true }, { auxiliary: { summary: { provider: "other", model: "sum-model" } } })
    const result = await llm.complete({ messages, task: "summary" })
    expect(result).toMatchObject({ provider: "other", requestedModel: "sum-model" })
    expect(result.audit.task).toBe("summary")
    expect(other.requests).toHaveLength(1)
  })
})

describe("allowlists", () => {
  const cases: ReadonlyArray<[string, unknown, string, boolean]> = [
    ["absent: any once the flag is on", undefined, "gpt-4.1", true],
    ['["*"]: any', ["*"], "gpt-4.1", true],
    ["[]: none", [], "gpt-4.1", false],
    ["listed", ["gpt-4.1", "gpt-4o-mini"], "gpt-4o-mini", true],
    ["not listed", ["gpt-4.1"], "gpt-4o-mini", false],
    ["matched literally, not as a prefix", ["gpt-4.1"], "gpt-4.1-nano", false],
    ["matched literally, case and all", ["GPT-4.1"], "gpt-4.1", false],
    ["a vendor-prefixed id is its own string", ["openai/gpt-4o-mini"], "gpt-4o-mini", false]
  ]
  it.each(cases)("allowed_models %s", async (_, list, model, allowed) => {
    const { llm, sent } = await setup({ allow_model_override: true, ...(list === undefined ? {} : { allowed_models: list }) })
    if (allowed) expect((await llm.complete({ messages, model })).requestedModel).toBe(model)
    else {
      expect(await rejection(llm.complete({ messages, model }))).toMatchObject({ _tag: "PluginLlmTrustError", override: "model", configKey: "plugins.entries.tldr.llm.allowed_models" })
      expect(sent()).toBe(0)
    }
  })

  it("allowed_providers without allow_provider_override grants nothing", async () => {
    const { llm } = await setup({ allowed_providers: ["other"] })
    expect(await rejection(llm.complete({ messages, provider: "other" }))).toMatchObject({ configKey: "plugins.entries.tldr.llm.allow_provider_override" })
  })

  it("allowed_providers: [] with the flag on refuses every provider", async () => {
    const { llm } = await setup({ allow_provider_override: true, allowed_providers: [] })
    expect(await rejection(llm.complete({ messages, provider: "other" }))).toMatchObject({ configKey: "plugins.entries.tldr.llm.allowed_providers" })
  })

  it("another plugin's grants are not this plugin's", async () => {
    const { runtime } = await setup({ allow_model_override: true })
    expect(await rejection(runtime.llm.forPlugin("other-plugin").complete({ messages, model: "gpt-4.1" }))).toMatchObject({ pluginId: "other-plugin", override: "model" })
  })

  it("an override that is not text is an input error, not a silent pass", async () => {
    const { llm } = await setup({ allow_model_override: true })
    expect(await rejection(llm.complete({ messages, model: 42 as unknown as string }))).toMatchObject({ _tag: "PluginLlmInputError", field: "model" })
  })
})
