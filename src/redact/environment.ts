import { urlCredentials } from "./redact-url.ts"

type Env = Readonly<Record<string, string | undefined>>

/** Names of variables (and headers) that hold a credential; matched generously: a hidden harmless value costs nothing. */
export const SECRET_NAME = /(?:key|token|secret|password|passwd|credentials?|authorization|auth)$/i

/** Variables holding a URL, whose userinfo and credential parameters are secrets (`OPENAI_BASE_URL`…). */
const URL_NAME = /(?:url|uri|endpoint|host)$/i

/**
 * The credentials an environment holds, by value: every variable named like a credential (`*_API_KEY`, `*_TOKEN`,
 * `*_SECRET`…, which covers every built-in provider's key variable), the extra names given (`api_key_env` and
 * `access_key_env` of a config), and the userinfo and key parameters of variables holding URLs.
 */
export const environmentSecrets = (env: Env, named: Iterable<string> = []): ReadonlyArray<string> => {
  const names = new Set(named)
  const found: Array<string> = []
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) continue
    if (names.has(name) || SECRET_NAME.test(name)) found.push(value)
    else if (URL_NAME.test(name)) found.push(...urlCredentials(value))
  }
  return found
}

/**
 * The credentials a set of request headers carries: every header named like a credential (`Authorization`,
 * `x-api-key`, `x-goog-api-key`…), whole and, for `<scheme> <token>`, the token alone (what a provider would echo).
 */
export const headerSecrets = (headers: Readonly<Record<string, string>>): ReadonlyArray<string> => {
  const found: Array<string> = []
  for (const [name, value] of Object.entries(headers)) {
    if (!SECRET_NAME.test(name)) continue
    found.push(value)
    const token = /^\s*\S+\s+(\S+)\s*$/.exec(value)?.[1]
    if (token !== undefined) found.push(token)
  }
  return found
}
