/**
 * One SIGINT / SIGTERM handler for every plugin in the process: each signal stops them all, then — when nothing
 * else listens for it — raises the signal again so the process ends the way it would have without us. A second
 * signal during the cleanup finds no handler of ours and ends the process at once.
 */
export type ShutdownSignal = "SIGINT" | "SIGTERM"

const stoppers = new Map<ShutdownSignal, Set<() => Promise<void>>>()

const onSignal = (signal: ShutdownSignal): void => {
  const pending = [...(stoppers.get(signal) ?? [])]
  stoppers.delete(signal)
  void Promise.allSettled(pending.map((stop) => stop())).then(() => {
    if (process.listenerCount(signal) === 0) process.kill(process.pid, signal)
  })
}

const handlers: Record<ShutdownSignal, () => void> = { SIGINT: () => onSignal("SIGINT"), SIGTERM: () => onSignal("SIGTERM") }

/** Runs `stop` on each of `signals`; returns the undo. */
export const stopOnSignals = (signals: ReadonlyArray<ShutdownSignal>, stop: () => Promise<void>): (() => void) => {
  for (const signal of signals) {
    let set = stoppers.get(signal)
    if (set === undefined) {
      set = new Set()
      stoppers.set(signal, set)
      process.once(signal, handlers[signal])
    }
    set.add(stop)
  }
  return () => {
    for (const signal of signals) {
      const set = stoppers.get(signal)
      if (set === undefined) continue
      set.delete(stop)
      if (set.size === 0) {
        stoppers.delete(signal)
        process.off(signal, handlers[signal])
      }
    }
  }
}
