import { readFileSync, writeFileSync } from "node:fs"
import { Schema } from "effect"
import { afterEach, describe, expect, expectTypeOf, it } from "vitest"
import { z } from "zod"
import { createLlmClient } from "../../../src/llm/llm-client.ts"
import type { LlmClient } from "../../../src/llm/client.ts"
import { Item } from "../../../src/llm/item.ts"
import type { SchemeName } from "../../../src/llm/scheme.ts"
import { complete, completeObject } from "../../../src/llm/completion/complete.ts"
import { planOutput } from "../../../src/llm/completion/output-plan.ts"
import { anthropicModelHasNativeFormat } from "../../../src/llm/schemes/response-format.ts"
import { jsonSchema } from "../../../src/schema/codec.ts"
import { Worker } from "../../../src/worker/worker.ts"
import { type ReplayProvider, startReplayProvider } from "../../../src/testing/index.ts"
import { answerSse, anthropicToolAnswerSse } from "../../support/answer-sse.ts"

const Tasks = z.object({
  tasks: z.array(z.object({ owner: z.string().optional(), action: z.string(), due: z.string().describe("ISO date or empty").optional() }))
})

const PROVIDER: Record<SchemeName, { readonly provider: string; readonly model: string }> = {
  "openai-chat": { provider: "openai", model: "gpt-4.1-mini" },
  "openai-responses": { provider: "openai-responses", model: "gpt-4.1-mini" },
  anthropic: { provider: "anthropic", model: "claude-sonnet-4-5" },
  gemini: { provider: "gemini", model: "gemini-2.5-flash" }
}
const SCHEMES = Object.keys(PROVIDER) as ReadonlyArray<SchemeName>

const servers: Array<ReplayProvider> = []
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()))
})

const clientOn = async (scheme: SchemeName, transcripts: ReadonlyArray<string>, model = PROVIDER[scheme].model): Promise<{ client: LlmClient; server: ReplayProvider }> => {
  const server = await startReplayProvider({ scheme, script: transcripts.map((transcript) => ({ kind: "stream" as const, transcript })) })
  servers.push(server)
  const client = createLlmClient({ provider: PROVIDER[scheme].provider, model, apiKey: "test-key", baseUrl: server.baseUrl, retry: { maxRetries: 0 } })
  return { client, server }
}

const goldenPath = (scheme: string, name: string): URL => new URL(`../../fixtures/requests/${scheme}/${name}.json`, import.meta.url)

/** UPDATE_GOLDEN=1 rewrites the files; check them with the provider request validator before committing. */
const expectGolden = (scheme: string, name: string, body: string): void => {
  if (process.env["UPDATE_GOLDEN"] === "1") writeFileSync(goldenPath(scheme, name), `${body}\n`)
  expect(body).toBe(readFileSync(goldenPath(scheme, name), "utf8").trimEnd())
}

