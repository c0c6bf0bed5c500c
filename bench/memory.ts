/**
 * Heap bytes per registered tool at 10,000 typed tools: what defining costs (codec, compiled validator, meta)
 * and what registering adds (tool instance, entry, neutral spec, map slot), per schema source. Needs `--expose-gc`.
 */
import { Schema } from "effect"
import { z } from "zod"
import { type ArgumentSchema, jsonSchema } from "#internal/schema/codec"
import { defineTool } from "#internal/tool/define-tool"
import type { ToolDefinition } from "#internal/tool/tool"
import { registerDefinitions } from "#internal/tool-server/registration"
import { ToolServer } from "#internal/tool-server/tool-server"
import { formatBytes, markdownTable, printHeader } from "./support/report.ts"

const COUNT = 10_000

const gc = globalThis.gc
if (gc === undefined) {
  console.error("bench/memory.ts needs --expose-gc: npx tsx --expose-gc bench/memory.ts")
  process.exit(1)
}

const settledHeap = (): number => {
  gc()
  gc()
  return process.memoryUsage().heapUsed
}

/** Each tool gets its own schema object (a distinct bound and description), as independently written tools do. */
const schemas: Record<string, (i: number) => ArgumentSchema> = {
  "raw JSON Schema": (i) =>
    jsonSchema<{ city: string; days?: number }>({
      type: "object",
      properties: {
        city: { type: "string", description: `City for tool ${i}` },
        days: { type: "integer", minimum: 1, maximum: 14 + i }
      },
      required: ["city"],
      additionalProperties: false
    }),
  "zod 4": (i) => z.object({ city: z.string().describe(`City for tool ${i}`), days: z.int().min(1).max(14 + i).optional() }),
  "Effect Schema": (i) =>
    Schema.Struct({
      city: Schema.String.annotate({ description: `City for tool ${i}` }),
      days: Schema.optionalKey(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 14 + i })))
    })
}

const execute = async (args: unknown): Promise<string> => JSON.stringify(args)

interface Measured {
  readonly source: string
  readonly definePerTool: number
  readonly registerPerTool: number
  readonly msDefine: number
  readonly msRegister: number
}

const measureSource = (source: string, schemaFor: (i: number) => ArgumentSchema): Measured => {
  // Schemas are built before the first reading: they are the user's, not ours.
  const argumentSchemas = Array.from({ length: COUNT }, (_, i) => schemaFor(i))
  const beforeDefine = settledHeap()
  let t0 = performance.now()
  const definitions: Array<ToolDefinition> = argumentSchemas.map((parameters, i) =>
    defineTool({ name: `tool_${String(i).padStart(5, "0")}`, description: `Tool number ${i}`, parameters, execute })
  )
  const msDefine = performance.now() - t0
  const afterDefine = settledHeap()
  const handle = new ToolServer().handle()
  t0 = performance.now()
  registerDefinitions(handle, definitions)
  const msRegister = performance.now() - t0
  const afterRegister = settledHeap()
  if (handle.names().length !== COUNT || definitions.length !== COUNT || argumentSchemas.length !== COUNT) {
    throw new Error("registration lost tools")
  }
  return {
    source,
    definePerTool: (afterDefine - beforeDefine) / COUNT,
    registerPerTool: (afterRegister - afterDefine) / COUNT,
    msDefine,
    msRegister
  }
}

/** The floor: the same name, description, JSON Schema and handler in a plain Map, no codec and no validator. */
const measurePlainMap = (): number => {
  const before = settledHeap()
  const map = new Map<string, { name: string; description: string; schema: unknown; execute: typeof execute }>()
  for (let i = 0; i < COUNT; i++) {
    const name = `tool_${String(i).padStart(5, "0")}`
    map.set(name, { name, description: `Tool number ${i}`, schema: schemas["raw JSON Schema"]?.(i), execute })
  }
  const bytes = (settledHeap() - before) / COUNT
  if (map.size !== COUNT) throw new Error("map lost entries")
  return bytes
}

const main = (): void => {
  printHeader(`Memory: heap per registered tool at ${COUNT.toLocaleString("en")} typed tools`)
  const floor = measurePlainMap()
  const results = Object.entries(schemas).map(([source, schemaFor]) => measureSource(source, schemaFor))
  console.log(
    markdownTable(
      ["schema source", "defineTool / tool", "registerDefinitions / tool", "total / tool", "× plain Map floor", "define 10k", "register 10k"],
      results.map((r) => [
        r.source,
        formatBytes(r.definePerTool),
        formatBytes(r.registerPerTool),
        formatBytes(r.definePerTool + r.registerPerTool),
        `${((r.definePerTool + r.registerPerTool) / floor).toFixed(1)}×`,
        `${r.msDefine.toFixed(0)} ms`,
        `${r.msRegister.toFixed(0)} ms`
      ])
    )
  )
  console.log(
    `\nFloor: a plain \`Map\` of { name, description, JSON Schema, handler } takes ${formatBytes(floor)} per tool ` +
      "(schema objects included there, excluded above, where the user's schema exists before defining). " +
      "Heap measured with `process.memoryUsage().heapUsed` after two forced GCs; ajv's compiled validator code " +
      "lives partly outside the JS heap and is not fully counted."
  )
}

main()
