import { describe, expect, it } from "vitest"
import { RequestSignals } from "../../src/worker/response-stream.ts"

/** A run's request signal follows the run's signal through the run's abort-watch list (decision 0085). */
describe("RequestSignals", () => {
  it("aborts the request's signal with the run's reason when the run's signal aborts", () => {
    const run = new AbortController()
    const requests = new RequestSignals(run.signal)
    const signal = requests.signal
    expect(requests.signal).toBe(signal)
    const reason = new Error("stop")
    run.abort(reason)
    expect(signal.aborted).toBe(true)
    expect(signal.reason).toBe(reason)
  })

  it("abandoning a request aborts its signal only; the next request gets a fresh one that still follows the run", () => {
    const run = new AbortController()
    const requests = new RequestSignals(run.signal)
    const first = requests.signal
    requests.abandon()
    expect(first.aborted).toBe(true)
    expect(run.signal.aborted).toBe(false)
    const second = requests.signal
    expect(second).not.toBe(first)
    expect(second.aborted).toBe(false)
    run.abort("late")
    expect(second.reason).toBe("late")
  })

  it("after release the run's abort no longer reaches the request's signal", () => {
    const run = new AbortController()
    const requests = new RequestSignals(run.signal)
    const signal = requests.signal
    requests.release()
    run.abort()
    expect(signal.aborted).toBe(false)
  })

  it("a run already aborted gives an aborted request signal at once", () => {
    const run = new AbortController()
    run.abort("before")
    const signal = new RequestSignals(run.signal).signal
    expect(signal.aborted).toBe(true)
    expect(signal.reason).toBe("before")
  })

  it("several runs' request signals on one parent each hear it once", () => {
    const run = new AbortController()
    const all = [new RequestSignals(run.signal), new RequestSignals(run.signal), new RequestSignals(run.signal)]
    const signals = all.map((requests) => requests.signal)
    const heard: Array<number> = []
    signals.forEach((signal, at) => signal.addEventListener("abort", () => heard.push(at)))
    ;(all[1] as RequestSignals).release()
    run.abort()
    expect(heard.sort()).toEqual([0, 2])
  })
})
