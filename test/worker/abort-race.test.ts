import { describe, expect, it } from "vitest"
import { AbortRace } from "../../src/worker/cancellation.ts"

const never = <A>(): Promise<A> => new Promise<A>(() => undefined)

describe("AbortRace (one abort watch for a stream's successive next() calls)", () => {
  it("settles as each promise does while the signal is quiet", async () => {
    const race = new AbortRace(new AbortController().signal, () => new Error("cancelled"))
    for (let i = 0; i < 100; i++) expect(await race.next(Promise.resolve(i))).toBe(i)
    await expect(race.next(Promise.reject(new Error("client failed")))).rejects.toThrow("client failed")
    race.stop()
  })

  it("rejects the promise being awaited as soon as the signal fires, the promise left to settle (unhandled never)", async () => {
    const controller = new AbortController()
    const race = new AbortRace(controller.signal, () => new Error(`cancelled: ${String(controller.signal.reason)}`))
    expect(await race.next(Promise.resolve("first"))).toBe("first")
    let fail: (error: Error) => void = () => undefined
    const pending = race.next(new Promise<string>((_, reject) => (fail = reject)))
    controller.abort("stop")
    await expect(pending).rejects.toThrow("cancelled: stop")
    fail(new Error("late failure of an abandoned read"))
    // Already aborted: the next call rejects at once, without waiting for its promise.
    await expect(race.next(never())).rejects.toThrow("cancelled: stop")
    race.stop()
  })

  it("after stop(), an abort rejects nothing that was handed out", async () => {
    const controller = new AbortController()
    const race = new AbortRace(controller.signal, () => new Error("cancelled"))
    let settle: (value: string) => void = () => undefined
    const pending = race.next(new Promise<string>((resolve) => (settle = resolve)))
    race.stop()
    controller.abort()
    settle("kept")
    await expect(pending).resolves.toBe("kept")
  })
})
