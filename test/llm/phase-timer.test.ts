import { afterEach, beforeEach, describe, expect, it, vi } from "vitest"
import { PhaseTimer } from "../../src/llm/transport/timeouts.ts"

/**
 * The phase clock as the transport drives it on every read (start / pause / resume / stop), on fake time: a
 * paused phase keeps what was left of it, a resumed one runs for exactly that, and the one Node timer behind it
 * expires only the phase whose deadline has come.
 */
describe("PhaseTimer", () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "performance"] })
  })
  afterEach(() => {
    vi.useRealTimers()
  })

  const timer = () => {
    const controller = new AbortController()
    return { controller, phases: new PhaseTimer(controller) }
  }

  it("expires a running phase at its deadline", () => {
    const { controller, phases } = timer()
    phases.start("first_event", 100)
    vi.advanceTimersByTime(99)
    expect(controller.signal.aborted).toBe(false)
    vi.advanceTimersByTime(2)
    expect(phases.expiredPhase).toEqual({ phase: "first_event", afterMs: 100 })
    expect(controller.signal.aborted).toBe(true)
  })

  it("does not count paused time, and resumes with what was left, many times over", () => {
    const { controller, phases } = timer()
    phases.start("idle", 100)
    for (let i = 0; i < 9; i++) {
      vi.advanceTimersByTime(10)
      phases.pause()
      vi.advanceTimersByTime(1000)
      phases.resume()
    }
    expect(controller.signal.aborted).toBe(false)
    vi.advanceTimersByTime(9)
    expect(controller.signal.aborted).toBe(false)
    vi.advanceTimersByTime(2)
    expect(phases.expiredPhase).toEqual({ phase: "idle", afterMs: 100 })
  })

  it("resumes nothing when no phase is paused, and pauses nothing when none runs", () => {
    const { controller, phases } = timer()
    phases.resume()
    phases.pause()
    phases.start("idle", 50)
    phases.resume() // running: no effect
    vi.advanceTimersByTime(51)
    expect(controller.signal.aborted).toBe(true)
  })

  it("starts afresh: a new phase replaces a paused one, an earlier deadline re-arms the timer", () => {
    const { controller, phases } = timer()
    phases.start("headers", 1000)
    phases.pause()
    phases.start("idle", 10)
    phases.resume() // the paused headers phase is gone
    vi.advanceTimersByTime(11)
    expect(phases.expiredPhase).toEqual({ phase: "idle", afterMs: 10 })
    expect(controller.signal.aborted).toBe(true)
  })

  it("never expires an infinite phase, and stop() ends a running one", () => {
    const { controller, phases } = timer()
    phases.start("idle", Number.POSITIVE_INFINITY)
    vi.advanceTimersByTime(10_000_000)
    phases.start("idle", 10)
    phases.stop()
    vi.advanceTimersByTime(100)
    phases.resume()
    vi.advanceTimersByTime(100)
    expect(controller.signal.aborted).toBe(false)
  })

  it("stop() leaves a paused phase paused: a resume continues it with what was left", () => {
    const { controller, phases } = timer()
    phases.start("first_event", 100)
    vi.advanceTimersByTime(40)
    phases.pause()
    phases.stop()
    vi.advanceTimersByTime(1000)
    phases.resume()
    vi.advanceTimersByTime(59)
    expect(controller.signal.aborted).toBe(false)
    vi.advanceTimersByTime(2)
    expect(phases.expiredPhase).toEqual({ phase: "first_event", afterMs: 100 })
  })

  it("after a phase expires, pause and resume arm nothing more", () => {
    const { controller, phases } = timer()
    phases.start("idle", 10)
    vi.advanceTimersByTime(11)
    expect(phases.expiredPhase).toEqual({ phase: "idle", afterMs: 10 })
    phases.pause()
    phases.resume()
    expect(vi.getTimerCount()).toBe(0)
    expect(controller.signal.aborted).toBe(true)
  })

  it("a phase restarted before its timer runs expires at its new deadline, not the old one", () => {
    const { controller, phases } = timer()
    phases.start("idle", 100)
    vi.advanceTimersByTime(60)
    phases.pause()
    phases.start("idle", 100) // due at 160; the timer set for 100 is kept and re-checks then
    vi.advanceTimersByTime(99)
    expect(controller.signal.aborted).toBe(false)
    vi.advanceTimersByTime(2)
    expect(phases.expiredPhase).toEqual({ phase: "idle", afterMs: 100 })
  })

  it("reading on and on sets about one Node timer per phase length, not one per read", () => {
    const setTimer = vi.spyOn(globalThis, "setTimeout")
    const { controller, phases } = timer()
    phases.start("idle", 100)
    // 2,000 reads, 0.5 ms apart: each pauses for its batch and restarts the idle phase in full.
    for (let read = 0; read < 2000; read++) {
      vi.advanceTimersByTime(0.5)
      phases.pause()
      phases.start("idle", 100)
    }
    expect(controller.signal.aborted).toBe(false)
    expect(setTimer.mock.calls.length).toBeLessThanOrEqual(1000 / 100 + 2)
    vi.advanceTimersByTime(101)
    expect(phases.expiredPhase).toEqual({ phase: "idle", afterMs: 100 })
    setTimer.mockRestore()
  })

  it("dispose() ends a paused phase too", () => {
    const { controller, phases } = timer()
    phases.start("idle", 10)
    phases.pause()
    phases.dispose()
    phases.resume()
    vi.advanceTimersByTime(100)
    expect(controller.signal.aborted).toBe(false)
    expect(phases.expiredPhase).toBeUndefined()
  })
})

/**
 * On real time: reads served from queued data run in one stretch of microtasks, during which no Node timer runs.
 * A phase whose deadline passes in such a stretch must still expire, at the next pause or read.
 */
describe("PhaseTimer when the event loop never reaches its timers", () => {
  const busy = (ms: number): void => {
    const until = performance.now() + ms
    while (performance.now() < until) {
      // a read loop that never yields to the timer phase
    }
  }

  it("a pause after the deadline expires the phase instead of keeping nothing left of it", () => {
    const controller = new AbortController()
    const phases = new PhaseTimer(controller)
    phases.start("idle", 20)
    busy(30)
    phases.pause()
    expect(phases.expiredPhase).toEqual({ phase: "idle", afterMs: 20 })
    expect(controller.signal.aborted).toBe(true)
    // Nothing is left paused to resume.
    phases.resume()
    phases.dispose()
  })

  it("a read after the deadline expires the running phase; before it, nothing happens", () => {
    const controller = new AbortController()
    const phases = new PhaseTimer(controller)
    phases.start("first_event", 40)
    phases.expireIfOverdue()
    expect(controller.signal.aborted).toBe(false)
    busy(50)
    phases.expireIfOverdue()
    expect(phases.expiredPhase).toEqual({ phase: "first_event", afterMs: 40 })
    expect(controller.signal.aborted).toBe(true)
    phases.dispose()
  })

  it("a paused phase is not expired by a read", () => {
    const controller = new AbortController()
    const phases = new PhaseTimer(controller)
    phases.start("idle", 20)
    phases.pause()
    busy(30)
    phases.expireIfOverdue()
    expect(controller.signal.aborted).toBe(false)
    phases.dispose()
  })
})
