/**
 * Deadlines of one streamed call. The phase deadlines restart as the stream makes progress, so a long answer
 * that keeps streaming never times out while a connection that goes quiet does; the optional total deadline
 * bounds the whole call whatever it streams. `Infinity` disables a deadline.
 *
 * Keep-alives (SSE comments, empty events, Anthropic `ping`, chunks that decode to nothing) prove only that the
 * connection is open: they satisfy no deadline and re-arm none, so a server that sends nothing but keep-alives
 * still times out.
 */
export interface Timeouts {
  /** From sending the request until the response headers arrive. */
  readonly headersMs: number
  /**
   * From the headers until the first content (a block, an error or the end of the response). Bookkeeping such
   * as "started" and usage does not count: reasoning models may think for a while first.
   */
  readonly firstEventMs: number
  /** Between two events once content has begun, and while reading an error body. */
  readonly idleMs: number
  /**
   * The whole call: every attempt, back-off between them and the time the consumer spends on events, from the
   * call until the response is complete. Off (`Infinity`) by default; set it to bound wall time absolutely.
   */
  readonly totalMs: number
}

/** Headers within 60 s, the first event within 120 s, no gap between events over 90 s, and no total bound. */
export const defaultTimeouts: Timeouts = {
  headersMs: 60_000,
  firstEventMs: 120_000,
  idleMs: 90_000,
  totalMs: Number.POSITIVE_INFINITY
}

/** Which deadline an `LlmTimeout` passed: `headers`, `first_event`, `idle` or `total`. */
export type TimeoutPhase = "headers" | "first_event" | "idle" | "total"

export interface ExpiredPhase {
  readonly phase: TimeoutPhase
  readonly afterMs: number
}

/**
 * A timer that fires this much before its deadline still expires the phase: Node schedules timers from the
 * event loop's cached clock, which can lag `performance.now()` by the time the current loop turn has taken.
 */
const EARLY_MS = 1

/**
 * One resettable phase timer, plus the call's total deadline, that abort the attempt's controller when they
 * fire and remember which deadline it was, so the resulting abort is reported as an `LlmTimeout` rather than a
 * network failure.
 *
 * The phase clock is started, paused and resumed on every read and every batch of events, so those only move
 * the deadline; the Node timer behind it is set again only when it fires before the (moved) deadline, or when a
 * new deadline is earlier than the one it was set for. One `setTimeout` and one `clearTimeout` per read cost more
 * than decoding a small read (decision 0075).
 */
export class PhaseTimer {
  private timer: ReturnType<typeof setTimeout> | undefined
  /** When `timer` fires (`performance.now()` time). */
  private timerAt = 0
  private totalTimer: ReturnType<typeof setTimeout> | undefined
  private expired: ExpiredPhase | undefined
  /**
   * The phase clock, in plain fields rather than an object per state: it is paused and resumed on every read.
   * `running`: the phase expires at `at`; `paused`: it has `remaining` ms left; `off`: no phase deadline.
   */
  private state: "off" | "running" | "paused" = "off"
  private phase: TimeoutPhase = "headers"
  private afterMs = 0
  private at = 0
  private remaining = 0

  /**
   * `total`: when the call's total deadline passes (`performance.now()` time: monotonic and finer than a
   * millisecond, so many short pauses cannot round the remaining time up), and its configured length.
   */
  constructor(
    private readonly controller: AbortController,
    total?: { readonly at: number; readonly afterMs: number }
  ) {
    if (total !== undefined && Number.isFinite(total.at)) {
      this.totalTimer = setTimeout(() => this.fire({ phase: "total", afterMs: total.afterMs }), Math.max(0, total.at - performance.now()))
    }
  }

  private fire(expired: ExpiredPhase): void {
    this.expired ??= expired
    this.controller.abort()
  }

  /** Starts `phase` afresh: its whole `ms` from now. */
  start(phase: TimeoutPhase, ms: number): void {
    this.state = "off"
    if (!Number.isFinite(ms)) {
      this.clearTimer()
      return
    }
    this.phase = phase
    this.afterMs = ms
    this.arm(ms)
  }

  /** Runs the current phase for `inMs` from now. */
  private arm(inMs: number): void {
    const at = performance.now() + inMs
    this.state = "running"
    this.at = at
    // A timer due no later than this deadline is kept: if it fires first, it sets itself for the rest.
    if (this.timer !== undefined && this.timerAt <= at) return
    this.clearTimer()
    this.schedule(at, inMs)
  }

  private schedule(at: number, inMs: number): void {
    this.timerAt = at
    this.timer = setTimeout(() => this.check(), inMs)
  }

  /** The timer fired: the running phase expires if its deadline has come, else the timer waits for the rest. */
  private check(): void {
    this.timer = undefined
    if (this.state !== "running") return
    const left = this.at - performance.now()
    if (left > EARLY_MS) {
      this.schedule(this.at, left)
      return
    }
    this.state = "off"
    this.fire({ phase: this.phase, afterMs: this.afterMs })
  }

  private clearTimer(): void {
    if (this.timer !== undefined) clearTimeout(this.timer)
    this.timer = undefined
  }

  /**
   * Stops the phase clock while the consumer handles an event (its time is not the server's) and keeps what was
   * left of the phase, so a `resume()` after a keep-alive does not grant a fresh period. The Node timer stays
   * set: firing while paused it expires nothing.
   */
  pause(): void {
    if (this.state !== "running") return
    this.remaining = Math.max(0, this.at - performance.now())
    this.state = "paused"
  }

  /** Continues a paused phase with the time it had left; nothing if none is paused. */
  resume(): void {
    if (this.state !== "paused") return
    this.arm(this.remaining)
  }

  /** Stops the running phase (a paused one stays paused, as before). */
  stop(): void {
    this.clearTimer()
    if (this.state === "running") this.state = "off"
  }

  /** Stops both deadlines; the attempt is over. */
  dispose(): void {
    this.stop()
    this.state = "off"
    if (this.totalTimer !== undefined) clearTimeout(this.totalTimer)
    this.totalTimer = undefined
  }

  /** The deadline that passed, if one did. */
  get expiredPhase(): ExpiredPhase | undefined {
    return this.expired
  }
}
