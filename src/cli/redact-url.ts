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
