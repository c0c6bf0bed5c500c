import { afterEach, describe, expect, it } from "vitest"
import { createLlmClient } from "../../src/llm/llm-client.ts"
import { gemini } from "../../src/llm/providers/gemini.ts"
import { makeGeminiScheme } from "../../src/llm/schemes/gemini.ts"
import type { JsonObject } from "../../src/schema/json-schema.ts"
import { ToolMeta } from "../../src/tool/tool-meta.ts"
import { Worker } from "../../src/worker/worker.ts"
import { type ReplayProvider, startReplayProvider } from "../../src/testing/replay-provider.ts"
import { loadTranscript } from "../support/sse-fixtures.ts"

/** Streamed Gemini arguments end to end: opt-in request, decoded calls run with whole arguments, sent back whole. */
let server: ReplayProvider | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
})

const tool = (name: string, properties: JsonObject, log: Array<string>) => () =>
  [
    ToolMeta.make(name).description(`the ${name} tool`).inputSchema({ type: "object", properties, additionalProperties: false }),
    {
      execute: async (args: string) => {
        log.push(`${name}:${args}`)
        return `${name} done`
      }
    }
  ] as const

const start = async (transcript: string) => {
  server = await startReplayProvider({
    scheme: "gemini",
    script: [
      { kind: "stream", transcript },
      { kind: "stream", transcript: loadTranscript("gemini", "text") }
    ]
  })
  const client = createLlmClient({
    provider: { ...gemini, scheme: makeGeminiScheme({ streamFunctionCallArguments: true }) },
    model: "gemini-3-pro-preview",
    apiKey: "test-key",
    baseUrl: server.baseUrl,
    retry: { maxRetries: 0 }
  })
  const log: Array<string> = []
  const worker = Worker.create({ client })
  worker.registerTools([
    tool(
      "plan_route",
      {
        from: { type: "string" },
        stops: { type: "array", items: { type: "object", properties: { city: { type: "string" }, nights: { type: "number" } } } },
        avoid_tolls: { type: "boolean" },
        note: { type: "null" },
        tags: { type: "array", items: { type: "string" } }
      },
      log
    ),
    tool("check_weather", { city: { type: "string" }, days: { type: "integer" } }, log),
    tool("delete_files", { path: { type: "string" } }, log)
  ])
  return { worker, log, server }
}

describe("Gemini streamed function-call arguments through the worker", () => {
  it("asks for them, runs each call on its whole arguments and sends the calls back whole", async () => {
    const { worker, log, server } = await start(loadTranscript("gemini", "streamed-arguments"))
    const result = await worker.run("Plan a trip from Lyon.")
    expect(result.status).toBe("finished")
    expect(log).toEqual([
      'plan_route:{"from":"Lyon","stops":[{"city":"Dijon","nights":2},{"city":"Strasbourg, Grand Est","nights":1.5}],"avoid_tolls":true,"note":null,"tags":["scenic \\"slow\\" route"]}',
      'check_weather:{"city":"Dijon","days":3}'
    ])
    type Body = { toolConfig?: unknown; contents: Array<{ parts: Array<{ functionCall?: { args?: unknown }; thoughtSignature?: string }> }> }
    const [first, second] = server.requests.map((request) => JSON.parse(request.body) as Body)
    expect(first?.toolConfig).toEqual({ functionCallingConfig: { streamFunctionCallArguments: true } })
    const calls = (second?.contents ?? []).flatMap((content) => content.parts).filter((part) => part.functionCall !== undefined)
    expect(calls.map((part) => part.functionCall?.args)).toEqual([
      { from: "Lyon", stops: [{ city: "Dijon", nights: 2 }, { city: "Strasbourg, Grand Est", nights: 1.5 }], avoid_tolls: true, note: null, tags: ['scenic "slow" route'] },
      { city: "Dijon", days: 3 }
    ])
    expect(calls[0]?.thoughtSignature).toMatch(/^Ck8B/)
  })

  it("never runs a streamed call that was interrupted", async () => {
    const { worker, log } = await start(loadTranscript("gemini", "streamed-arguments-interrupted"))
    const result = await worker.run("Clean up the app folder.")
    expect(log).toEqual([])
    expect(result.items.some((item) => item.type === "function_call")).toBe(false)
  })
})
