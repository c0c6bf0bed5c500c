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
 * One resettable phase timer, plus the call's total deadline, that abort the attempt (its `AttemptAbort`) when they
 * fire and remember which deadline it was, so the resulting abort is reported as an `LlmTimeout` rather than a
 * network failure.
 *
 * The transport starts or resumes the phase before every read and pauses it before every batch of events. Those
 * calls only read the clock: the phase's deadline lives in plain fields, and the one Node timer behind it is kept
 * through pauses and restarts as long as it is due no later than the deadline. When it runs it expires the phase
 * only if the deadline has come; if the phase was restarted meanwhile it is set again for what is left, and if the
 * phase is paused it is dropped (`resume()` sets one again). A stream that keeps reading therefore costs about one
 * Node timer per phase length instead of a `setTimeout` and a `clearTimeout` per read (decision 0087). Reads
 * served from queued data never let a Node timer run, so `pause()` and `expireIfOverdue()` expire an overdue phase
 * themselves (decision 0083, amended).
 */
export class PhaseTimer {
  /** The pending Node timer, due at `timerAt` (`performance.now()` time), at or before the deadline `at`. */
  private timer: ReturnType<typeof setTimeout> | undefined
  private timerAt = 0
  private totalTimer: ReturnType<typeof setTimeout> | undefined
  private expired: ExpiredPhase | undefined
  /**
   * `running`: the phase expires at `at`, and `timer` is set; `paused`: `remaining` ms are left of it (a Node
   * timer may still be pending: it does nothing when it runs); `off`: no phase deadline.
   */
  private state: "off" | "running" | "paused" = "off"
  private phase: TimeoutPhase = "headers"
  private afterMs = 0
  private at = 0
  private remaining = 0
  private readonly onPhaseTimer = (): void => {
    this.timer = undefined
    if (this.state !== "running") return
    const left = this.at - performance.now()
    // Node's timer clock counts whole milliseconds and may run a timer up to one early: that is the deadline.
    if (left > 1) {
      this.setTimer(left)
      return
    }
    this.state = "off"
    this.fire({ phase: this.phase, afterMs: this.afterMs })
  }

  /**
   * `total`: when the call's total deadline passes (`performance.now()` time: monotonic and finer than a
   * millisecond, so many short pauses cannot round the remaining time up), and its configured length.
   */
  constructor(
    private readonly attempt: { abort(): void },
    total?: { readonly at: number; readonly afterMs: number }
  ) {
    if (total !== undefined && Number.isFinite(total.at)) {
      this.totalTimer = setTimeout(() => this.fire({ phase: "total", afterMs: total.afterMs }), Math.max(0, total.at - performance.now()))
    }
  }

  private fire(expired: ExpiredPhase): void {
    this.expired ??= expired
    this.attempt.abort()
  }

  /** Starts `phase` afresh: its whole `ms` from now. */
  start(phase: TimeoutPhase, ms: number): void {
    if (!Number.isFinite(ms)) {
      this.stop()
      this.state = "off"
      return
    }
    this.phase = phase
    this.afterMs = ms
    this.arm(ms)
  }

  private arm(inMs: number): void {
    this.state = "running"
    const now = performance.now()
    this.at = now + inMs
    // A pending timer due before the new deadline re-checks it when it runs; a later one is replaced.
    if (this.timer !== undefined) {
      if (this.timerAt <= this.at) return
      clearTimeout(this.timer)
    }
    this.timer = setTimeout(this.onPhaseTimer, inMs)
    this.timerAt = now + inMs
  }

  private setTimer(inMs: number): void {
    this.timer = setTimeout(this.onPhaseTimer, inMs)
    this.timerAt = performance.now() + inMs
  }

  /**
   * Stops the phase clock while the consumer handles an event (its time is not the server's) and keeps what was
   * left of the phase, so a `resume()` after a keep-alive does not grant a fresh period.
   */
  pause(): void {
    if (this.state !== "running") return
    const left = this.at - performance.now()
    if (left <= 0) {
      this.stop()
      this.#fireOverdue()
    } else {
      this.remaining = left
      this.state = "paused"
    }
  }

  /**
   * Expires the running phase now if its deadline has passed though its Node timer has not run. Reads that settle
   * from data already queued never yield to the event loop's timer phase, so a server flooding keep-alives faster
   * than the client reads them would otherwise hold a phase open for as long as it keeps writing; the transport
   * asks after every read.
   */
  expireIfOverdue(): void {
    if (this.state === "running" && performance.now() >= this.at) {
      this.stop()
      this.#fireOverdue()
    }
  }

  #fireOverdue(): void {
    this.state = "off"
    this.fire({ phase: this.phase, afterMs: this.afterMs })
  }

  /** Continues a paused phase with the time it had left; nothing if none is paused. */
  resume(): void {
    if (this.state !== "paused") return
    this.arm(this.remaining)
  }

  /** Stops the running phase (a paused one stays paused). */
  stop(): void {
    if (this.timer !== undefined) clearTimeout(this.timer)
    this.timer = undefined
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
