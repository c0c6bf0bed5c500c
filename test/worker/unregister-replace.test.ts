import { describe, expect, expectTypeOf, it } from "vitest"
import { z } from "zod"
import {
  type CacheLockedWorker,
  defineTool,
  DuplicateName,
  RegistrationFailed,
  ToolServer,
  Worker,
  WorkerLocked
} from "../../src/index.ts"
import type { SchemeName } from "../../src/index.ts"
import { ScriptedClient } from "./support/scripted-client.ts"

const workerFor = (scheme: SchemeName = "anthropic", toolServer?: ToolServer) =>
  Worker.create({ client: new ScriptedClient([], scheme), ...(toolServer === undefined ? {} : { toolServer }) })

const answering = (name: string, answer: string, description = `tool ${name}`) =>
  defineTool({ name, description, parameters: z.object({ q: z.string() }), execute: () => answer })

describe("unregister and replace through the Worker", () => {
  it("replaces a tool of the same name: new schema and instance, one version bump", async () => {
    const worker = workerFor()
    worker.registerTool(answering("a", "old"))
    const handle = worker.toolServerHandle()
    const before = handle.version
    const report = worker.replaceTool(answering("a", "new", "updated"))
    expect(report.replaced).toEqual(["a"])
    expect(report.removed).toEqual([])
    expect(handle.version).toBe(before + 1)
    expect(handle.toolDefinitionsSorted().map((s) => s.description)).toEqual(["updated"])
    expect(await handle.callTool("a", '{"q":"x"}')).toBe("new")
  })

  it("replaceTool registers a name that was not there; registerTool still refuses duplicates", () => {
    const worker = workerFor()
    expect(worker.replaceTool(answering("a", "1")).replaced).toEqual([])
    expect(() => worker.registerTool(answering("a", "2"))).toThrow(DuplicateName)
  })

  it("unregisters and says whether the name was registered", async () => {
    const worker = workerFor()
    worker.registerTools([answering("a", "1"), answering("b", "2")])
    const handle = worker.toolServerHandle()
    const version = handle.version
    expect(worker.unregisterTool("a")).toBe(true)
    expect(worker.unregisterTool("a")).toBe(false)
    expect(handle.version).toBe(version + 1)
    expect(handle.names()).toEqual(["b"])
    await expect(handle.callTool("a", '{"q":"x"}')).rejects.toMatchObject({ _tag: "ToolNotFound" })
  })

  it("is all-or-nothing: a failing replacement keeps the old tool and removes nothing", async () => {
    const worker = workerFor()
    worker.registerTools([answering("a", "old"), answering("b", "b")])
    const throwing = () => {
      throw new Error("factory broke")
    }
    expect(() => worker.updateTools({ add: [answering("c", "c"), throwing], remove: ["b"], replace: true })).toThrow(RegistrationFailed)
    expect(worker.toolServerHandle().names()).toEqual(["a", "b"])
    expect(await worker.toolServerHandle().callTool("a", '{"q":"x"}')).toBe("old")
  })

  it("removes before it adds, so a change may swap two names the provider spells alike", () => {
    const worker = workerFor("openai-chat")
    worker.registerTool(answering("files.read", "1"))
    expect(() => worker.registerTool(answering("files_read", "2"))).toThrow(RegistrationFailed)
    const report = worker.updateTools({ add: [answering("files_read", "2")], remove: ["files.read", "ghost"] })
    expect(report.removed).toEqual(["files.read"])
    expect(report.notFound).toEqual(["ghost"])
    expect(worker.toolServerHandle().names()).toEqual(["files_read"])
  })

  it("a call already running finishes on the instance it started with", async () => {
    const worker = workerFor()
    let release!: () => void
    const gate = new Promise<void>((resolve) => (release = resolve))
    worker.registerTool(
      defineTool({ name: "slow", description: "", execute: async () => (await gate, "first instance") })
    )
    const running = worker.toolServerHandle().callTool("slow", "{}")
    worker.unregisterTool("slow")
    release()
    expect(await running).toBe("first instance")
  })

  it("is refused while cache-locked, by type and at run time; a locked worker on a shared server sees the change", () => {
    const server = new ToolServer()
    const locked = workerFor("anthropic", server).lock()
    // @ts-expect-error: a locked worker cannot change its tools
    expect(() => locked.unregisterTool("a")).toThrow(WorkerLocked)
    // @ts-expect-error: nor replace them
    expect(() => locked.replaceTool(answering("a", "1"))).toThrow(WorkerLocked)
    expectTypeOf<CacheLockedWorker>().not.toHaveProperty("updateTools")
    const other = workerFor("anthropic", server)
    const before = locked.toolServerHandle().version
    other.replaceTool(answering("a", "1"))
    expect(locked.toolServerHandle().version).toBe(before + 1)
  })

  it("handles expose no way to unregister or replace", () => {
    const handle = new ToolServer().handle()
    for (const method of ["unregisterTool", "replaceTool", "updateTools"]) expect(method in handle).toBe(false)
    // @ts-expect-error: not part of the handle's type
    void handle.unregisterTool
  })
})
