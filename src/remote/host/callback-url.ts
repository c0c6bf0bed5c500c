import { isIPv4 } from "node:net"

/** Longest callback URL accepted, in characters. */
export const MAX_CALLBACK_URL_CHARS = 2048

/**
 * What `checkCallbackUrl` found: the parsed URL and its `host:port` label when the URL is acceptable, else the
 * reason it is refused.
 */
export type CallbackUrlCheck =
  | { readonly ok: true; readonly url: URL; readonly hostLabel: string }
  /** `reason` reads after the field name: `callback_url: <reason>`. */
  | { readonly ok: false; readonly reason: string }

const refuse = (reason: string): CallbackUrlCheck => ({ ok: false, reason })

/**
 * Checks a plugin's callback URL before the host ever connects to it (the host must not become an SSRF exit to
 * other machines). Parsed with the WHATWG URL parser — the one that will be used to connect — and then held to a
 * stricter rule than "parses to a loopback address": the host must be *written* as `localhost`, a dotted-decimal
 * 127.x.y.z or `[::1]`, exactly as the parser prints it. Spellings the parser would quietly turn into loopback
 * (`2130706433`, `0x7f.1`, `0177.0.0.1`, `127.1`, percent-encoded or full-width digits) are refused: they are
 * what filters elsewhere miss, and an honest plugin never writes them. No name lookup is made, so a hostname that
 * merely resolves to loopback (`localtest.me`, `127.0.0.1.nip.io`) is refused too.
 */
export const checkCallbackUrl = (input: string): CallbackUrlCheck => {
  if (input.length === 0) return refuse("is empty")
  if (input.length > MAX_CALLBACK_URL_CHARS) return refuse(`is longer than ${MAX_CALLBACK_URL_CHARS} characters`)
  // The parser strips tabs and newlines and reads `\` as `/`; text that needs either is not written honestly.
  if (/[\u0000-\u0020\u007f-\u009f\\]/.test(input)) return refuse("contains whitespace, control characters or a backslash")
  if (!/^[\x21-\x7e]+$/.test(input)) return refuse("contains non-ASCII characters")
  let url: URL
  try {
    url = new URL(input)
  } catch {
    return refuse("is not a valid absolute URL")
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return refuse(`scheme must be http or https, not ${url.protocol.slice(0, -1)}`)
  const schemeEnd = input.indexOf("://")
  if (schemeEnd < 0 || input.slice(0, schemeEnd).toLowerCase() !== url.protocol.slice(0, -1)) {
    return refuse("must start with http:// or https://")
  }
  const rest = input.slice(schemeEnd + 3)
  const authority = rest.slice(0, rest.search(/[/?#]|$/))
  if (authority.includes("@") || url.username !== "" || url.password !== "") return refuse("must not contain credentials (user@host)")
  if (authority.includes("%")) return refuse("host must not be percent-encoded")
  const portMatch = /^(\[[^\]]*\]|[^:]*)(?::(\d*))?$/.exec(authority)
  if (portMatch === null) return refuse("has a malformed host or port")
  const writtenHost = (portMatch[1] as string).toLowerCase()
  const writtenPort = portMatch[2]
  if (writtenPort !== undefined) {
    if (!/^[1-9]\d{0,4}$/.test(writtenPort) || Number(writtenPort) > 65535) {
      return refuse(`port must be 1-65535 written without leading zeros, got "${writtenPort}"`)
    }
  }
  if (writtenHost !== url.hostname) return refuse(`host "${writtenHost}" is not written canonically (it parses as "${url.hostname}")`)
  const host = url.hostname
  if (host === "localhost") return { ok: true, url, hostLabel: url.host }
  if (host.startsWith("[")) {
    return host === "[::1]" ? { ok: true, url, hostLabel: url.host } : refuse(`host ${host} is not the IPv6 loopback [::1]`)
  }
  if (isIPv4(host)) {
    if (!host.startsWith("127.")) return refuse(`host ${host} is not a loopback address (127.0.0.0/8)`)
    return { ok: true, url, hostLabel: url.host }
  }
  return refuse(`host "${host}" is not loopback: use 127.0.0.1, [::1] or localhost (hostnames are not resolved)`)
}
