import { PluginLlmBudgetExceeded, PluginLlmCancelled } from "./errors.ts"

/**
 * One plugin's budget and concurrency cap. A call past the gate takes one unit of budget (whatever its
 * outcome: a failed provider call may still be billed) and waits for a slot; waiting ends with the caller's
 * signal.
 */
export class CallLimits {
  #calls = 0
  #inFlight = 0
  readonly #waiting: Array<() => void> = []

  constructor(
    readonly pluginId: string,
    readonly maxCalls: number | undefined,
    readonly maxConcurrent: number
  ) {}

  get calls(): number {
    return this.#calls
  }

  get inFlight(): number {
    return this.#inFlight
  }

  /** Takes a unit of budget now (or throws), then resolves when a slot is free; call `release` after. */
  async acquire(signal: AbortSignal): Promise<void> {
    if (this.maxCalls !== undefined && this.#calls >= this.maxCalls) {
      throw new PluginLlmBudgetExceeded({
        pluginId: this.pluginId,
        limit: this.maxCalls,
        message: `plugin "${this.pluginId}" has used its budget of ${this.maxCalls} LLM calls (plugins.entries.${this.pluginId}.llm.max_calls)`
      })
    }
    this.#calls++
    if (this.#inFlight < this.maxConcurrent) {
      this.#inFlight++
      return
    }
    await new Promise<void>((resolve, reject) => {
      const onAbort = () => {
        const at = this.#waiting.indexOf(grant)
        if (at !== -1) this.#waiting.splice(at, 1)
        reject(new PluginLlmCancelled({ message: "cancelled while waiting for a free call slot" }))
      }
      const grant = () => {
        signal.removeEventListener("abort", onAbort)
        this.#inFlight++
        resolve()
      }
      if (signal.aborted) return onAbort()
      signal.addEventListener("abort", onAbort, { once: true })
      this.#waiting.push(grant)
    })
  }

  release(): void {
    this.#inFlight--
    this.#waiting.shift()?.()
  }
}
