import { Effect, Schema } from "effect"
import { describe, expect, expectTypeOf, it } from "vitest"
import { z } from "zod"
import { z as z3 } from "zod/v3"
import { jsonSchema } from "../../src/schema/codec.ts"
import { defineTool } from "../../src/tool/define-tool.ts"
import { toolFailure } from "../../src/tool/tool-failure.ts"
import { toolGroup } from "../../src/tool/tool-group.ts"
import type { ToolContext } from "../../src/tool/tool.ts"
import { ExecutionFailed, InvalidArgument } from "../../src/tool/tool-error.ts"
import { registerDefinitions } from "../../src/tool-server/registration.ts"
import { ToolServer, type ToolServerHandle } from "../../src/tool-server/tool-server.ts"
import { ToolExecution } from "../../src/tool-server/tool-server-error.ts"
import type { ToolDefinition } from "../../src/tool/tool.ts"

const serve = (...definitions: ReadonlyArray<ToolDefinition>): ToolServerHandle => {
  const handle = new ToolServer().handle()
  registerDefinitions(handle, definitions)
  return handle
}

const failureOf = async (promise: Promise<unknown>): Promise<ToolExecution> => {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e
  )
  expect(error).toBeInstanceOf(ToolExecution)
  return error as ToolExecution
}

const weatherSources = {
  effect: Schema.Struct({
    city: Schema.String,
    days: Schema.optional(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 14 })))
  }),
  zod4: z.object({ city: z.string(), days: z.int().min(1).max(14).optional() }),
  zod3: z3.object({ city: z3.string(), days: z3.number().int().min(1).max(14).optional() }),
  raw: jsonSchema<{ city: string; days?: number }>({
    type: "object",
    properties: { city: { type: "string" }, days: { type: "integer", minimum: 1, maximum: 14 } },
    required: ["city"],
    additionalProperties: false
  })
} as const

describe("defineTool", () => {
  describe.each(Object.entries(weatherSources))("with a %s schema", (_source, parameters) => {
    const weather = defineTool({
      name: "weather",
      description: "Forecast for a city",
      parameters,
      execute: (args: { readonly city: string; readonly days?: number | undefined }) => ({ city: args.city, days: args.days ?? 1 })
    })
    const handle = serve(weather)

    it("decodes valid arguments and returns JSON for non-string results", async () => {
      expect(await handle.callTool("weather", '{"city":"Kyoto","days":3}')).toBe('{"city":"Kyoto","days":3}')
      expect(await handle.callTool("weather", '{"city":"Oslo"}')).toBe('{"city":"Oslo","days":1}')
    })

    it("shows the model a closed object schema without $schema", () => {
      const schema = handle.getTool("weather")?.meta.schema as Record<string, unknown>
      expect(schema.type).toBe("object")
      expect(schema.additionalProperties).toBe(false)
      expect(schema.$schema).toBeUndefined()
      expect(Object.keys(schema.properties as object)).toEqual(["city", "days"])
    })

    it.each([
      ['{"city":', "arguments are not valid JSON"],
      ["[1,2]", "arguments must be a JSON object, got array"],
      ['"Kyoto"', "arguments must be a JSON object, got string"],
      ["null", "arguments must be a JSON object, got null"],
      ['{"days":3}', "city"],
      ['{"city":"Kyoto","days":20}', "days"],
      ['{"city":"Kyoto","days":2.5}', "days"],
      ['{"city":"Kyoto","extra":true}', "extra"],
      ['{"city":"Kyoto","days":null}', "days"]
    ])("refuses %s with InvalidArgument naming the problem", async (raw, mention) => {
      const failure = await failureOf(handle.callTool("weather", raw))
      expect(failure.error).toBeInstanceOf(InvalidArgument)
      expect(failure.message).toContain(mention)
      expect(failure.message.split("\n")).toHaveLength(1)
    })
  })

  it("infers the handler's argument type from each schema source", () => {
    defineTool({
      name: "typed",
      description: "",
      parameters: weatherSources.zod4,
      execute: (args) => {
        expectTypeOf(args.city).toEqualTypeOf<string>()
        expectTypeOf(args.days).toEqualTypeOf<number | undefined>()
        return ""
      }
    })
    defineTool({
      name: "typed_effect",
      description: "",
      parameters: weatherSources.effect,
      execute: (args) => {
        expectTypeOf(args.city).toEqualTypeOf<string>()
        // @ts-expect-error: not a field of the schema
        void args.country
        return ""
      }
    })
  })

  it("returns strings as they are, never quoted", async () => {
    const handle = serve(defineTool({ name: "greet", description: "", parameters: weatherSources.zod4, execute: ({ city }) => `Hello, ${city}!` }))
    expect(await handle.callTool("greet", '{"city":"Nara"}')).toBe("Hello, Nara!")
  })

  it("turns every failure form into ExecutionFailed with the message", async () => {
    const handle = serve(
      defineTool({ name: "throws", description: "", execute: () => { throw new Error("boom") } }),
      defineTool({ name: "rejects", description: "", execute: async () => Promise.reject(new Error("async boom")) }),
      defineTool({ name: "effect_fails", description: "", execute: () => Effect.fail("effect boom") }),
      defineTool({ name: "result_fails", description: "", execute: () => toolFailure("no such city") }),
      defineTool({ name: "bigint", description: "", execute: () => ({ n: 1n }) })
    )
    for (const [name, message] of [
      ["throws", "boom"],
      ["rejects", "async boom"],
      ["effect_fails", "effect boom"],
      ["result_fails", "no such city"],
      ["bigint", "not JSON-serialisable"]
    ] as const) {
      const failure = await failureOf(handle.callTool(name, "{}"))
      expect(failure.error).toBeInstanceOf(ExecutionFailed)
      expect(failure.message).toContain(message)
    }
  })

  it("runs Effect handlers and passes their value through the output rule", async () => {
    const handle = serve(defineTool({ name: "eff", description: "", execute: () => Effect.succeed({ ok: true }) }))
    expect(await handle.callTool("eff", "{}")).toBe('{"ok":true}')
  })

  it("accepts exactly {} for a tool without arguments", async () => {
    const handle = serve(defineTool({ name: "now", description: "", execute: () => "12:00" }))
    expect(handle.getTool("now")?.meta.schema).toEqual({ type: "object", properties: {}, additionalProperties: false })
    expect(await handle.callTool("now", "{}")).toBe("12:00")
    for (const raw of ['{"x":1}', "[]", "1", "", "null"]) {
      const failure = await failureOf(handle.callTool("now", raw))
      expect(failure.error).toBeInstanceOf(InvalidArgument)
    }
  })

  it("creates state once per registration, through the factory", async () => {
    let created = 0
    const counter = defineTool({
      name: "counter",
      description: "",
      state: () => {
        created++
        return { n: 0 }
      },
      execute: (_args, _ctx, state) => ++state.n
    })
    expect(created).toBe(0)
    const first = serve(counter)
    const second = serve(counter)
    expect(created).toBe(2)
    expect(await first.callTool("counter", "{}")).toBe("1")
    expect(await first.callTool("counter", "{}")).toBe("2")
    expect(await second.callTool("counter", "{}")).toBe("1")
  })
})