describe("structured output request bodies", () => {
  const offline = (scheme: SchemeName, model = PROVIDER[scheme].model): LlmClient =>
    createLlmClient({ provider: PROVIDER[scheme].provider, model, apiKey: "test-key", baseUrl: "http://127.0.0.1:9" })
  const request = (client: LlmClient) => ({
    model: client.model,
    systemPrompt: "Extract concrete action items.",
    items: [Item.userText("Ana ships the release on Friday; someone books the room.")],
    tools: [],
    config: { temperature: 0, maxTokens: 512 }
  })

  it.each(SCHEMES)("%s: the schema travels as the provider's native format (golden)", (scheme) => {
    const client = offline(scheme)
    const plan = planOutput(client, { schema: Tasks, name: "meeting.tasks" })
    expect(plan.mode).toBe("native")
    expectGolden(scheme, "structured-output", client.encodeRequest(plan.apply(request(client))))
  })

  it.each(["openai-chat", "openai-responses", "gemini"] as const)("%s: JSON mode without a schema (golden)", (scheme) => {
    const client = offline(scheme)
    const plan = planOutput(client, { json: true })
    expectGolden(scheme, "json-mode", client.encodeRequest(plan.apply(request(client))))
  })

  it("anthropic: a model without the native format gets a forced tool (golden)", () => {
    const client = offline("anthropic", "claude-3-5-haiku-20241022")
    const plan = planOutput(client, { schema: Tasks, name: "meeting.tasks" })
    expect(plan.mode).toBe("tool")
    expectGolden("anthropic", "structured-output-tool", client.encodeRequest(plan.apply(request(client))))
  })

  it("anthropic: a schema outside the native subset goes as a forced tool, not loosened", () => {
    const client = offline("anthropic")
    expect(planOutput(client, { schema: z.object({ n: z.int().min(1) }) }).mode).toBe("tool")
    expect(planOutput(client, { schema: z.object({ n: z.number(), tag: z.enum(["a", "b"]) }) }).mode).toBe("native")
  })

  it("OpenAI strict applies where the schema allows it, and not otherwise", () => {
    const client = offline("openai-chat")
    const strict = JSON.parse(client.encodeRequest(planOutput(client, { schema: Tasks }).apply(request(client)))) as { response_format: { json_schema: { strict: boolean; name: string } } }
    expect(strict.response_format.json_schema).toMatchObject({ strict: true, name: "output" })
    const open = jsonSchema({ type: "object", properties: { tags: { type: "object", additionalProperties: { type: "string" } } } })
    const loose = JSON.parse(client.encodeRequest(planOutput(client, { schema: open }).apply(request(client)))) as { response_format: { json_schema: { strict: boolean } } }
    expect(loose.response_format.json_schema.strict).toBe(false)
  })

  it("knows which Claude models have output_config.format", () => {
    for (const model of ["claude-sonnet-4-5", "claude-sonnet-4-5-20250929", "claude-haiku-4-5", "claude-opus-4-1-20250805", "claude-opus-4-5", "claude-sonnet-5"]) {
      expect(anthropicModelHasNativeFormat(model), model).toBe(true)
    }
    for (const model of ["claude-3-5-haiku-20241022", "claude-3-7-sonnet-latest", "claude-sonnet-4-20250514", "claude-opus-4-0", "claude-3-haiku-20240307"]) {
      expect(anthropicModelHasNativeFormat(model), model).toBe(false)
    }
  })
})

