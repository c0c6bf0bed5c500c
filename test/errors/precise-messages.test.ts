import { describe, expect, expectTypeOf, it } from "vitest"
import { z } from "zod"
import {
  type CacheLockedWorker,
  DuplicateName,
  type MutableWorker,
  StaleWorker,
  UnsupportedSchemaError,
  Worker,
  WorkerBusy,
  defineTool
} from "../../src/index.ts"
import { ScriptedClient, textResponse } from "../worker/support/scripted-client.ts"

const tool = (name: string) => defineTool({ name, description: "d", execute: () => "ok" })
const failure = (run: () => unknown): Error => {
  try {
    run()
  } catch (thrown) {
    return thrown as Error
  }
  throw new Error("expected a throw")
}

describe("registration messages", () => {
  it("a name twice in one batch says so, apart from one already registered", () => {
    const worker = Worker.create({ client: new ScriptedClient([]) })
    const inBatch = failure(() => worker.registerTools([tool("a"), tool("a")]))
    expect(inBatch).toBeInstanceOf(DuplicateName)
    expect(inBatch.message).toBe('tool "a" appears twice in this batch; nothing was registered')
    expect(worker.toolServerHandle().names()).toEqual([])
    worker.registerTool(tool("a"))
    expect(failure(() => worker.registerTool(tool("a"))).message).toBe('tool "a" is already registered')
  })

  it("errors name registerTool() when registerTool() was called", async () => {
    const worker = Worker.create({ client: new ScriptedClient([{ ...textResponse("ok"), delayMs: 20 }]) })
    const running = worker.run("x")
    const busy = failure(() => worker.registerTool(tool("a")))
    expect(busy).toBeInstanceOf(WorkerBusy)
    expect(busy.message).toBe("registerTool() is not allowed while a run is in progress")
    expect(failure(() => worker.registerTools([tool("a")])).message).toBe("registerTools() is not allowed while a run is in progress")
    await running
    worker.lock()
    expect(failure(() => worker.registerTool(tool("b"))).message).toMatch(/^registerTool\(\) was used on a MutableWorker that lock\(\) retired/)
  })
})

describe("schema messages", () => {
  it("a union at the root says it is a union and must be an object", () => {
    const error = failure(() =>
      defineTool({ name: "either", description: "d", parameters: z.union([z.object({ a: z.string() }), z.object({ b: z.number() })]), execute: () => 1 })
    )
    expect(error).toBeInstanceOf(UnsupportedSchemaError)
    expect(error.message).toBe(
      `tool "either": a tool's arguments must be a JSON object, but the schema's root is a union (anyOf of 2 alternatives); make the root an object and put the union in one of its properties`
    )
    expect(error.message).not.toContain("type null")
  })

  it("z.date() is a tagged error naming the tool and the property path", () => {
    const error = failure(() =>
      defineTool({ name: "book", description: "d", parameters: z.object({ trip: z.object({ start: z.date() }) }), execute: () => 1 })
    ) as UnsupportedSchemaError
    expect(error).toBeInstanceOf(UnsupportedSchemaError)
    expect(error).toMatchObject({ _tag: "UnsupportedSchemaError", tool: "book", path: "trip.start" })
    expect(error.message).toBe(
      'tool "book": property "trip.start": Date cannot be represented in JSON Schema, so a model cannot send it; declare an ISO 8601 string (z.iso.datetime()) and convert it in the handler'
    )
    const list = failure(() => defineTool({ name: "ids", description: "d", parameters: z.object({ ids: z.array(z.bigint()) }), execute: () => 1 }))
    expect(list).toMatchObject({ _tag: "UnsupportedSchemaError", path: "ids[]" })
  })

  it("any other schema library's throw is tagged with the tool's name too", () => {
    // A Standard JSON Schema library whose converter throws its own, untagged error.
    const converterThrows = {
      "~standard": {
        version: 1 as const,
        vendor: "some-library",
        validate: (value: unknown) => ({ value }),
        jsonSchema: {
          input: (): Record<string, unknown> => {
            throw new Error("Function cannot be represented in JSON Schema")
          },
          output: (): Record<string, unknown> => ({})
        }
      }
    }
    const error = failure(() => defineTool({ name: "fx", description: "d", parameters: converterThrows, execute: () => 1 }))
    expect(error).toBeInstanceOf(UnsupportedSchemaError)
    expect(error.message).toBe('tool "fx": its parameters cannot be turned into a JSON Schema: Function cannot be represented in JSON Schema')
    expect((error as UnsupportedSchemaError).tool).toBe("fx")
  })
})

describe("lock() misuse", () => {
  it("the retired worker's error says which object to use", async () => {
    const worker = Worker.create({ client: new ScriptedClient([textResponse("ok")]) })
    const locked = worker.lock()
    const error = await worker.run("x").catch((e: unknown) => e)
    expect(error).toBeInstanceOf(StaleWorker)
    expect(error).toMatchObject({ method: "run", retiredBy: "lock" })
    expect((error as StaleWorker).message).toBe(
      "run() was used on a MutableWorker that lock() retired; use the CacheLockedWorker lock() returned (const locked = worker.lock(); locked.run(…))"
    )
    locked.unlock()
    expect(failure(() => locked.config).message).toBe(
      "config was used on a CacheLockedWorker that unlock() retired; use the MutableWorker unlock() returned (const mutable = worker.unlock(); mutable.config)"
    )
  })

  it("the types keep each state's methods apart", () => {
    expectTypeOf<MutableWorker["lock"]>().returns.toEqualTypeOf<CacheLockedWorker>()
    expectTypeOf<CacheLockedWorker>().not.toHaveProperty("lock")
    expectTypeOf<MutableWorker>().not.toHaveProperty("unlock")
  })
})
