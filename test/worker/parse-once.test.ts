import { describe, expect, it } from "vitest"
import { z } from "zod"
import type { Item } from "../../src/llm/item.ts"
import { restoreStrictArguments } from "../../src/schema/provider-tools.ts"
import { defineTool } from "../../src/tool/define-tool.ts"
import type { ParsedArguments, Tool, ToolContext } from "../../src/tool/tool.ts"
import { ToolMeta } from "../../src/tool/tool-meta.ts"
import { PreToolCall } from "../../src/worker/hooks.ts"
import { Worker } from "../../src/worker/worker.ts"
import { ScriptedClient, textResponse, toolCallResponse } from "./support/scripted-client.ts"

const outputs = (items: ReadonlyArray<Item>) => items.flatMap((i) => (i.type === "function_call_output" ? [i] : []))

const weatherSchema = {
  type: "object",
  properties: { city: { type: "string" }, days: { type: "integer" } },
  required: ["city"],
  additionalProperties: false
} as const

/** A hand-written tool that records which entry point the tool server used. */
class Recording implements Tool {
  readonly texts: Array<string> = []
  readonly values: Array<ParsedArguments> = []
  constructor(private readonly parsed: boolean) {}
  async execute(argumentsJson: string, _context: ToolContext): Promise<string> {
    this.texts.push(argumentsJson)
    return "text"
  }
  get executeParsed(): ((args: ParsedArguments, context: ToolContext) => Promise<string>) | undefined {
    if (!this.parsed) return undefined
    return async (args) => {
      this.values.push(args)
      return "value"
    }
  }
}

const run = async (tool: Tool, args: string, scheme: "anthropic" | "openai-chat" = "anthropic") => {
  const worker = Worker.create({ client: new ScriptedClient([toolCallResponse([{ id: "c1", name: "weather", args }]), textResponse("done")], scheme) })
  worker.registerTool(() => [ToolMeta.make("weather").inputSchema(weatherSchema), tool])
  return outputs((await worker.run("go")).items)
}

describe("the Worker parses argument text once", () => {
  it("hands the parsed object to a tool that takes one, and the text to one that does not", async () => {
    const parsed = new Recording(true)
    expect((await run(parsed, '{"city":"Lisbon"}'))[0]?.output).toBe("value")
    expect(parsed.values).toEqual([{ city: "Lisbon" }])
    expect(parsed.texts).toEqual([])
    const text = new Recording(false)
    expect((await run(text, '{"city": "Lisbon"}'))[0]?.output).toBe("text")
    expect(text.texts).toEqual(['{"city": "Lisbon"}'])
  })

  it("gives a text-only tool the restored arguments printed when OpenAI strict nulls were removed, the model's text otherwise", async () => {
    const text = new Recording(false)
    await run(text, '{"city":"Lisbon","days":null}', "openai-chat")
    await run(text, '{"city": "Porto", "days": 2}', "openai-chat")
    expect(text.texts).toEqual(['{"city":"Lisbon"}', '{"city": "Porto", "days": 2}'])
    const parsed = new Recording(true)
    await run(parsed, '{"city":"Lisbon","days":null}', "openai-chat")
    expect(parsed.values).toEqual([{ city: "Lisbon" }])
  })

  it("never calls a tool on refused text: malformed, not an object, too deep", async () => {
    const parsed = new Recording(true)
    const problems = await Promise.all(['{"city":', "[1]", `{"v":${"[".repeat(100)}${"]".repeat(100)}}`].map((args) => run(parsed, args)))
    expect(problems.map((o) => o[0]?.output)).toEqual([
      expect.stringMatching(/^Invalid arguments for tool "weather": the arguments are not valid JSON/),
      'Invalid arguments for tool "weather": the arguments must be a JSON object, got an array',
      'Invalid arguments for tool "weather": arguments nested deeper than 64 levels'
    ])
    expect(parsed.values).toEqual([])
  })

  it("parses the rewritten text when a PreToolCall hook rewrites the arguments", async () => {
    const parsed = new Recording(true)
    const worker = Worker.create({ client: new ScriptedClient([toolCallResponse([{ id: "c1", name: "weather", args: '{"city":"Lisbon"}' }]), textResponse("done")]) })
    worker.registerTool(() => [ToolMeta.make("weather").inputSchema(weatherSchema), parsed])
    worker.addHook("PreToolCall", () => PreToolCall.rewriteArguments('{"city":"Porto","days":2}'))
    await worker.run("go")
    expect(parsed.values).toEqual([{ city: "Porto", days: 2 }])
  })

  it("decodes a defineTool tool's value directly, with the same refusals as from text", async () => {
    const seen: Array<unknown> = []
    const typed = defineTool({
      name: "weather",
      description: "weather",
      parameters: z.object({ city: z.string().trim(), days: z.int().min(1).max(14).default(1) }),
      execute: (args) => {
        seen.push(args)
        return "ok"
      }
    })
    const [meta, tool] = typed()
    const context = { callId: "x", signal: new AbortController().signal, meta }
    await expect(tool.executeParsed?.({ city: " Lisbon " }, context)).resolves.toBe("ok")
    await expect(tool.execute('{"city":" Lisbon "}', context)).resolves.toBe("ok")
    expect(seen).toEqual([{ city: "Lisbon", days: 1 }, { city: "Lisbon", days: 1 }])
    await expect(tool.executeParsed?.({ city: "x", days: 20 }, context)).rejects.toMatchObject({ _tag: "InvalidArgument" })
    await expect(tool.execute('{"city":"x","days":20}', context)).rejects.toMatchObject({ _tag: "InvalidArgument" })
  })
})

describe("restoreStrictArguments", () => {
  const schema = {
    type: "object",
    properties: { a: { type: "string" }, list: { type: "array", items: { type: "object", properties: { b: { type: "integer" } }, additionalProperties: false } } },
    additionalProperties: false
  } as const

  it("returns the model's own object when no null was removed, a new one when one was", () => {
    const untouched = JSON.parse('{"a":"x","list":[{"b":1}]}') as unknown
    expect(restoreStrictArguments(schema, untouched)).toBe(untouched)
    const nulls = JSON.parse('{"a":null,"list":[{"b":null}]}') as unknown
    const restored = restoreStrictArguments(schema, nulls)
    expect(restored).toEqual({ list: [{}] })
    expect(Object.getPrototypeOf(restored)).toBe(Object.prototype)
  })

  it("keeps a model-sent __proto__ key an own property, as JSON.parse does", () => {
    const restored = restoreStrictArguments(schema, JSON.parse('{"a":null,"__proto__":{"polluted":true}}')) as Record<string, unknown>
    expect(Object.getPrototypeOf(restored)).toBe(Object.prototype)
    expect(Object.hasOwn(restored, "__proto__")).toBe(true)
    expect(({} as Record<string, unknown>)["polluted"]).toBeUndefined()
    expect(JSON.stringify(restored)).toBe('{"__proto__":{"polluted":true}}')
  })
})
