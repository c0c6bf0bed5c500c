import { describe, expect, it } from "vitest"
import { answerSse } from "../support/answer-sse.ts"
import { answering, endpoint, rejection, replay, runtimeOn } from "./support.ts"

const messages = [{ role: "user" as const, content: "classify this" }]

describe("auxiliary tasks", () => {
  it("a plugin uses its own task; another plugin's task and unknown ones fail before any call", async () => {
    const active = await answering("openai-chat", "ok")
    const { runtime } = runtimeOn(active)
    runtime.contextFor("alpha").registerAuxiliaryTask("classifier", { displayName: "Classifier", description: "Classify input." })
    const alpha = runtime.llm.forPlugin("alpha")
    expect((await alpha.complete({ messages, task: "classifier" })).audit.task).toBe("classifier")
    const beta = runtime.llm.forPlugin("beta")
    expect(await rejection(beta.complete({ messages, task: "classifier" }))).toMatchObject({ _tag: "PluginLlmTrustError", override: "task" })
    expect(await rejection(beta.complete({ messages, task: "nope" }))).toMatchObject({ _tag: "PluginLlmInputError", field: "task" })
    expect(active.requests).toHaveLength(1)
  })

  it("allow_task_override grants built-in tasks, never another plugin's", async () => {
    const active = await answering("openai-chat", "ok")
    const { runtime } = runtimeOn(active, { config: { plugins: { entries: { beta: { llm: { allow_task_override: true } } } } } })
    runtime.contextFor("alpha").registerAuxiliaryTask("classifier")
    const beta = runtime.llm.forPlugin("beta")
    expect((await beta.complete({ messages, task: "vision" })).audit.task).toBe("vision")
    expect(await rejection(beta.complete({ messages, task: "classifier" }))).toMatchObject({ _tag: "PluginLlmTrustError", override: "task" })
  })

  it("task names are owned: a second plugin cannot take one, nor a built-in name", async () => {
    const { runtime } = runtimeOn(await answering("openai-chat", "ok"))
    runtime.contextFor("alpha").registerAuxiliaryTask("classifier")
    expect(() => runtime.contextFor("beta").registerAuxiliaryTask("classifier")).toThrow('task "classifier" is already registered by plugin "alpha"')
    expect(() => runtime.contextFor("beta").registerAuxiliaryTask("vision")).toThrow('"vision" is a built-in task')
    expect(() => runtime.contextFor("beta").registerAuxiliaryTask("auto")).toThrow("reserved")
    expect(() => runtime.contextFor("beta").registerAuxiliaryTask("Bad Name")).toThrow("task name must match")
  })

  it('omitted or "auto": the active provider and model', async () => {
    const active = await answering("openai-chat", "ok")
    const { runtime } = runtimeOn(active)
    const llm = runtime.llm.forPlugin("alpha")
    expect(await llm.complete({ messages, task: "auto" })).toMatchObject({ provider: "openai", requestedModel: "gpt-4.1-mini" })
    expect((await llm.complete({ messages, task: "auto" })).audit.task).toBeUndefined()
  })

  it("the operator's auxiliary.<task> overrides the plugin's defaults, which pass the gate themselves", async () => {
    const active = await answering("openai-chat", "active")
    const cheap = await answering("openai-chat", "cheap")
    const llmSection = { providers: { cheap: endpoint(cheap) } }
    // Plugin defaults name a model: without a grant that is a refused override.
    const closed = runtimeOn(active, { config: { llm: llmSection } })
    closed.runtime.contextFor("alpha").registerAuxiliaryTask("classifier", { defaults: { model: "gpt-4.1-nano" } })
    expect(await rejection(closed.runtime.llm.forPlugin("alpha").complete({ messages, task: "classifier" }))).toMatchObject({ override: "model" })
    // The operator's choice needs no grant and wins over the defaults.
    const operated = runtimeOn(active, { config: { llm: llmSection, auxiliary: { classifier: { provider: "cheap", model: "cheap-1" } } } })
    operated.runtime.contextFor("alpha").registerAuxiliaryTask("classifier", { defaults: { provider: "openai", model: "gpt-4.1-nano" } })
    expect(await operated.runtime.llm.forPlugin("alpha").complete({ messages, task: "classifier" })).toMatchObject({ provider: "cheap", requestedModel: "cheap-1", text: "cheap" })
    // With a model grant the plugin's default model applies.
    const granted = runtimeOn(active, { config: { llm: llmSection, plugins: { entries: { alpha: { llm: { allow_model_override: true } } } } } })
    granted.runtime.contextFor("alpha").registerAuxiliaryTask("classifier", { defaults: { model: "gpt-4.1-nano" } })
    expect(await granted.runtime.llm.forPlugin("alpha").complete({ messages, task: "classifier" })).toMatchObject({ provider: "openai", requestedModel: "gpt-4.1-nano" })
  })
})

describe("timeout precedence: explicit, then the task's config, then the global default", () => {
  const stalled = (seconds: number) =>
    replay("openai-chat", [{ kind: "stream", transcript: answerSse("openai-chat", "late"), stallAfterEvents: 1 }]).then((server) => ({ server, seconds }))

  it("reports which one applied", async () => {
    const active = await answering("openai-chat", "ok")
    const { runtime } = runtimeOn(active, { config: { llm: { timeout: 40 }, auxiliary: { classifier: { timeout: 7 } } } })
    runtime.contextFor("alpha").registerAuxiliaryTask("classifier", { defaults: { timeout: 9 } })
    runtime.contextFor("alpha").registerAuxiliaryTask("ranker", { defaults: { timeout: 11 } })
    const llm = runtime.llm.forPlugin("alpha")
    expect((await llm.complete({ messages })).audit.timeout).toEqual({ ms: 40_000, source: "default" })
    expect((await llm.complete({ messages, task: "classifier" })).audit.timeout).toEqual({ ms: 7_000, source: "task" })
    expect((await llm.complete({ messages, task: "ranker" })).audit.timeout).toEqual({ ms: 11_000, source: "task" })
    expect((await llm.complete({ messages, task: "classifier", timeout: 3 })).audit.timeout).toEqual({ ms: 3_000, source: "explicit" })
    expect(await rejection(llm.complete({ messages, timeout: -1 }))).toMatchObject({ _tag: "PluginLlmInputError", field: "timeout" })
    // Past 2^31 ms a timer fires at once: a huge timeout is refused, never turned into an instant one.
    expect(await rejection(llm.complete({ messages, timeout: 3e6 }))).toMatchObject({ _tag: "PluginLlmInputError", field: "timeout" })
    expect(await rejection(llm.complete({ messages, maxTokens: 1.5 }))).toMatchObject({ _tag: "PluginLlmInputError", field: "maxTokens" })
  })

  it("a call past its deadline fails with PluginLlmTimeoutError naming the source", async () => {
    const { server } = await stalled(0.2)
    const { runtime, audit } = runtimeOn(server, { config: { auxiliary: { classifier: { timeout: 0.2 } } } })
    runtime.contextFor("alpha").registerAuxiliaryTask("classifier")
    const error = await rejection(runtime.llm.forPlugin("alpha").complete({ messages, task: "classifier" }))
    expect(error).toMatchObject({ _tag: "PluginLlmTimeoutError", timeoutMs: 200, source: "task" })
    expect(audit.at(-1)?.outcome).toBe("PluginLlmTimeoutError")
    await server.requests[0]?.disconnected
  })
})
