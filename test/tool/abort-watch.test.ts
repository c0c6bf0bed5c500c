import { getEventListeners } from "node:events"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { type AbortWatch, joinAbort, unwatchAbort, watchAbort, whenAborted } from "../../src/tool/abort-watch.ts"

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

  it("a watch stopped by another's run is never run, and every other still runs once (property)", () => {
    fc.assert(
      fc.property(fc.array(fc.option(fc.nat(40), { nil: undefined }), { minLength: 1, maxLength: 40 }), (stops) => {
        const controller = new AbortController()
        const ran: Array<number> = []
        const stopped = new Set<number>()
        const watches: Array<AbortWatch> = []
        stops.forEach((target, i) => {
          watches.push(
            watchAbort(controller.signal, () => {
              ran.push(i)
              if (target !== undefined && target < watches.length && !ran.includes(target)) {
                stopped.add(target)
                unwatchAbort(watches[target] as AbortWatch)
              }
            })
          )
        })
        controller.abort()
        const expected = stops.map((_, i) => i).filter((i) => !stopped.has(i))
        expect([...ran].sort((a, b) => a - b)).toEqual(expected)
      })
    )
  })

  it("runs a caller's own watch object, and not one joined after the abort began", () => {
    const controller = new AbortController()
    const ran: Array<string> = []
    class Own implements AbortWatch {
      prev: AbortWatch | undefined = undefined
      next: AbortWatch | undefined = undefined
      list: AbortWatch["list"] = undefined
      run(): void {
        ran.push("own")
        joinAbort(controller.signal, late)
      }
    }
    const late = watchAbort(new AbortController().signal, () => ran.push("late"))
    unwatchAbort(late)
    joinAbort(controller.signal, new Own())
    controller.abort()
    expect(ran).toEqual(["own"])
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
