import { describe, expect, it } from "vitest"
import { Worker } from "../../src/worker/worker.ts"
import { EventBufferOverflow } from "../../src/worker/worker-error.ts"
import type { WorkerEvent } from "../../src/worker/subscriber.ts"
import { ScriptedClient, textResponse, toolCallResponse } from "./support/scripted-client.ts"
import { echoDefinition } from "./support/tools.ts"
import { collectUnhandledRejections } from "../support/unhandled-rejections.ts"

const script = () => new ScriptedClient([toolCallResponse([{ id: "c", name: "echo", args: '{"v":"x"}' }], "checking"), textResponse("done")])

const unhandled = collectUnhandledRejections()

/** Lets every pending rejection surface (or be handled) before the test looks. */
const settle = () => new Promise((resolve) => setImmediate(resolve))

const revoked = (): object => {
  const { proxy, revoke } = Proxy.revocable({}, {})
  revoke()
  return proxy
}

describe("an async subscriber whose promise rejects", () => {
  it("is reported to the other subscribers as a warning, never as an unhandled rejection", async () => {
    const worker = Worker.create({ client: script() })
    worker.registerTool(echoDefinition())
    const warnings: Array<string> = []
    const ownWarnings: Array<string> = []
    worker.subscribe({
      onTurnStart: async () => {
        throw new Error("render failed")
      },
      onWarning: (e) => void ownWarnings.push(e.message)
    })
    worker.subscribe({ onEvent: async () => Promise.reject(revoked()) })
    worker.subscribe({ onWarning: (e) => void warnings.push(e.message) })
    const result = await worker.run("go")
    await settle()
    expect(result.status).toBe("finished")
    expect(unhandled).toEqual([])
    expect(warnings.some((w) => w.includes('a subscriber threw on "turn_start": render failed'))).toBe(true)
    expect(warnings.some((w) => w.includes("cannot be described"))).toBe(true)
    // The failing subscriber is not told about its own failure.
    expect(ownWarnings.every((w) => !w.includes("render failed"))).toBe(true)
  })

  it("a subscriber returning a hostile thenable or throwing hostile values does not disturb the run", async () => {
    const worker = Worker.create({ client: script() })
    worker.registerTool(echoDefinition())
    const warnings: Array<string> = []
    worker.subscribe({ onEvent: () => revoked() as never })
    worker.subscribe({ onText: () => ({ then: () => { throw new Error("then") } }) as never })
    worker.subscribe({
      onStatus: () => {
        throw revoked()
      },
      onBlockStart: () => {
        throw Symbol("s")
      }
    })
    worker.subscribe({ onWarning: (e) => void warnings.push(e.message) })
    expect((await worker.run("go")).status).toBe("finished")
    await settle()
    expect(unhandled).toEqual([])
    expect(warnings.length).toBeGreaterThan(0)
  })
})

describe("events() never read", () => {
  it("buffers at most maxBufferedEvents, then the iterator yields those and throws EventBufferOverflow", async () => {
    const worker = Worker.create({ client: new ScriptedClient([textResponse("x".repeat(4000))]) })
    const iterator = worker.events({ maxBufferedEvents: 50 })[Symbol.asyncIterator]()
    const first = iterator.next() // starts the subscription and takes the first event
    await worker.run("go")
    const seen: Array<WorkerEvent> = [(await first).value as WorkerEvent]
    let error: unknown
    try {
      for (;;) {
        const next = await iterator.next()
        if (next.done === true) break
        seen.push(next.value)
      }
    } catch (thrown) {
      error = thrown
    }
    expect(error).toBeInstanceOf(EventBufferOverflow)
    expect((error as EventBufferOverflow).limit).toBe("events")
    // The first event was handed over directly; then exactly 50 were held before the loss.
    expect(seen).toHaveLength(51)
    expect((await iterator.next()).done).toBe(true)
  })

  it("bounds buffered delta text too (maxBufferedChars)", async () => {
    const worker = Worker.create({ client: new ScriptedClient([textResponse("y".repeat(4000))]) })
    const iterator = worker.events({ maxBufferedChars: 100 })[Symbol.asyncIterator]()
    const first = iterator.next()
    await worker.run("go")
    await first
    let count = 0
    const error = await (async () => {
      try {
        for (;;) if ((await iterator.next()).done === true) return undefined
          else count++
      } catch (thrown) {
        return thrown
      }
    })()
    expect(error).toMatchObject({ _tag: "EventBufferOverflow", limit: "chars", max: 100 })
    expect(count).toBeLessThan(60)
  })

  it("a consumer that keeps up sees every event and no overflow", async () => {
    const worker = Worker.create({ client: new ScriptedClient([textResponse("z".repeat(4000))]) })
    const seen: Array<string> = []
    const consuming = (async () => {
      for await (const event of worker.events({ maxBufferedEvents: 8 })) {
        seen.push(event.type)
        if (event.type === "status" && event.status === "finished") break
      }
    })()
    await worker.run("go")
    await consuming
    expect(seen.filter((t) => t === "block_delta")).toHaveLength(1000)
  })

  it("refuses a nonsensical bound", () => {
    const worker = Worker.create({ client: script() })
    expect(() => worker.events({ maxBufferedEvents: 0 })).toThrow(RangeError)
  })
})