describe("toolGroup", () => {
  class Notes {
    private readonly items: Array<string> = []
    add(args: { text: string }): string {
      this.items.push(args.text)
      return `saved #${this.items.length}`
    }
    list(): ReadonlyArray<string> {
      return this.items
    }
    whoCalled(_args: Record<string, never>, context: ToolContext): string {
      return context.callId
    }
  }

  it("exposes an object's methods as tools sharing the object", async () => {
    const notes = new Notes()
    const tools = toolGroup(notes, {
      add: { description: "Save a note", parameters: z.object({ text: z.string() }) },
      list: { description: "List notes" },
      whoCalled: { description: "Echo the call id", name: "who_called" }
    })
    const handle = serve(...Object.values(tools))
    expect(handle.names()).toEqual(["add", "list", "who_called"])
    expect(await handle.callTool("add", '{"text":"milk"}')).toBe("saved #1")
    expect(await handle.callTool("add", '{"text":"eggs"}')).toBe("saved #2")
    expect(await handle.callTool("list", "{}")).toBe('["milk","eggs"]')
    expect(await handle.callTool("who_called", "{}", { callId: "c1" })).toBe("c1")
    expect(handle.getTool("add")?.meta.descriptionText).toBe("Save a note")
  })

  it("rejects at compile time a method that does not take the decoded arguments", () => {
    const notes = new Notes()
    toolGroup(notes, {
      // @ts-expect-error: add expects { text: string }, the schema decodes { title: string }
      add: { description: "", parameters: z.object({ title: z.string() }) }
    })
    expect(() =>
      toolGroup(notes, {
        // @ts-expect-error: not a method of Notes
        remove: { description: "" }
      })
    ).toThrow(TypeError)
  })
})

describe("a tool without parameters", () => {
  it("types its arguments as an empty object, not any", () => {
    defineTool({
      name: "now",
      description: "",
      execute: (args) => {
        expectTypeOf(args).toEqualTypeOf<Record<string, never>>()
        // @ts-expect-error: there are no arguments to read
        void args.foo.bar
        return ""
      }
    })
  })
})
