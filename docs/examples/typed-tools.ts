import { Schema } from "effect"
import { z } from "zod"
import { defineTool, jsonSchema, toolFailure, toolGroup, type ToolDefinition } from "llm-worker"

// zod 4: `args` is typed from the schema. Returning toolFailure(...) fails the call without throwing.
const weather = defineTool({
  name: "get_weather",
  description: "Weather forecast for a city",
  parameters: z.object({ city: z.string(), days: z.int().min(1).max(14).optional() }),
  execute: ({ city, days }) => (city === "Atlantis" ? toolFailure(`no forecast for ${city}`) : { city, days: days ?? 1, sky: "sunny" })
})

// Effect Schema, with state created once per registration.
const counter = defineTool({
  name: "count",
  description: "Adds to a running total",
  parameters: Schema.Struct({ by: Schema.Int }),
  state: () => ({ total: 0 }),
  execute: ({ by }, _context, state) => String((state.total += by))
})

// Raw JSON Schema, typed with jsonSchema<A>.
const echo = defineTool({
  name: "echo",
  description: "Repeats a text",
  parameters: jsonSchema<{ text: string }>({ type: "object", properties: { text: { type: "string" } }, required: ["text"] }),
  execute: ({ text }) => text
})

// toolGroup: methods of one object become tools that share it.
class Notes {
  private readonly items: Array<string> = []
  add(args: { text: string }) {
    this.items.push(args.text)
    return `saved #${this.items.length}`
  }
}
const notes = toolGroup(new Notes(), { add: { name: "notes.add", description: "Save a note", parameters: z.object({ text: z.string() }) } })

// A definition is a factory: the Worker calls it once, at registration. Here we call it by hand.
const instantiate = (definition: ToolDefinition) => {
  const [meta, tool] = definition()
  return (args: string): Promise<string> =>
    tool.execute(args, { callId: "call_1", signal: AbortSignal.timeout(1000), meta }).catch((error: { _tag: string; message: string }) => `${error._tag}: ${error.message}`)
}

const getWeather = instantiate(weather)
console.log("model sees:", JSON.stringify(weather.codec.jsonSchema))
console.log("effect schema:", JSON.stringify(counter.codec.jsonSchema))
console.log("ok:", await getWeather('{"city":"Paris","days":3}'))
console.log("invalid:", await getWeather('{"city":"Paris","days":20,"unit":"C"}'))
console.log("not json:", await getWeather("{city: Paris}"))
console.log("failure:", await getWeather('{"city":"Atlantis"}'))
const count = instantiate(counter)
console.log("state:", await count('{"by":2}'), await count('{"by":3}'))
console.log("raw:", await instantiate(echo)('{"text":"hi"}'))
console.log("group:", notes.add.toolName, await instantiate(notes.add)('{"text":"milk"}'))
