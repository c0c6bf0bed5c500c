/**
 * Remembers the delivery ids of accepted callbacks for as long as their timestamps are acceptable, so a captured
 * callback cannot be replayed inside the tolerance window. The id is covered by the callback's signature and is
 * random per delivery, so two legitimate calls never share one, however alike their bodies. Entries are grouped per timestamp second and dropped
 * a whole second at a time once it leaves the window.
 *
 * Memory is bounded by `maxEntries`. When a flood fills it, the oldest second is dropped and the guard's
 * *floor* rises past it: callbacks stamped before the floor are then refused as stale. The window narrows under
 * load; a replay is never let through.
 */
export class ReplayGuard {
  private readonly seconds = new Map<number, Set<string>>()
  private entries = 0
  private floor = Number.NEGATIVE_INFINITY
  private lastPrune = Number.NEGATIVE_INFINITY

  constructor(
    private readonly toleranceSeconds: number,
    private readonly maxEntries: number
  ) {}

  /** Records a verified delivery's id; answers why it must be refused, or undefined when it is new. */
  admit(timestamp: number, deliveryId: string, nowSeconds: number): "replayed" | "stale" | undefined {
    if (nowSeconds !== this.lastPrune) this.prune(nowSeconds)
    if (timestamp < this.floor) return "stale"
    let bucket = this.seconds.get(timestamp)
    if (bucket === undefined) {
      bucket = new Set()
      this.seconds.set(timestamp, bucket)
    } else if (bucket.has(deliveryId)) return "replayed"
    bucket.add(deliveryId)
    this.entries++
    while (this.entries > this.maxEntries) this.dropOldest()
    return undefined
  }

  /** Delivery ids held (for tests and the status of a long-running plugin). */
  get size(): number {
    return this.entries
  }

  private prune(nowSeconds: number): void {
    this.lastPrune = nowSeconds
    const oldest = nowSeconds - this.toleranceSeconds
    for (const [second, bucket] of this.seconds) {
      if (second < oldest) {
        this.entries -= bucket.size
        this.seconds.delete(second)
      }
    }
  }

  private dropOldest(): void {
    let oldest = Number.POSITIVE_INFINITY
    for (const second of this.seconds.keys()) if (second < oldest) oldest = second
    const bucket = this.seconds.get(oldest)
    if (bucket === undefined) return
    this.entries -= bucket.size
    this.seconds.delete(oldest)
    this.floor = Math.max(this.floor, oldest + 1)
  }
}
