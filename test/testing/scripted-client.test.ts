import { z } from "zod"
import { describe, expect, it } from "vitest"
import { defineTool, Item, Worker } from "../../src/index.ts"
import type { Event, SchemeName } from "../../src/index.ts"
import { reply, replyError, scriptedClient } from "../../src/testing/index.ts"
import { digest, expectedDigest, SCHEMES } from "./script-digest.ts"
import { effectiveStopReason } from "../../src/testing/script.ts"

const weather = defineTool({
  name: "get_weather",
  description: "Weather for a city",
  parameters: z.object({ city: z.string() }),
  execute: ({ city }) => `sunny in ${city}`
})

const collect = async (client: ReturnType<typeof scriptedClient>, signal?: AbortSignal) => {
  const events: Array<Event> = []
  let outcome = "completed"
  try {
    for await (const event of client.stream({ model: "m", items: [Item.userText("hi")], tools: [], config: {} }, signal === undefined ? {} : { signal })) events.push(event)
  } catch (error) {
    const tagged = error as { _tag: string; code?: string; message: string }
    outcome = tagged._tag === "LlmProviderError" ? `${tagged._tag} ${tagged.code}: ${tagged.message}` : tagged._tag
  }
  return { events, outcome }
}

describe("scriptedClient: the same neutral script, in process", () => {
  it.each(SCHEMES)("%s: yields what the real client decodes from the replay provider", async (scheme: SchemeName) => {
    const steps = [
      reply().reasoning("Two cities.", { signature: "c2ln" }).text("Checking.").toolCall("get_weather", { city: "Paris" }, { id: "call_1" }).usage({ inputTokens: 20, outputTokens: 9 }),
      reply().text("Half").error("invalid_request_error", "broken"),
      reply().text("Half").cut()
    ]
    for (const step of steps) {
      const { events, outcome } = await collect(scriptedClient({ scheme, script: [step] }))
      expect(digest(events, outcome)).toEqual(expectedDigest(scheme, step, effectiveStopReason(step)))
    }
  })

  it("runs a Worker with no HTTP, records every request, and answers HTTP error steps with LlmHttpError", async () => {
    const client = scriptedClient({
      scheme: "anthropic",
      script: [reply().toolCall("get_weather", { city: "Paris" }, { id: "toolu_1" }), reply().text("Sunny in Paris."), replyError(429, { retryAfterSeconds: 3 })]
    })
    const worker = Worker.create({ client, systemPrompt: "Be brief." })
    worker.registerTool(weather)
    const result = await worker.run("Weather in Paris?")
    expect(result.items.map((item) => item.type)).toEqual(["message", "function_call", "function_call_output", "message"])
    expect(result.items[2]).toMatchObject({ output: "sunny in Paris", isError: false })
    expect(client.calls).toHaveLength(2)
    expect(client.calls[1]?.request.items.map((item) => item.type)).toEqual(["message", "function_call", "function_call_output"])
    expect(client.calls[0]?.body).toBe(client.encodeRequest(client.calls[0]!.request))
    const failure = await worker.run("again").catch((error: { _tag: string; cause?: { _tag: string; status: number; body: string } }) => error)
    expect(failure).toMatchObject({ _tag: "ClientFailed" })
    const http = (failure as { error?: { _tag: string; status: number; body: string } }).error
    expect([http?._tag, http?.status, JSON.parse(http?.body ?? "{}").error.type]).toEqual(["LlmHttpError", 429, "rate_limit_error"])
  })

  it("cancellation ends a stall or a hang at once with LlmCancelled", async () => {
    for (const step of [reply().text("Hi").stall(60_000).text("!"), reply().text("Hi").hang()]) {
      const controller = new AbortController()
      const client = scriptedClient({ script: [step] })
      const done = collect(client, controller.signal)
      await new Promise((resolve) => setTimeout(resolve, 20))
      controller.abort()
      const { events, outcome } = await done
      expect(outcome).toBe("LlmCancelled")
      expect(events.some((event) => event.type === "block_delta")).toBe(true)
    }
  })

  it("refuses an empty script", () => {
    expect(() => scriptedClient({ script: [] })).toThrow(/at least one step/)
  })
})
