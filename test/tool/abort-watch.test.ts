import { getEventListeners } from "node:events"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { unwatchAbort, watchAbort, whenAborted } from "../../src/tool/abort-watch.ts"

describe("the shared abort watch", () => {
  it("runs exactly the watches still registered, once each, on one listener per signal (property)", () => {
    fc.assert(
      fc.property(fc.array(fc.boolean(), { maxLength: 60 }), (stopped) => {
        const controller = new AbortController()
        const ran: Array<number> = []
        const watches = stopped.map((_, i) => watchAbort(controller.signal, () => ran.push(i)))
        expect(getEventListeners(controller.signal, "abort").length).toBe(stopped.length === 0 ? 0 : 1)
        stopped.forEach((stop, i) => {
          if (stop) unwatchAbort(watches[i] as ReturnType<typeof watchAbort>)
        })
        controller.abort()
        controller.abort()
        expect(ran.sort((a, b) => a - b)).toEqual(stopped.flatMap((stop, i) => (stop ? [] : [i])))
        for (const watch of watches) unwatchAbort(watch)
      })
    )
  })

  it("keeps signals apart, and a stop after the abort (or twice) is harmless", () => {
    const a = new AbortController()
    const b = new AbortController()
    const ran: Array<string> = []
    const stopA = whenAborted(a.signal, () => ran.push("a"))
    whenAborted(b.signal, () => ran.push("b"))
    a.abort()
    stopA()
    stopA()
    expect(ran).toEqual(["a"])
    b.abort()
    expect(ran).toEqual(["a", "b"])
  })
})
