import { Effect, Schema } from "effect"
import { describe, expect, expectTypeOf, it } from "vitest"
import { z } from "zod"
import { jsonSchema } from "../../../src/schema/codec.ts"
import { llmTool, PluginConfigError, remoteTool, toolsOf, type RemoteCallContext } from "../../../src/remote/plugin/index.ts"

const context = (): RemoteCallContext => ({ name: "t", callId: "c1", rawArguments: "{}", instanceId: undefined, signal: new AbortController().signal })

describe("declaring remote tools", () => {
  it("tells the host exactly what the decoder accepts, for zod, Effect and JSON Schema", () => {
    const fromZod = remoteTool({ name: "a", parameters: z.object({ city: z.string() }), execute: ({ city }) => city })
    const fromEffect = remoteTool({ name: "b", parameters: Schema.Struct({ city: Schema.String }), execute: ({ city }) => city })
    const fromJson = remoteTool({
      name: "c",
      parameters: jsonSchema<{ city: string }>({ type: "object", properties: { city: { type: "string" } }, required: ["city"], additionalProperties: false }),
      execute: ({ city }) => city
    })
    for (const tool of [fromZod, fromEffect, fromJson]) {
      expect(tool.parameters).toEqual({ type: "object", properties: { city: { type: "string" } }, required: ["city"], additionalProperties: false })
      expect(tool.codec.decode({ city: 1 })).toMatchObject({ ok: false, issues: [{ path: ["city"] }] })
      expect(tool.codec.decode({ city: "Kyoto", extra: 1 })).toMatchObject({ ok: false })
    }
    expect(remoteTool({ name: "none", execute: () => 1 }).parameters).toEqual({ type: "object", properties: {}, additionalProperties: false })
  })

  it("refuses at declaration what the host would refuse", () => {
    const bad = [
      () => remoteTool({ name: "has space", execute: () => 1 }),
      () => remoteTool({ name: "x".repeat(65), execute: () => 1 }),
      () => remoteTool({ name: "t", timeoutSeconds: 0, execute: () => 1 }),
      () => remoteTool({ name: "t", timeoutSeconds: 301, execute: () => 1 }),
      () => remoteTool({ name: "t", role: "", execute: () => 1 }),
      () => remoteTool({ name: "t", parameters: { type: "string" } as never, execute: () => 1 })
    ]
    const fields = bad.map((make) => {
      try {
        make()
        return "accepted"
      } catch (e) {
        return e instanceof PluginConfigError ? e.field : String(e)
      }
    })
    expect(fields.slice(0, 5)).toEqual(["name", "name", "timeoutSeconds", "timeoutSeconds", "role"])
    expect(fields[5]).not.toBe("accepted")
  })

  it("collects @llmTool methods per instance, typed, with overrides and private methods honoured", async () => {
    class Weather {
      constructor(private readonly unit: string) {}
      @llmTool({ description: "Weather for a city", parameters: z.object({ city: z.string() }), timeoutSeconds: 5, role: "kyoto" })
      get_weather({ city }: { city: string }) {
        return { city, unit: this.unit }
      }
      @llmTool({ name: "weather.secret" })
      #secret() {
        return this.unit
      }
      hasSecret() {
        return typeof this.#secret === "function"
      }
      @llmTool()
      static version() {
        return "1"
      }
    }
    class Loud extends Weather {
      override get_weather({ city }: { city: string }) {
        return { city: city.toUpperCase(), unit: "K" }
      }
    }
    const tools = toolsOf(new Weather("C"))
    expect(tools.map((t) => [t.name, t.timeoutSeconds, t.role, t.description])).toEqual([
      ["get_weather", 5, "kyoto", "Weather for a city"],
      ["weather.secret", 30, null, ""]
    ])
    expect(await tools[0]!.handler({ city: "Kyoto" }, context())).toEqual({ city: "Kyoto", unit: "C" })
    expect(await tools[1]!.handler({}, context())).toBe("C")
    expect(await toolsOf(new Loud("C"))[0]!.handler({ city: "kyoto" }, context())).toEqual({ city: "KYOTO", unit: "K" })
    expect(toolsOf(Weather).map((t) => t.name)).toEqual(["version"])
    expect(toolsOf({})).toEqual([])
  })

  it("fails the class definition for a bad announcement", () => {
    expect(() => {
      class Bad {
        @llmTool({ name: "no spaces allowed" })
        run() {
          return 1
        }
      }
      return Bad
    }).toThrow(PluginConfigError)
  })

  it("types the handler's arguments from the schema", () => {
    const t = remoteTool({ name: "t", parameters: z.object({ n: z.number().int() }), execute: (args) => args.n + 1 })
    expectTypeOf(t.handler).parameter(0).toEqualTypeOf<{ n: number }>()
    remoteTool({
      name: "t",
      parameters: z.object({ n: z.number() }),
      // @ts-expect-error: `n` is a number, not a string
      execute: (args: { n: string }) => args.n
    })
    class Typed {
      // @ts-expect-error: the method must accept what the schema decodes to
      @llmTool({ parameters: z.object({ n: z.number() }) })
      wrong(args: { n: string }) {
        return args.n
      }
      @llmTool({ parameters: Schema.Struct({ n: Schema.Number }) })
      right(args: { n: number }, ctx: RemoteCallContext) {
        return Effect.succeed(args.n + ctx.callId.length)
      }
    }
    expect(toolsOf(new Typed()).map((x) => x.name)).toEqual(["wrong", "right"])
  })
})
