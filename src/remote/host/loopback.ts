import { isIPv4, isIPv6 } from "node:net"

/**
 * Whether a socket's remote address is this machine: 127.0.0.0/8, `::1`, or IPv4-mapped loopback
 * (`::ffff:127.x.y.z`, which a dual-stack socket reports for an IPv4 peer). Decided from the socket only — never
 * from `Host`, `X-Forwarded-For` or any other header a caller writes.
 */
export const isLoopbackAddress = (address: string | undefined): boolean => {
  if (address === undefined) return false
  if (isIPv4(address)) return address.startsWith("127.")
  if (!isIPv6(address)) return false
  const lower = address.toLowerCase()
  if (lower === "::1" || lower === "0:0:0:0:0:0:0:1") return true
  const mapped = /^(?:0{0,4}:){0,5}:?ffff:(\d{1,3}(?:\.\d{1,3}){3})$/.exec(lower)
  return mapped !== null && isIPv4(mapped[1] as string) && (mapped[1] as string).startsWith("127.")
}
