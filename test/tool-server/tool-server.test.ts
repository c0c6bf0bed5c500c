import { Effect, Exit } from "effect"
import { describe, expect, it } from "vitest"
import { fromEffect, fromFunction } from "../../src/tool/tool-constructors.ts"
import { ExecutionFailed, InvalidArgument, ToolError } from "../../src/tool/tool-error.ts"
import { ToolMeta } from "../../src/tool/tool-meta.ts"
import type { ToolDefinition } from "../../src/tool/tool.ts"
import { registerDefinitions } from "../../src/tool-server/registration.ts"
import { ToolServer } from "../../src/tool-server/tool-server.ts"
import {
  DuplicateName,
  RegistrationFailed,
  ToolCancelled,
  ToolExecution,
  ToolNotFound,
  ToolTimeout
} from "../../src/tool-server/tool-server-error.ts"

const echo = (name: string): ToolDefinition => () => [
  ToolMeta.make(name).description(`echo ${name}`),
  fromFunction((json) => `${name}:${json}`)
]

const counter = (): { definition: ToolDefinition; factoryCalls: () => number } => {
  let calls = 0
  return {
    factoryCalls: () => calls,
    definition: () => {
      calls++
      let count = 0
      return [ToolMeta.make("counter"), fromFunction(() => `count: ${count++}`)]
    }
  }
}

