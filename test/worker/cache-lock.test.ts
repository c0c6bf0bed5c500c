import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { Item } from "../../src/llm/item.ts"
import { ToolServer } from "../../src/tool-server/tool-server.ts"
import type { LlmClient } from "../../src/llm/client.ts"
import type { Request } from "../../src/llm/request.ts"
import { commonPrefixLength, prefixIntact, RequestBytesTracker, takeLock } from "../../src/worker/cache-lock.ts"
import { PreLlmRequest } from "../../src/worker/hooks.ts"
import { Worker } from "../../src/worker/worker.ts"
import { CacheLockViolation } from "../../src/worker/worker-error.ts"
import { ScriptedClient, textResponse, toolCallResponse } from "./support/scripted-client.ts"
import { echoDefinition } from "./support/tools.ts"

describe("cache lock", () => {
  it("records the locked prefix and keeps it byte-identical over a locked conversation", async () => {
    const client = new ScriptedClient([(_r, n) => (n % 2 === 0 ? toolCallResponse([{ id: `c${n}`, name: "echo", args: "{}" }]) : textResponse(`answer ${n}`))])
    const mutable = Worker.create({ client, systemPrompt: "sys", history: [Item.userText("old"), Item.assistantText("reply")] })
    mutable.registerTool(echoDefinition())
    const locked = mutable.lock()
    expect(locked.lockedPrefix.historyLength).toBe(2)
    const reports = []
    for (let i = 0; i < 5; i++) reports.push(...(await locked.run(`q${i}`)).cache)
    expect(reports).toHaveLength(10)
    for (const report of reports) expect(report.locked).toEqual({ prefixBytes: locked.lockedPrefix.prefixBytes, intact: true })
    // Each request repeats the whole previous request except its closing bytes.
    for (const report of reports.slice(1)) {
      expect(report.unchangedPrefixBytes).toBeGreaterThanOrEqual(locked.lockedPrefix.prefixBytes)
      expect(report.unchangedPrefixBytes).toBeGreaterThan((report.previousRequestBytes ?? 0) - 40)
    }
  })

  it("detects a PreLlmRequest hook rewriting a locked item", async () => {
    const client = new ScriptedClient([textResponse("ok")])
    const worker = Worker.create({ client, history: [Item.userText("locked one")] }).lock()
    worker.addHook("PreLlmRequest", ({ context }) =>
      PreLlmRequest.rewrite({ ...context, items: [Item.userText("LOCKED one"), ...context.items.slice(1)] })
    )
    const aborts: Array<string> = []
    worker.addHook("OnAbort", ({ error }) => void aborts.push(error._tag))
    const error = await worker.run("hi").catch((e: unknown) => e)
    expect(error).toBeInstanceOf(CacheLockViolation)
    expect((error as CacheLockViolation).kind).toBe("prefix_bytes")
    expect(client.requests).toHaveLength(0)
    expect(aborts).toEqual(["CacheLockViolation"])
  })

  it("detects a rewritten system prompt; with onViolation 'warn' the run goes on with a warning", async () => {
    const client = new ScriptedClient([textResponse("ok")])
    const worker = Worker.create({ client, systemPrompt: "sys" }).lock({ onViolation: "warn" })
    worker.addHook("PreLlmRequest", ({ context }) => PreLlmRequest.rewrite({ ...context, systemPrompt: "changed" }))
    const warnings: Array<string> = []
    worker.subscribe({ onWarning: (e) => warnings.push(e.message) })
    const result = await worker.run("hi")
    expect(result.status).toBe("finished")
    expect(result.warnings).toHaveLength(1)
    expect(warnings).toEqual(result.warnings)
    expect(result.cache[0]?.locked?.intact).toBe(false)
  })

  it("a tool registered through another worker sharing the server breaks the lock", async () => {
    const server = new ToolServer()
    const locked = Worker.create({ client: new ScriptedClient([textResponse("ok")]), toolServer: server }).lock()
    Worker.create({ client: new ScriptedClient([]), toolServer: server }).registerTool(echoDefinition())
    await expect(locked.run("hi")).rejects.toMatchObject({ _tag: "CacheLockViolation", kind: "tool_set" })
  })

  it("unlock then edit then lock again takes a new prefix", async () => {
    const client = new ScriptedClient([textResponse("ok")])
    const locked = Worker.create({ client }).lock()
    await locked.run("hi")
    const mutable = locked.unlock()
    mutable.setHistory([Item.userText("fresh")])
    const relocked = mutable.lock()
    expect(relocked.lockedPrefix.historyLength).toBe(1)
    await expect(relocked.run("again")).resolves.toMatchObject({ status: "finished" })
  })

  it("commonPrefixLength is the length of the longest shared prefix", () => {
    fc.assert(
      fc.property(fc.uint8Array(), fc.uint8Array(), fc.uint8Array(), (p, a, b) => {
        const x = new Uint8Array([...p, ...a])
        const y = new Uint8Array([...p, ...b])
        const n = commonPrefixLength(x, y)
        expect(n).toBeGreaterThanOrEqual(p.length)
        expect([...x.subarray(0, n)]).toEqual([...y.subarray(0, n)])
        if (n < Math.min(x.length, y.length)) expect(x[n]).not.toBe(y[n])
      })
    )
  })

  it("the byte tracker's reused buffers report what fresh encodings would, body after body", () => {
    const utf8 = new TextEncoder()
    // Bodies that grow, shrink, share prefixes and mix ASCII with 2-, 3- and 4-byte characters and lone surrogates.
    const piece = fc.oneof(fc.string({ maxLength: 40 }), fc.string({ unit: "binary", maxLength: 20 }), fc.constantFrom("😀", "\ud83d", "é", "€".repeat(700)))
    const body = fc.array(piece, { maxLength: 30 }).map((parts) => parts.join(""))
    fc.assert(
      fc.property(fc.array(fc.tuple(body, fc.boolean()), { minLength: 1, maxLength: 8 }), (bodies) => {
        const tracker = new RequestBytesTracker()
        let previous: Uint8Array | undefined
        let text = ""
        bodies.forEach(([next, extend], turn) => {
          text = extend ? text + next : next
          const bytes = utf8.encode(text)
          const report = tracker.measure(turn + 1, text, undefined)
          expect(report).toEqual({
            turn: turn + 1,
            requestBytes: bytes.length,
            unchangedPrefixBytes: previous === undefined ? 0 : commonPrefixLength(previous, bytes),
            previousRequestBytes: previous?.length,
            locked: undefined
          })
          previous = bytes
        })
      })
    )
  })

  it("the byte tracker's lock check agrees with prefixIntact on fresh encodings, however the body is cut", () => {
    const utf8 = new TextEncoder()
    const piece = fc.oneof(fc.string({ maxLength: 20 }), fc.constantFrom("😀", "\ud83d", "é", "{", '"'))
    const text = fc.array(piece, { maxLength: 12 }).map((parts) => parts.join(""))
    fc.assert(
      fc.property(text, fc.array(fc.tuple(text, fc.nat({ max: 40 }), text), { minLength: 1, maxLength: 6 }), (locked, bodies) => {
        // The probes differ right after the locked text, so the locked prefix is its bytes.
        const client = {
          encodeRequest: (request: Request) => {
            const last = request.items.at(-1)
            return `${locked}${last?.type === "message" && last.role === "user" ? "U" : "A"}`
          }
        } as unknown as LlmClient
        const lock = takeLock(client, { model: "m", items: [], tools: [], config: {} }, 0, "error")
        const tracker = new RequestBytesTracker()
        bodies.forEach(([head, cut, tail], turn) => {
          // Bodies that keep the prefix, keep only part of it, or change one of its characters.
          const body = cut % 3 === 0 ? `${locked}${tail}` : cut % 3 === 1 ? `${locked.slice(0, cut)}${head}${tail}` : `${head}${locked}${tail}`
          const report = tracker.measure(turn + 1, body, lock)
          expect(report.locked).toEqual({ prefixBytes: lock.prefixBytes, intact: prefixIntact(lock, utf8.encode(body)) })
        })
      })
    )
  })
})

