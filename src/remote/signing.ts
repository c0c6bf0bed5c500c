import { createHmac, randomBytes, timingSafeEqual } from "node:crypto"
import { DELIVERY_HEADER, SIGNATURE_HEADER, SIGNATURE_V2_HEADER, TIMESTAMP_HEADER } from "./wire.ts"

/**
 * Callback signatures: HMAC-SHA256 with the per-registration secret, so a receiver can refuse forged bodies and
 * stale replays without trusting the network. Two versions are sent side by side, each in its own header:
 *
 * - `v2` (`x-llm-worker-signature-v2`) covers `v2.<timestamp>.<delivery id>.<body>`. The delivery id is random
 *   per callback, so no two callbacks carry the same signature, even with byte-identical bodies in one second, and
 *   a receiver refuses a replay by remembering delivery ids.
 * - `v1` (`x-llm-worker-signature`) covers `<timestamp>.<body>`: kept for receivers written against it. It cannot
 *   tell a replay from a legitimate repeat; new receivers verify `v2`.
 *
 * A v1 text starts with a digit and a v2 text with `v`, so a signature of one version is never valid as the other.
 */

const PREFIX = "v1="
const V2_PREFIX = "v2="
/** How far a callback's timestamp may be from the receiver's clock, in seconds, before it is refused as stale. */
export const DEFAULT_SIGNATURE_TOLERANCE_SECONDS = 300
/** A delivery id: 16-128 characters of base64url (the host sends 22: 16 random bytes). */
const DELIVERY_ID = /^[A-Za-z0-9_-]{16,128}$/
const HEX64 = /^[0-9a-f]{64}$/

const mac = (secret: string, timestamp: string, body: string | Uint8Array): Buffer =>
  createHmac("sha256", secret).update(`${timestamp}.`).update(body).digest()

const macV2 = (secret: string, timestamp: string, deliveryId: string, body: string | Uint8Array): Buffer =>
  createHmac("sha256", secret).update(`v2.${timestamp}.${deliveryId}.`).update(body).digest()

/** The `x-llm-worker-signature` header value (`v1`, over `<timestamp>.<body>`) for one callback body. */
export const signCallback = (secret: string, timestamp: string, body: string | Uint8Array): string =>
  `${PREFIX}${mac(secret, timestamp, body).toString("hex")}`

/** A fresh delivery id for one callback: 16 random bytes, base64url. */
export const newDeliveryId = (): string => randomBytes(16).toString("base64url")

/** The `x-llm-worker-signature-v2` header value (`v2`, over `v2.<timestamp>.<delivery id>.<body>`) for one callback. */
export const signDelivery = (secret: string, timestamp: string, deliveryId: string, body: string | Uint8Array): string =>
  `${V2_PREFIX}${macV2(secret, timestamp, deliveryId, body).toString("hex")}`

/**
 * The headers of one signed callback as the host sends them: timestamp, delivery id, and both signatures.
 * `deliveryId` defaults to a fresh random one.
 */
export const signedCallbackHeaders = (secret: string, body: string | Uint8Array, options: { readonly timestamp?: string; readonly deliveryId?: string } = {}): Record<string, string> => {
  const timestamp = options.timestamp ?? String(Math.floor(Date.now() / 1000))
  const deliveryId = options.deliveryId ?? newDeliveryId()
  return {
    [TIMESTAMP_HEADER]: timestamp,
    [DELIVERY_HEADER]: deliveryId,
    [SIGNATURE_V2_HEADER]: signDelivery(secret, timestamp, deliveryId, body),
    [SIGNATURE_HEADER]: signCallback(secret, timestamp, body)
  }
}

/**
 * What `verifyCallback` / `verifyDelivery` found: a valid signature, or why not — a header is `missing`,
 * `malformed` (not a unix-seconds timestamp, not `v1=` / `v2=` + 64 hex, a delivery id that is not 16-128 base64url
 * characters), `stale` (outside the tolerance) or a `mismatch` (forged or altered body, timestamp or delivery id).
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

const checkTimestamp = (timestamp: string, options: VerifyOptions): SignatureCheck | undefined => {
  if (!/^\d{1,12}$/.test(timestamp)) return { ok: false, reason: "malformed" }
  const now = options.nowSeconds ?? Math.floor(Date.now() / 1000)
  const tolerance = options.toleranceSeconds ?? DEFAULT_SIGNATURE_TOLERANCE_SECONDS
  return Math.abs(now - Number(timestamp)) > tolerance ? { ok: false, reason: "stale" } : undefined
}

const compare = (expected: Buffer, hex: string): SignatureCheck =>
  timingSafeEqual(expected, Buffer.from(hex, "hex")) ? { ok: true } : { ok: false, reason: "mismatch" }

/**
 * Checks a `v1` callback signature (`x-llm-worker-timestamp`, `x-llm-worker-signature`) against the body bytes it
 * arrived with. A `v1` signature does not tell a replay from a legitimate repeat: prefer `verifyDelivery`.
 */
export const verifyCallback = (
  secret: string,
  timestamp: string | undefined,
  signature: string | undefined,
  body: string | Uint8Array,
  options: VerifyOptions = {}
): SignatureCheck => {
  if (timestamp === undefined || signature === undefined) return { ok: false, reason: "missing" }
  if (!signature.startsWith(PREFIX)) return { ok: false, reason: "malformed" }
  const hex = signature.slice(PREFIX.length)
  if (!HEX64.test(hex)) return { ok: false, reason: "malformed" }
  return checkTimestamp(timestamp, options) ?? compare(mac(secret, timestamp, body), hex)
}

/** The three headers a `v2` signature is checked with, as received (undefined when absent). */
export interface DeliveryHeaders {
  /** `x-llm-worker-timestamp`. */
  readonly timestamp: string | undefined
  /** `x-llm-worker-delivery`. */
  readonly deliveryId: string | undefined
  /** `x-llm-worker-signature-v2`. */
  readonly signature: string | undefined
}

/** Reads the `v2` headers from Node's `request.headers` or a fetch `Headers` (a repeated header counts as malformed). */
export const deliveryHeaders = (headers: Headers | Readonly<Record<string, string | ReadonlyArray<string> | undefined>>): DeliveryHeaders => {
  const read = (name: string): string | undefined => {
    if (headers instanceof Headers) return headers.get(name) ?? undefined
    const value = headers[name]
    return typeof value === "string" ? value : value === undefined ? undefined : value.join(", ")
  }
  return { timestamp: read(TIMESTAMP_HEADER), deliveryId: read(DELIVERY_HEADER), signature: read(SIGNATURE_V2_HEADER) }
}

/**
 * Checks a `v2` callback signature against the body bytes it arrived with. A valid one proves the host signed this
 * delivery; remember its `deliveryId` for the tolerance window to refuse replays (a legitimate repeat of a call
 * is another delivery, with another id).
 */
export const verifyDelivery = (secret: string, headers: DeliveryHeaders, body: string | Uint8Array, options: VerifyOptions = {}): SignatureCheck => {
  const { timestamp, deliveryId, signature } = headers
  if (timestamp === undefined || deliveryId === undefined || signature === undefined) return { ok: false, reason: "missing" }
  if (!DELIVERY_ID.test(deliveryId) || !signature.startsWith(V2_PREFIX)) return { ok: false, reason: "malformed" }
  const hex = signature.slice(V2_PREFIX.length)
  if (!HEX64.test(hex)) return { ok: false, reason: "malformed" }
  return checkTimestamp(timestamp, options) ?? compare(macV2(secret, timestamp, deliveryId, body), hex)
}