describe("ToolServer and ToolServerHandle", () => {
  it("runs each factory exactly once, at registration, and reuses the instance", async () => {
    const server = new ToolServer()
    const handle = server.handle()
    const c = counter()
    registerDefinitions(handle, [c.definition])
    expect(c.factoryCalls()).toBe(1)
    expect(await handle.callTool("counter", "{}")).toBe("count: 0")
    expect(await handle.callTool("counter", "{}")).toBe("count: 1")
    expect(await handle.clone().callTool("counter", "{}")).toBe("count: 2")
    expect(c.factoryCalls()).toBe(1)
  })

  it("lists definitions sorted by code unit, not locale, and keeps the same array while unchanged", () => {
    const handle = new ToolServer().handle()
    registerDefinitions(handle, ["beta", "Zeta", "alpha", "_under", "a.b", "a-b"].map(echo))
    const first = handle.toolDefinitionsSorted()
    expect(first.map((d) => d.name)).toEqual(["Zeta", "_under", "a-b", "a.b", "alpha", "beta"])
    expect(handle.toolDefinitionsSorted()).toBe(first)
    expect(Object.isFrozen(first)).toBe(true)
    const before = handle.version
    registerDefinitions(handle, [echo("gamma")])
    expect(handle.version).toBe(before + 1)
    expect(handle.toolDefinitionsSorted()).not.toBe(first)
  })

  it("shares one map across cloned handles", () => {
    const server = new ToolServer()
    const a = server.handle()
    const b = a.clone()
    registerDefinitions(a, [echo("x")])
    expect(b.getTool("x")?.meta.name).toBe("x")
    expect(server.handle().names()).toEqual(["x"])
  })

  it("refuses duplicate names, within a batch and against the set, registering nothing", () => {
    const handle = new ToolServer().handle()
    registerDefinitions(handle, [echo("a")])
    expect(() => registerDefinitions(handle, [echo("b"), echo("a")])).toThrow(DuplicateName)
    expect(() => registerDefinitions(handle, [echo("c"), echo("c")])).toThrow(DuplicateName)
    expect(handle.names()).toEqual(["a"])
  })

  it("fails the registration of a throwing factory with a typed error and registers nothing", () => {
    const handle = new ToolServer().handle()
    const boom: ToolDefinition = () => {
      throw new Error("no database")
    }
    let error: unknown
    try {
      registerDefinitions(handle, [echo("ok"), boom])
    } catch (e) {
      error = e
    }
    expect(error).toBeInstanceOf(RegistrationFailed)
    expect((error as RegistrationFailed).message).toContain("no database")
    expect(handle.names()).toEqual([])
  })

  it("refuses factories returning the wrong shape", () => {
    const handle = new ToolServer().handle()
    const bad = (() => [{ name: "fake" }, { execute: () => "" }]) as unknown as ToolDefinition
    expect(() => registerDefinitions(handle, [bad])).toThrow(RegistrationFailed)
    const noExecute = (() => [ToolMeta.make("n"), {}]) as unknown as ToolDefinition
    expect(() => registerDefinitions(handle, [noExecute])).toThrow(RegistrationFailed)
  })

  it("handles concurrent registrations through cloned handles without losing or doubling tools", async () => {
    const server = new ToolServer()
    const names = Array.from({ length: 50 }, (_, i) => `t${i}`)
    const outcomes = await Promise.allSettled(
      [...names, ...names].map(async (name) => {
        await new Promise((r) => setTimeout(r, Math.random() * 5))
        registerDefinitions(server.handle(), [echo(name)])
      })
    )
    expect(outcomes.filter((o) => o.status === "fulfilled")).toHaveLength(50)
    const rejected = outcomes.filter((o): o is PromiseRejectedResult => o.status === "rejected")
    expect(rejected.every((o) => o.reason instanceof DuplicateName)).toBe(true)
    expect(server.handle().names()).toEqual([...names].sort())
  })

  it("answers unknown names with ToolNotFound", async () => {
    const handle = new ToolServer().handle()
    await expect(handle.callTool("missing", "{}")).rejects.toBeInstanceOf(ToolNotFound)
    expect(handle.getTool("missing")).toBeUndefined()
  })

  it("turns a throwing or rejecting tool into ToolExecution(ExecutionFailed) with the message", async () => {
    const handle = new ToolServer().handle()
    registerDefinitions(handle, [
      () => [ToolMeta.make("throws"), fromFunction(() => { throw new Error("disk full") })],
      () => [ToolMeta.make("rejects"), { execute: () => Promise.reject("plain string") }],
      () => [ToolMeta.make("invalid"), { execute: () => Promise.reject(ToolError.InvalidArgument("city: required")) }]
    ])
    const failure = await handle.callTool("throws", "{}").catch((e: unknown) => e)
    expect(failure).toBeInstanceOf(ToolExecution)
    expect((failure as ToolExecution).error).toBeInstanceOf(ExecutionFailed)
    expect((failure as ToolExecution).message).toBe("disk full")
    const rejected = (await handle.callTool("rejects", "{}").catch((e: unknown) => e)) as ToolExecution
    expect(rejected.error.message).toBe("plain string")
    const invalid = (await handle.callTool("invalid", "{}").catch((e: unknown) => e)) as ToolExecution
    expect(invalid.error).toBeInstanceOf(InvalidArgument)
  })

  it("times out a hanging tool, aborting its signal, without waiting for it", async () => {
    const handle = new ToolServer().handle()
    let sawAbort = false
    registerDefinitions(handle, [
      () => [
        ToolMeta.make("hang"),
        fromFunction((_json, ctx) => {
          ctx.signal.addEventListener("abort", () => (sawAbort = true))
          return new Promise<string>(() => {})
        })
      ]
    ])
    const error = await handle.callTool("hang", "{}", { timeoutMs: 30 }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(ToolTimeout)
    expect((error as ToolTimeout).afterMs).toBe(30)
    expect(sawAbort).toBe(true)
  })

  it("cancels through the caller's signal, even when the tool ignores it", async () => {
    const handle = new ToolServer().handle()
    registerDefinitions(handle, [() => [ToolMeta.make("deaf"), fromFunction(() => new Promise<string>(() => {}))]])
    const controller = new AbortController()
    const pending = handle.callTool("deaf", "{}", { signal: controller.signal })
    setTimeout(() => controller.abort(), 10)
    await expect(pending).rejects.toBeInstanceOf(ToolCancelled)
    await expect(handle.callTool("deaf", "{}", { signal: AbortSignal.abort() })).rejects.toBeInstanceOf(ToolCancelled)
  })

  it("passes the call id and meta in the context", async () => {
    const handle = new ToolServer().handle()
    registerDefinitions(handle, [() => [ToolMeta.make("ctx"), fromFunction((_j, ctx) => `${ctx.callId}/${ctx.meta.name}`)]])
    expect(await handle.callTool("ctx", "{}", { callId: "call_7" })).toBe("call_7/ctx")
  })

  it("supports Effect-written tools and Effect callers with typed failures and interruption", async () => {
    const handle = new ToolServer().handle()
    let interrupted = false
    registerDefinitions(handle, [
      () => [ToolMeta.make("eff"), fromEffect((json) => Effect.succeed(`got ${json}`))],
      () => [ToolMeta.make("efail"), fromEffect(() => Effect.fail(ToolError.ExecutionFailed("nope")))],
      () => [
        ToolMeta.make("eslow"),
        fromEffect(() => Effect.never.pipe(Effect.onInterrupt(() => Effect.sync(() => (interrupted = true)))))
      ]
    ])
    expect(await Effect.runPromise(handle.callToolEffect("eff", "{}"))).toBe("got {}")
    const exit = await Effect.runPromiseExit(handle.callToolEffect("efail", "{}"))
    expect(Exit.isFailure(exit)).toBe(true)
    const failed = await handle.callTool("efail", "{}").catch((e: unknown) => e)
    expect((failed as ToolExecution).message).toBe("nope")
    const timed = await Effect.runPromiseExit(handle.callToolEffect("eslow", "{}").pipe(Effect.timeout(20)))
    expect(Exit.isFailure(timed)).toBe(true)
    await new Promise((r) => setTimeout(r, 10))
    expect(interrupted).toBe(true)
  })
})
