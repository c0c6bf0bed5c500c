/**
 * A random (version 4) UUID from the Web Crypto API, which Node ≥ 19, Deno, Bun, browsers and edge runtimes all
 * expose as `globalThis.crypto`. Browsers offer `randomUUID` only in secure contexts (HTTPS, localhost), while
 * `getRandomValues` works everywhere, so the UUID is assembled from random bytes when `randomUUID` is missing.
 */
export const randomUuid = (): string => {
  const webCrypto = globalThis.crypto
  if (typeof webCrypto.randomUUID === "function") return webCrypto.randomUUID()
  const bytes = webCrypto.getRandomValues(new Uint8Array(16))
  bytes[6] = ((bytes[6] ?? 0) & 0x0f) | 0x40 // version 4
  bytes[8] = ((bytes[8] ?? 0) & 0x3f) | 0x80 // RFC 9562 variant
  const hex = Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0")).join("")
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}
