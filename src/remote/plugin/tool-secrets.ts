import { type DeliveryHeaders, type SignatureCheck, verifyDelivery } from "../signing.ts"

/**
 * The callback secrets of one tool: the one the latest registration returned, and the one before it for one
 * tolerance window after the change, so calls the host signed just before a re-registration still verify.
 */
export class ToolSecrets {
  private current: string | undefined
  private previous: string | undefined
  private previousUntil = 0

  /** A new secret from a registration response; the old one stays valid until `nowSeconds + toleranceSeconds`. */
  rotate(secret: string, nowSeconds: number, toleranceSeconds: number): void {
    if (secret === this.current) return
    if (this.current !== undefined) {
      this.previous = this.current
      this.previousUntil = nowSeconds + toleranceSeconds
    }
    this.current = secret
  }

  /** Checks a delivery's `v2` signature under the current secret, then the previous one while it is still valid. */
  verify(headers: DeliveryHeaders, body: Uint8Array, nowSeconds: number, toleranceSeconds: number): SignatureCheck {
    if (this.current === undefined) return { ok: false, reason: "mismatch" }
    const options = { nowSeconds, toleranceSeconds }
    const check = verifyDelivery(this.current, headers, body, options)
    if (check.ok || check.reason !== "mismatch" || this.previous === undefined || nowSeconds > this.previousUntil) return check
    return verifyDelivery(this.previous, headers, body, options)
  }
}
