import { createHash } from "node:crypto"
import { Item } from "../llm/item.ts"
import type { LlmClient } from "../llm/client.ts"
import type { Request } from "../llm/request.ts"

/**
 * The cache lock, verified on bytes.
 *
 * What is locked is the *byte prefix every continuation of the locked context shares*. At `lock()` the locked
 * context (system prompt + locked history + tools + config) is encoded twice by the client's own encoder, once
 * followed by a user message and once by an assistant message. The two bodies agree up to the point where the
 * appended item begins (or, for schemes that merge consecutive same-role items, up to where the last locked
 * content ends), so their longest common prefix is exactly what any later request must repeat byte for byte.
 * Its length and SHA-256 are recorded; before every request the body's first `prefixBytes` bytes are hashed and
 * compared. Whatever the model or a hook appends afterwards cannot disturb it; rewriting a locked item, the
 * system prompt, the tools or the config does.
 */
export interface LockedPrefix {
  readonly historyLength: number
  readonly systemPrompt: string | undefined
  readonly toolsVersion: number
  readonly prefixBytes: number
  readonly prefixSha256: string
  readonly onViolation: "error" | "warn"
}

/** Per request: how much of the body repeated the previous request, and whether the locked prefix held. */
export interface CacheReport {
  /** 1-based request number within the run. */
  readonly turn: number
  readonly requestBytes: number
  /** Length of the byte prefix shared with the previous request of this worker (0 for its first request). */
  readonly unchangedPrefixBytes: number
  readonly previousRequestBytes: number | undefined
  /** Present while cache-locked. */
  readonly locked: { readonly prefixBytes: number; readonly intact: boolean } | undefined
}

const sha256 = (bytes: Uint8Array): string => createHash("sha256").update(bytes).digest("hex")

/**
 * Length of the longest common prefix. A binary search over native range comparisons (`Buffer.compare`, a
 * memcmp) instead of a JavaScript byte loop: bodies grow with the history and this runs on every request.
 */
export const commonPrefixLength = (a: Uint8Array, b: Uint8Array): number => {
  const left = Buffer.isBuffer(a) ? a : Buffer.from(a.buffer, a.byteOffset, a.byteLength)
  // Ranged `compare` reads both in place: no view object per probe (a dozen per request otherwise).
  const same = (from: number, to: number): boolean => left.compare(b, from, to, from, to) === 0
  let low = 0
  let high = Math.min(a.length, b.length)
  if (same(0, high)) return high
  // Invariant: the first `low` bytes agree, the first `high` bytes do not.
  while (high - low > 1) {
    const middle = (low + high) >>> 1
    if (same(low, middle)) low = middle
    else high = middle
  }
  return low
}

export const takeLock = (
  client: LlmClient,
  locked: Request,
  toolsVersion: number,
  onViolation: "error" | "warn"
): LockedPrefix => {
  const withUser = Buffer.from(client.encodeRequest({ ...locked, items: [...locked.items, Item.userText("u")] }), "utf8")
  const withAssistant = Buffer.from(
    client.encodeRequest({ ...locked, items: [...locked.items, Item.assistantText("a")] }),
    "utf8"
  )
  const prefixBytes = commonPrefixLength(withUser, withAssistant)
  return {
    historyLength: locked.items.length,
    systemPrompt: locked.systemPrompt,
    toolsVersion,
    prefixBytes,
    prefixSha256: sha256(withUser.subarray(0, prefixBytes)),
    onViolation
  }
}

export const prefixIntact = (lock: LockedPrefix, body: Uint8Array): boolean =>
  body.length >= lock.prefixBytes && sha256(body.subarray(0, lock.prefixBytes)) === lock.prefixSha256

/** Remembers the previous request body of a worker so each request can be compared with the one before. */
export class RequestBytesTracker {
  #previous: Uint8Array | undefined

  measure(turn: number, body: Uint8Array, lock: LockedPrefix | undefined): CacheReport {
    const previous = this.#previous
    this.#previous = body
    return {
      turn,
      requestBytes: body.length,
      unchangedPrefixBytes: previous === undefined ? 0 : commonPrefixLength(previous, body),
      previousRequestBytes: previous?.length,
      locked: lock === undefined ? undefined : { prefixBytes: lock.prefixBytes, intact: prefixIntact(lock, body) }
    }
  }
}
