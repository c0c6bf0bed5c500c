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
 * Its length and a private copy of its bytes are kept; before every request the body's first `prefixBytes` bytes
 * are compared with that copy (no hash: Node's synchronous SHA-256 is not available in browsers or edge runtimes,
 * Web Crypto's is asynchronous, and a comparison is cheaper than either). Whatever the model or a hook appends afterwards cannot disturb it; rewriting a locked item, the
 * system prompt, the tools or the config does.
 */
export interface LockedPrefix {
  readonly historyLength: number
  readonly systemPrompt: string | undefined
  readonly toolsVersion: number
  readonly prefixBytes: number
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

/**
 * The locked prefix's bytes and their 4-byte word view (made once, for the check on every request), kept out of the
 * public `LockedPrefix` so that no caller can alter what is verified.
 */
const lockedBytes = new WeakMap<LockedPrefix, { readonly bytes: Uint8Array; readonly words: Uint32Array }>()

const utf8 = new TextEncoder()

/** A request body as the UTF-8 bytes that are sent. */
export const utf8Body = (body: string): Uint8Array => utf8.encode(body)

/** 4-byte words over `bytes` when its offset allows it (TextEncoder output always starts at offset 0). */
const words = (bytes: Uint8Array, count: number): Uint32Array | undefined =>
  bytes.byteOffset % 4 === 0 ? new Uint32Array(bytes.buffer, bytes.byteOffset, count) : undefined

/**
 * Length of the longest common prefix. A portable loop (`Buffer.compare` exists only in Node) over 4-byte words,
 * four words per step folded with XOR/OR so that one branch covers 16 bytes (about 2.5× a word-by-word loop).
 * Bodies grow with the history and this runs on every request.
 */
export const commonPrefixLength = (a: Uint8Array, b: Uint8Array): number => {
  const count = Math.min(a.length, b.length) >>> 2
  const x = words(a, count)
  const y = x === undefined ? undefined : words(b, count)
  return prefixLength(a, x, b, y, Math.min(a.length, b.length))
}

/** `commonPrefixLength` of the first `length` bytes, with 4-byte word views over them when the caller has them. */
const prefixLength = (a: Uint8Array, x: Uint32Array | undefined, b: Uint8Array, y: Uint32Array | undefined, length: number): number => {
  let at = 0
  if (x !== undefined && y !== undefined) {
    const count = length >>> 2
    let i = 0
    for (const last = count - 3; i < last; i += 4) {
      if (((x[i]! ^ y[i]!) | (x[i + 1]! ^ y[i + 1]!) | (x[i + 2]! ^ y[i + 2]!) | (x[i + 3]! ^ y[i + 3]!)) !== 0) break
    }
    while (i < count && x[i] === y[i]) i++
    at = i << 2
  }
  while (at < length && a[at] === b[at]) at++
  return at
}

export const takeLock = (
  client: LlmClient,
  locked: Request,
  toolsVersion: number,
  onViolation: "error" | "warn"
): LockedPrefix => {
  const withUser = utf8Body(client.encodeRequest({ ...locked, items: [...locked.items, Item.userText("u")] }))
  const withAssistant = utf8Body(client.encodeRequest({ ...locked, items: [...locked.items, Item.assistantText("a")] }))
  const prefixBytes = commonPrefixLength(withUser, withAssistant)
  const lock: LockedPrefix = Object.freeze({
    historyLength: locked.items.length,
    systemPrompt: locked.systemPrompt,
    toolsVersion,
    prefixBytes,
    onViolation
  })
  // A copy starts at offset 0 of its own buffer, so its word view always exists.
  const bytes = withUser.slice(0, prefixBytes)
  lockedBytes.set(lock, { bytes, words: new Uint32Array(bytes.buffer, 0, prefixBytes >>> 2) })
  return lock
}

export const prefixIntact = (lock: LockedPrefix, body: Uint8Array): boolean => {
  const prefix = lockedBytes.get(lock)?.bytes
  return prefix !== undefined && body.length >= prefix.length && commonPrefixLength(prefix, body) === prefix.length
}


/**
 * UTF-8 bytes of a request body, written into a buffer that is reused request after request: a fresh
 * `TextEncoder.encode` per request would allocate (and leave the collector to track) a new backing store each
 * time, and bodies grow with the history. Grown by doubling (about 1.5× the largest body for mostly ASCII
 * bodies); never shrunk while its worker lives. The buffer's 4-byte word view is made with it, so comparing two
 * bodies makes no view per request.
 */
class BodyBuffer {
  bytes = new Uint8Array(0)
  words = new Uint32Array(0)
  /** Bytes of the body written last. */
  length = 0

  /** Encodes `body`; `bytes[0, length)` holds it until the next `write`. */
  write(body: string): void {
    if (this.bytes.length < body.length) this.#grow(body.length + (body.length >>> 1))
    const first = utf8.encodeInto(body, this.bytes)
    let written = first.written
    if (first.read < body.length) {
      // Mostly non-ASCII text: a UTF-16 code unit is at most 3 UTF-8 bytes (a surrogate pair, 2 units, is 4).
      this.#grow(body.length * 3)
      written = utf8.encodeInto(body, this.bytes).written
    }
    this.length = written
  }

  #grow(atLeast: number): void {
    // A multiple of 4 bytes, so the word view covers the whole buffer.
    const size = (Math.max(atLeast, this.bytes.length * 2, 1024) + 3) & ~3
    this.bytes = new Uint8Array(size)
    this.words = new Uint32Array(this.bytes.buffer)
  }
}

/** Remembers the previous request body of a worker so each request can be compared with the one before. */
export class RequestBytesTracker {
  /** The previous body and the spare buffer the next body is written into; they swap on every request. */
  #previous: BodyBuffer | undefined
  #spare = new BodyBuffer()

  /** `body` as sent (a string, encoded here as UTF-8) against the previous body and the lock. */
  measure(turn: number, body: string, lock: LockedPrefix | undefined): CacheReport {
    const buffer = this.#spare
    buffer.write(body)
    const length = buffer.length
    const previous = this.#previous
    const report: CacheReport = {
      turn,
      requestBytes: length,
      unchangedPrefixBytes:
        previous === undefined ? 0 : prefixLength(previous.bytes, previous.words, buffer.bytes, buffer.words, Math.min(previous.length, length)),
      previousRequestBytes: previous?.length,
      locked: lock === undefined ? undefined : { prefixBytes: lock.prefixBytes, intact: this.#intact(lock, buffer) }
    }
    this.#spare = previous ?? new BodyBuffer()
    this.#previous = buffer
    return report
  }

  /** `prefixIntact` on the buffer, without a view per request. */
  #intact(lock: LockedPrefix, body: BodyBuffer): boolean {
    const prefix = lockedBytes.get(lock)
    if (prefix === undefined || body.length < prefix.bytes.length) return false
    return prefixLength(prefix.bytes, prefix.words, body.bytes, body.words, prefix.bytes.length) === prefix.bytes.length
  }
}
