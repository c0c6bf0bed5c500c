/**
 * Per-phase deadlines of one streamed call. A phase timer restarts at each SSE event, so a long answer that keeps
 * streaming never times out, while a connection that goes quiet does. `Infinity` disables a phase.
 */
export interface Timeouts {
  /** From sending the request until the response headers arrive. */
  readonly headersMs: number
  /** From the headers until the first complete SSE event (reasoning models may think for a while first). */
  readonly firstEventMs: number
  /** Between two SSE events, and while reading an error body. */
  readonly idleMs: number
}

export const defaultTimeouts: Timeouts = {
  headersMs: 60_000,
  firstEventMs: 120_000,
  idleMs: 90_000
}

export type TimeoutPhase = "headers" | "first_event" | "idle"

/**
 * One resettable timer that aborts the attempt's controller when it fires and remembers which phase it was
 * guarding, so the resulting abort can be reported as an `LlmTimeout` rather than a network failure.
 */
export class PhaseTimer {
  private timer: ReturnType<typeof setTimeout> | undefined
  private expired: { readonly phase: TimeoutPhase; readonly afterMs: number } | undefined

  constructor(private readonly controller: AbortController) {}

  start(phase: TimeoutPhase, ms: number): void {
    this.stop()
    if (!Number.isFinite(ms)) return
    this.timer = setTimeout(() => {
      this.expired = { phase, afterMs: ms }
      this.controller.abort()
    }, ms)
  }

  stop(): void {
    if (this.timer !== undefined) clearTimeout(this.timer)
    this.timer = undefined
  }

  /** The phase whose deadline passed, if one did. */
  get expiredPhase(): { readonly phase: TimeoutPhase; readonly afterMs: number } | undefined {
    return this.expired
  }
}
