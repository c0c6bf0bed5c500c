import { createHmac, timingSafeEqual } from "node:crypto"

/**
 * Callback signatures: HMAC-SHA256 with the per-registration secret over `<timestamp>.<body>`, so a receiver can
 * refuse forged bodies and stale replays without trusting the network. The scheme is versioned (`v1=`) so a
 * later algorithm can be offered next to this one.
 */

const PREFIX = "v1="
/** How far a callback's timestamp may be from the receiver's clock, in seconds, before it is refused as stale. */
export const DEFAULT_SIGNATURE_TOLERANCE_SECONDS = 300

const mac = (secret: string, timestamp: string, body: string | Uint8Array): Buffer =>
  createHmac("sha256", secret).update(`${timestamp}.`).update(body).digest()

/** The `x-llm-worker-signature` header value for one callback body. */
export const signCallback = (secret: string, timestamp: string, body: string | Uint8Array): string =>
  `${PREFIX}${mac(secret, timestamp, body).toString("hex")}`

/**
 * What `verifyCallback` found: a valid signature, or why not — a header is `missing`, `malformed` (not a
 * unix-seconds timestamp or not `v1=<64 hex>`), `stale` (outside the tolerance) or a `mismatch` (forged or altered body).
 */
export type SignatureCheck =
  | { readonly ok: true }
  | { readonly ok: false; readonly reason: "missing" | "malformed" | "stale" | "mismatch" }

/** The clock `verifyCallback` checks a timestamp against. */
export interface VerifyOptions {
  /** Receiver's clock in unix seconds (default: now). */
  readonly nowSeconds?: number
  /** Largest distance between the timestamp and the clock, in seconds (default 300, `DEFAULT_SIGNATURE_TOLERANCE_SECONDS`). */
  readonly toleranceSeconds?: number
}

/** Checks a callback's timestamp and signature headers against the body bytes it arrived with. */
export const verifyCallback = (
  secret: string,
  timestamp: string | undefined,
  signature: string | undefined,
  body: string | Uint8Array,
  options: VerifyOptions = {}
): SignatureCheck => {
  if (timestamp === undefined || signature === undefined) return { ok: false, reason: "missing" }
  if (!/^\d{1,12}$/.test(timestamp) || !signature.startsWith(PREFIX)) return { ok: false, reason: "malformed" }
  const hex = signature.slice(PREFIX.length)
  if (!/^[0-9a-f]{64}$/.test(hex)) return { ok: false, reason: "malformed" }
  const now = options.nowSeconds ?? Math.floor(Date.now() / 1000)
  const tolerance = options.toleranceSeconds ?? DEFAULT_SIGNATURE_TOLERANCE_SECONDS
  if (Math.abs(now - Number(timestamp)) > tolerance) return { ok: false, reason: "stale" }
  const expected = mac(secret, timestamp, body)
  return timingSafeEqual(expected, Buffer.from(hex, "hex")) ? { ok: true } : { ok: false, reason: "mismatch" }
}
