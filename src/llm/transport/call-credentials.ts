import { headerSecrets } from "../../redact/environment.ts"
import { urlCredentials } from "../../redact/redact-url.ts"
import { SecretRedactor } from "../../redact/secrets.ts"
import type { Event } from "../event.ts"
import { boundedRawError } from "../raw-error.ts"

/**
 * The credentials one call sends (credential headers, with and without their `Bearer ` scheme; the URL's userinfo
 * and key parameters), as a redactor for what the provider answers. A provider may echo the key back in an error
 * (its `code`, its message, any field of its error object, an HTTP error body); the caller's own key must not
 * reach its logs through our error. Built only when an error is to be reported.
 */
export const callCredentials = (url: string, headers: Readonly<Record<string, string>>): SecretRedactor =>
  new SecretRedactor([...headerSecrets(headers), ...urlCredentials(url)])

/** Whether a (bounded, small) JSON value has a string anywhere in it. */
const holdsText = (value: unknown): boolean => {
  if (typeof value === "string") return true
  if (typeof value !== "object" || value === null) return false
  for (const item of Object.values(value)) if (holdsText(item)) return true
  return false
}

/**
 * An event with the call's credentials taken out of the text a provider's error puts in it: an `error` event's
 * code, message and provider object, a `block_abort`'s reason (decoders abort open blocks with the error's
 * message), and text inside a usage event's raw copy (an error chunk's usage may carry anything). Every other event is returned as it is, without a look.
 */
export const withoutCredentials = (event: Event, redactor: () => SecretRedactor): Event => {
  if (event.type === "usage") {
    // Raw usage is numbers, except where a provider puts text beside them (an error chunk's usage can carry anything).
    if (event.raw === undefined || !holdsText(event.raw)) return event
    return { ...event, raw: redactor().redactValue(event.raw) }
  }
  if (event.type === "block_abort") {
    const reason = redactor().redactSecrets(event.reason)
    return reason === event.reason ? event : { ...event, reason }
  }
  if (event.type !== "error") return event
  const secrets = redactor()
  const code = secrets.redactSecrets(event.code)
  const message = secrets.redactSecrets(event.message)
  const raw = event.raw === undefined ? undefined : boundedRawError(secrets.redactValue(event.raw))
  if (code === event.code && message === event.message && (raw === undefined || JSON.stringify(raw) === JSON.stringify(event.raw))) return event
  return raw === undefined ? { type: "error", code, message } : { type: "error", code, message, raw }
}
