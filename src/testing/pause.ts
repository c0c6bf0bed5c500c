/** Waits `ms`; resolves false at once when `signal` fires first. No timer outlives a cancel. */
export const pause = (ms: number, signal: AbortSignal | undefined): Promise<boolean> =>
  new Promise((resolve) => {
    if (signal?.aborted) return resolve(false)
    if (ms <= 0) return resolve(true)
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", stop)
      resolve(true)
    }, ms)
    const stop = () => {
      clearTimeout(timer)
      resolve(false)
    }
    signal?.addEventListener("abort", stop, { once: true })
  })