describe("completeObject on every wire format (replay provider on loopback)", () => {
  // OpenAI strict makes optional fields nullable: the model sends null and the decoder sees them absent.
  const answer = '{"tasks":[{"owner":"Ana","action":"ship the release","due":"2026-12-04"},{"owner":null,"action":"book the room","due":null}]}'
  const plainAnswer = '{"tasks":[{"owner":"Ana","action":"ship the release","due":"2026-12-04"},{"action":"book the room"}]}'

  it.each(SCHEMES)("%s: the answer is decoded and typed", async (scheme) => {
    const { client, server } = await clientOn(scheme, [answerSse(scheme, scheme.startsWith("openai") ? answer : plainAnswer, { input: 30, output: 12 })])
    const result = await completeObject(client, { input: "Ana ships the release on Friday; someone books the room.", schema: Tasks, name: "meeting.tasks" })
    expect(result.output).toEqual({
      ok: true,
      value: { tasks: [{ owner: "Ana", action: "ship the release", due: "2026-12-04" }, { action: "book the room" }] }
    })
    if (result.output.ok) expectTypeOf(result.output.value.tasks[0]!.owner).toEqualTypeOf<string | undefined>()
    expect(result.usage).toMatchObject({ inputTokens: 30, outputTokens: 12, totalTokens: 42 })
    expect(result.mode).toBe("native")
    const body = server.requests[0]?.body ?? ""
    expect(body).toMatch(scheme === "openai-chat" ? /"response_format":/ : scheme === "openai-responses" ? /"text":\{"format":/ : scheme === "anthropic" ? /"output_config":/ : /"responseJsonSchema":/)
  })

  it("anthropic: a forced tool's arguments are the answer", async () => {
    const { client, server } = await clientOn("anthropic", [anthropicToolAnswerSse("structured_answer", plainAnswer)], "claude-3-5-haiku-20241022")
    const result = await completeObject(client, { input: "notes", schema: Tasks })
    expect(result.mode).toBe("tool")
    expect(result.output.ok).toBe(true)
    expect(result.answer).toBe(plainAnswer)
    expect(JSON.parse(server.requests[0]?.body ?? "{}")).toMatchObject({ tool_choice: { type: "tool", name: "structured_answer" } })
  })

  it("a refused answer keeps the text, the issues and the usage", async () => {
    const { client } = await clientOn("gemini", [answerSse("gemini", '{"tasks":[{"owner":"Ana"}]}', { input: 9, output: 4 })])
    const result = await completeObject(client, { input: "notes", schema: Tasks })
    expect(result.text).toBe('{"tasks":[{"owner":"Ana"}]}')
    expect(result.usage.totalTokens).toBe(13)
    expect(result.output).toMatchObject({ ok: false, stage: "validate" })
    if (!result.output.ok) expect(result.output.issues[0]?.path).toEqual(["tasks", 0, "action"])
  })

  it("an answer that is not JSON fails at the parse stage", async () => {
    const { client } = await clientOn("openai-chat", [answerSse("openai-chat", "null")])
    const result = await completeObject(client, { input: "x", schema: Tasks })
    expect(result.output).toEqual({ ok: false, stage: "parse", issues: [{ path: [], message: "the answer is a bare null" }] })
  })

  it("takes Effect Schema and raw JSON Schema too", async () => {
    const { client } = await clientOn("openai-responses", [answerSse("openai-responses", '{"urgency":0.9,"category":"billing"}')])
    const Triage = Schema.Struct({ urgency: Schema.Number, category: Schema.String })
    const result = await completeObject(client, { input: "refund now", schema: Triage })
    expect(result.output).toEqual({ ok: true, value: { urgency: 0.9, category: "billing" } })
    if (result.output.ok) expectTypeOf(result.output.value).toEqualTypeOf<{ readonly urgency: number; readonly category: string }>()
    const { client: raw } = await clientOn("anthropic", [answerSse("anthropic", '```json\n{"ok":true}\n```')])
    const rawResult = await completeObject(raw, { input: "x", schema: { type: "object", properties: { ok: { type: "boolean" } }, required: ["ok"] } })
    expect(rawResult.output).toEqual({ ok: true, value: { ok: true } })
  })

  it("complete() gives the text and usage of one answer", async () => {
    const { client, server } = await clientOn("anthropic", [answerSse("anthropic", "pong", { input: 5, output: 1, cacheRead: 2 })])
    const result = await complete(client, { input: "ping", systemPrompt: "Answer in one word.", config: { maxTokens: 8 } })
    expect(result).toMatchObject({ text: "pong", provider: "anthropic", model: "claude-sonnet-4-5", usage: { inputTokens: 5, cacheReadTokens: 2, outputTokens: 1 } })
    expect(server.requests[0]?.body).not.toContain("output_config")
  })
})

describe("a Worker run with a structured final output", () => {
  it("sends the format on every request and decodes the last answer", async () => {
    const { client, server } = await clientOn("openai-chat", [answerSse("openai-chat", '{"city":"Kyoto","days":3}')])
    const worker = Worker.create({ client })
    const result = await worker.run("Kyoto, three days", { output: z.object({ city: z.string(), days: z.int() }) })
    expect(result.status).toBe("finished")
    expect(result.output).toEqual({ ok: true, value: { city: "Kyoto", days: 3 } })
    if (result.output.ok) expectTypeOf(result.output.value).toEqualTypeOf<{ city: string; days: number }>()
    expect(server.requests[0]?.body).toContain('"response_format":{"type":"json_schema"')
    // The format belongs to that run only.
    expect(worker.config.responseFormat).toBeUndefined()
    // @ts-expect-error a run without `output` has no `output`
    void (await worker.run("again")).output
  })
})

describe("image URL parts (the provider fetches the image)", () => {
  const request = (model: string) => ({
    model,
    items: [{ type: "message" as const, role: "user" as const, content: [{ type: "input_image_url" as const, url: "https://example.com/cat.png" }] }],
    tools: [],
    config: {}
  })
  it.each([
    ["openai-chat", '{"type":"image_url","image_url":{"url":"https://example.com/cat.png"}}'],
    ["openai-responses", '{"type":"input_image","image_url":"https://example.com/cat.png","detail":"auto"}'],
    ["anthropic", '{"type":"image","source":{"type":"url","url":"https://example.com/cat.png"}}'],
    ["gemini", '{"fileData":{"fileUri":"https://example.com/cat.png"}}']
  ] as const)("%s", (scheme, fragment) => {
    const client = createLlmClient({ provider: PROVIDER[scheme].provider, model: PROVIDER[scheme].model, apiKey: "k", baseUrl: "http://127.0.0.1:9" })
    expect(client.encodeRequest(request(client.model))).toContain(fragment)
  })
})

