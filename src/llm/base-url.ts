import { LlmConfigError } from "./llm-error.ts"
import { printable } from "./transport/printable.ts"

const LOOPBACK_HOST = /^(localhost|127(?:\.\d{1,3}){3}|\[::1\])(?::\d+)?$/i

/** `user:password@` (or a bare `user@`) after an optional scheme: what must never be printed. */
const USERINFO = /^([a-z][a-z0-9+.-]*:\/\/)?[^/?#@]*@/i

/**
 * A base URL as an error may print it: credentials replaced by `***`, query and fragment (where keys also travel)
 * left out, unsafe characters escaped, clipped; quoted.
 */
export const shownBaseUrl = (text: string): string => {
  const withoutSecrets = text.replace(USERINFO, (_all, scheme: string | undefined) => `${scheme ?? ""}***@`).replace(/[?#].*$/s, "")
  return JSON.stringify(printable(withoutSecrets, 200))
}

/** `host[:port][/path]` written without a scheme: what people type for a local server. */
const SCHEMELESS = /^(?:localhost|\[[0-9a-f:.]+\]|[a-z0-9-]+(?:\.[a-z0-9-]+)*)(?::\d+)?(?:\/.*)?$/i

const invalid = (given: string, provider: string, why: string, suggestion?: string): LlmConfigError =>
  new LlmConfigError({
    option: "baseUrl",
    message: `Base URL ${shownBaseUrl(given)} for provider "${provider}" ${why}${suggestion === undefined ? "" : `; did you mean ${JSON.stringify(suggestion)}?`}`,
    ...(suggestion === undefined ? {} : { suggestion })
  })

/**
 * Checks a base URL the way fetch will use it (WHATWG URL): absolute, `http:` or `https:`, with a host and no
 * credentials (fetch refuses those at every request). Returns it unchanged; throws `LlmConfigError` with
 * `option: "baseUrl"`, naming what is wrong and, for a URL without a scheme, the one to use.
 */
export const checkBaseUrl = (given: string, provider: string): string => {
  let parsed: URL | undefined
  try {
    parsed = new URL(given)
  } catch {
    parsed = undefined
  }
  // "localhost:8080" parses, as the scheme "localhost:" with the path "8080": a scheme-less host is caught first.
  if (SCHEMELESS.test(given) && (parsed === undefined || !given.includes("://"))) {
    const host = given.split("/")[0] ?? given
    const scheme = LOOPBACK_HOST.test(host) ? "http" : "https"
    return fail(invalid(given, provider, "has no scheme", `${scheme}://${given}`))
  }
  if (parsed === undefined) return fail(invalid(given, provider, "is not a valid URL"))
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    return fail(invalid(given, provider, `uses ${JSON.stringify(printable(parsed.protocol, 40))}; only http: and https: are supported`))
  }
  if (parsed.hostname === "") return fail(invalid(given, provider, "has no host"))
  if (parsed.username !== "" || parsed.password !== "") {
    return fail(invalid(given, provider, "contains a user name or password, which fetch refuses; pass the key as apiKey (or in headers)"))
  }
  return given
}

const fail = (error: LlmConfigError): never => {
  throw error
}
