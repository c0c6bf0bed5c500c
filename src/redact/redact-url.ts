/**
 * Credentials in URLs are replaced before anything is shown: `--base-url http://user:secret@host` or a base URL with
 * `?key=…` (Gemini's style) must not come back in an error line, a log or a screenshot of the terminal.
 */
const HIDDEN = "***"

/**
 * Query and fragment parameters whose value is a credential (`key`, `api_key`, `access_token`, `client_secret`, `sig`…).
 * Matched on the lower-cased, decoded name, generously: hiding a harmless value costs less than showing a key.
 */
const SENSITIVE_NAME = /^(?:sig|auth|authorization|code|session|sessionid|.*(?:key|token|secret|password|passwd|pwd|signature|credentials?))$/

const decodedName = (name: string): string => {
  try {
    return decodeURIComponent(name.replace(/\+/g, " ")).toLowerCase()
  } catch {
    return name.toLowerCase()
  }
}

/** `a=1&key=xyz` → `a=1&key=***`, keeping the separators and every other parameter as written. */
const redactParameters = (parameters: string): string =>
  parameters
    .split(/([&;])/)
    .map((part) => {
      const equals = part.indexOf("=")
      if (equals < 0) return part
      const name = part.slice(0, equals)
      return SENSITIVE_NAME.test(decodedName(name)) ? `${name}=${HIDDEN}` : part
    })
    .join("")

/**
 * One URL (or something meant as one, valid or not) with its userinfo and credential parameters hidden. Works on
 * the text as written rather than through `new URL`, so that a URL which does not parse is redacted as well and
 * nothing else about it changes.
 */
export const redactUrl = (url: string): string => {
  const schemeEnd = url.indexOf("://")
  const authorityStart = schemeEnd < 0 ? 0 : schemeEnd + 3
  const rest = url.slice(authorityStart)
  const authorityLength = rest.search(/[/?#]/)
  const authority = authorityLength < 0 ? rest : rest.slice(0, authorityLength)
  const afterAuthority = authorityLength < 0 ? "" : rest.slice(authorityLength)
  // The last `@` ends the userinfo: a password may itself contain an unencoded `@`.
  const at = authority.lastIndexOf("@")
  const host = at < 0 ? authority : `${HIDDEN}@${authority.slice(at + 1)}`
  const hash = afterAuthority.indexOf("#")
  const beforeHash = hash < 0 ? afterAuthority : afterAuthority.slice(0, hash)
  const fragment = hash < 0 ? "" : `#${redactParameters(afterAuthority.slice(hash + 1))}`
  const question = beforeHash.indexOf("?")
  const pathAndQuery = question < 0 ? beforeHash : `${beforeHash.slice(0, question)}?${redactParameters(beforeHash.slice(question + 1))}`
  return `${url.slice(0, authorityStart)}${host}${pathAndQuery}${fragment}`
}

/**
 * A URL with a scheme inside free text: up to whitespace or a character a URL never holds raw (`"`, `<`, `>`, a
 * backtick). A single quote is legal in userinfo, so it does not end the URL: a quoted URL merely takes its closing
 * quote along, which redaction leaves as it is.
 */
const URL_IN_TEXT = /[a-z][a-z0-9+.-]*:\/\/[^\s"<>`]*/gi

/** Every `scheme://…` URL inside `text` redacted as by `redactUrl`; the rest of the text unchanged. */
export const redactUrls = (text: string): string => text.replace(URL_IN_TEXT, redactUrl)

/**
 * The credentials written into one URL, by value: the user name and password of its userinfo (decoded as well as
 * written) and the values of credential parameters. A configured base URL's secrets are known this way, so they
 * are hidden wherever they turn up again, not only inside that URL.
 */
export const urlCredentials = (url: string): ReadonlyArray<string> => {
  const found: Array<string> = []
  const both = (value: string): void => {
    found.push(value)
    try {
      found.push(decodeURIComponent(value.replace(/\+/g, " ")))
    } catch {
      // Not percent-encoded after all: the written form is the one to hide.
    }
  }
  const schemeEnd = url.indexOf("://")
  const rest = url.slice(schemeEnd < 0 ? 0 : schemeEnd + 3)
  const authorityLength = rest.search(/[/?#]/)
  const authority = authorityLength < 0 ? rest : rest.slice(0, authorityLength)
  const at = authority.lastIndexOf("@")
  if (at >= 0) {
    const userinfo = authority.slice(0, at)
    const colon = userinfo.indexOf(":")
    both(colon < 0 ? userinfo : userinfo.slice(0, colon))
    if (colon >= 0) both(userinfo.slice(colon + 1))
  }
  const parameters = authorityLength < 0 ? "" : rest.slice(authorityLength).replace(/^[^?#]*[?#]?/, "")
  for (const part of parameters.split(/[&;#?]/)) {
    const equals = part.indexOf("=")
    if (equals > 0 && SENSITIVE_NAME.test(decodedName(part.slice(0, equals)))) both(part.slice(equals + 1))
  }
  return found.filter((value) => value !== "")
}
