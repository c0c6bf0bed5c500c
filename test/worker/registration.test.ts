import { describe, expect, it } from "vitest"
import { z } from "zod"
import { defineTool, DuplicateName, jsonSchema, RegistrationFailed, Tool, ToolMeta, Worker } from "../../src/index.ts"
import type { SchemeName } from "../../src/index.ts"
import { ScriptedClient } from "./support/scripted-client.ts"

const workerFor = (scheme: SchemeName) => Worker.create({ client: new ScriptedClient([], scheme) })

const named = (name: string) =>
  defineTool({ name, description: `tool ${name}`, parameters: z.object({ q: z.string() }), execute: ({ q }) => q })

describe("registration through the Worker", () => {
  it("runs factories once, at registration, and lists the tools sorted", async () => {
    let calls = 0
    const worker = workerFor("anthropic")
    worker.registerTools([
      named("zeta"),
      () => {
        calls++
        return [ToolMeta.make("alpha").description("a"), Tool.fromFunction(() => "A")]
      }
    ])
    expect(calls).toBe(1)
    const handle = worker.toolServerHandle()
    expect(handle.names()).toEqual(["alpha", "zeta"])
    expect(await handle.callTool("alpha", "{}")).toBe("A")
    expect(calls).toBe(1)
  })

  it("is all-or-nothing with a typed DuplicateName", () => {
    const worker = workerFor("anthropic")
    worker.registerTool(named("a"))
    expect(() => worker.registerTools([named("b"), named("a")])).toThrow(DuplicateName)
    expect(worker.toolServerHandle().names()).toEqual(["a"])
  })

  it("refuses two tools that the worker's provider would spell the same", () => {
    const openai = workerFor("openai-chat")
    openai.registerTool(named("files.read"))
    const error = (() => {
      try {
        openai.registerTool(named("files_read"))
      } catch (e) {
        return e
      }
    })()
    expect(error).toBeInstanceOf(RegistrationFailed)
    expect((error as RegistrationFailed).message).toContain("openai-chat")
    // Gemini keeps dots, so the same pair is fine there.
    const gemini = workerFor("gemini")
    gemini.registerTools([named("files.read"), named("files_read")])
    expect(gemini.toolServerHandle().names()).toEqual(["files.read", "files_read"])
  })

  it("refuses a name the worker's provider cannot take, naming the provider", () => {
    const gemini = workerFor("gemini")
    expect(() => gemini.registerTool(named("1st-tool"))).toThrow(/gemini/)
    const anthropic = workerFor("anthropic")
    anthropic.registerTool(named("1st-tool"))
    expect(anthropic.toolServerHandle().names()).toEqual(["1st-tool"])
  })

  it("reports what the provider would degrade as warnings, not errors", () => {
    const worker = workerFor("openai-chat")
    const report = worker.registerTool(
      defineTool({
        name: "tags",
        description: "free-form tags",
        parameters: jsonSchema<{ tags: Record<string, string> }>({
          type: "object",
          properties: { tags: { type: "object", additionalProperties: { type: "string" } } },
          required: ["tags"],
          additionalProperties: false
        }),
        execute: ({ tags }) => Object.keys(tags).length
      })
    )
    expect(report.registered.map((s) => s.name)).toEqual(["tags"])
    expect(report.warnings.length).toBeGreaterThan(0)
    expect(report.warnings.every((w) => w.severity === "warning" && w.provider === "openai-chat")).toBe(true)
  })
})

describe("edits during a run", () => {
  it("refuses system prompt and config changes while a run is in flight", async () => {
    const { WorkerBusy } = await import("../../src/index.ts")
    const client = new ScriptedClient([{ events: [], stallAfter: 0 }], "anthropic")
    const worker = Worker.create({ client })
    const running = worker.run("hello").catch((e: unknown) => e)
    await new Promise((r) => setTimeout(r, 10))
    expect(() => worker.setSystemPrompt("changed")).toThrow(WorkerBusy)
    expect(() => worker.setConfig({ maxTokens: 10 })).toThrow(WorkerBusy)
    worker.cancel()
    await running
    worker.setSystemPrompt("after the run")
    expect(worker.systemPrompt).toBe("after the run")
  })
})

describe("who can register", () => {
  it("refuses a ToolServerHandle as a worker's server, in types and at run time", async () => {
    const { ToolServer } = await import("../../src/index.ts")
    const handle = new ToolServer().handle()
    // @ts-expect-error: only a ToolServer can back a worker; a handle (what hooks receive) cannot register
    expect(() => Worker.create({ client: new ScriptedClient([]), toolServer: handle })).toThrow(TypeError)
  })
})

describe("OpenAI strict arguments", () => {
  it("turns null back into absent only for tools sent in strict mode", async () => {
    const strictTool = defineTool({
      name: "strict_tool",
      description: "closed object: sent strict",
      parameters: z.object({ a: z.string(), b: z.string().optional() }),
      execute: (args) => JSON.stringify(args)
    })
    const openTool = defineTool({
      name: "open_tool",
      description: "a record: cannot be strict",
      parameters: jsonSchema<{ a: string; tags?: Record<string, string> }>({
        type: "object",
        properties: { a: { type: "string" }, tags: { type: "object", additionalProperties: { type: "string" } } },
        required: ["a"],
        additionalProperties: false
      }),
      execute: (args) => JSON.stringify(args)
    })
    const { toolCallResponse, textResponse } = await import("./support/scripted-client.ts")
    const client = new ScriptedClient(
      [
        toolCallResponse([
          { id: "c1", name: "strict_tool", args: '{"a":"x","b":null}' },
          { id: "c2", name: "open_tool", args: '{"a":"x","tags":null}' }
        ]),
        textResponse("ok")
      ],
      "openai-chat"
    )
    const worker = Worker.create({ client })
    worker.registerTools([strictTool, openTool])
    await worker.run("go")
    const outputs = worker.history().flatMap((i) => (i.type === "function_call_output" ? [[i.callId, i.isError, i.output] as const] : []))
    expect(outputs[0]).toEqual(["c1", false, '{"a":"x"}'])
    expect(outputs[1]?.[0]).toBe("c2")
    expect(outputs[1]?.[1]).toBe(true)
    expect(outputs[1]?.[2]).toContain("tags")
  })
})

describe("registration for Gemini's older endpoints", () => {
  it("lints against the OpenAPI subset when the client sends it, refusing what the subset cannot carry", async () => {
    const { createLlmClient, gemini, makeGeminiScheme } = await import("../../src/index.ts")
    const subset = createLlmClient({
      provider: { ...gemini, scheme: makeGeminiScheme({ toolSchemas: "openapi-subset" }) },
      model: "gemini-1.5-pro",
      apiKey: "test"
    })
    expect(subset.toolLintTarget).toBe("gemini-subset")
    const recordTool = defineTool({
      name: "tag",
      description: "a required record: the subset has no way to say it",
      parameters: jsonSchema<{ tags: Record<string, string> }>({
        type: "object",
        properties: { tags: { type: "object", additionalProperties: { type: "string" } } },
        required: ["tags"],
        additionalProperties: false
      }),
      execute: () => "ok"
    })
    expect(() => Worker.create({ client: subset }).registerTool(recordTool)).toThrow(/gemini-subset/)
    const current = createLlmClient({ provider: "gemini", model: "gemini-2.5-flash", apiKey: "test" })
    expect(Worker.create({ client: current }).registerTool(recordTool).registered).toHaveLength(1)
  })
})
