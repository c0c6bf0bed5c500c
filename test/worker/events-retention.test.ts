import { setFlagsFromString } from "node:v8"
import { runInNewContext } from "node:vm"
import { describe, expect, it } from "vitest"
import type { Event } from "../../src/llm/event.ts"
import { Worker } from "../../src/worker/worker.ts"
import { ScriptedClient } from "./support/scripted-client.ts"

setFlagsFromString("--expose-gc")
const gc = runInNewContext("gc") as () => void
const live = (): number => {
  gc()
  gc()
  return process.memoryUsage().heapUsed
}

const MiB = 1024 * 1024

/** A reasoning block of `count` distinct 2 KiB deltas, made lazily so that the client itself holds none of them. */
class LongReasoning extends ScriptedClient {
  constructor(readonly count: number) {
    super([])
  }

  override stream(): AsyncIterable<Event> {
    const count = this.count
    return (async function* (): AsyncGenerator<Event> {
      yield { type: "status", status: "started" }
      yield { type: "block_start", index: 0, block: { kind: "thinking" } }
      for (let i = 0; i < count; i++) yield { type: "block_delta", index: 0, delta: { kind: "thinking", text: `${i} `.padEnd(2048, "a") } }
      yield { type: "block_stop", index: 0 }
      yield { type: "block_start", index: 1, block: { kind: "text" } }
      yield { type: "block_delta", index: 1, delta: { kind: "text", text: "done" } }
      yield { type: "block_stop", index: 1, stopReason: "end_turn" }
      yield { type: "status", status: "completed", stopReason: "end_turn" }
    })()
  }
}

describe("an events() iterator that overflowed", () => {
  it("holds its bounded buffer only, not the response it overflowed in (8 MiB of reasoning → < 4 MiB kept)", async () => {
    const worker = Worker.create({ client: new LongReasoning(4096) })
    const before = live()
    // Default bounds: 1 Mi delta characters, about 1 MiB of these one-byte strings.
    const iterator = worker.events()[Symbol.asyncIterator]()
    // Through a finished helper, so the run's result (which holds the reasoning item) is not kept in this frame.
    const status = await (async () => (await worker.run("think")).status)()
    expect(status).toBe("finished")
    // The reasoning item in history is 8 MiB too: drop it, so what remains is what the iterator holds.
    worker.setHistory([])
    const growth = live() - before
    expect(growth / MiB).toBeLessThan(4)
    // Still never silent: the buffered events, then the overflow.
    let delivered = 0
    const error = await (async () => {
      try {
        while ((await iterator.next()).done !== true) delivered++
        return undefined
      } catch (thrown) {
        return thrown
      }
    })()
    expect(error).toMatchObject({ _tag: "EventBufferOverflow", limit: "chars" })
    expect(delivered).toBeGreaterThan(500)
  })
})
