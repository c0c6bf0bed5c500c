import { redactUrls } from "./redact-url.ts"

/**
 * Credentials the process holds (provider API keys, access keys, tokens) must not leave it in text: not in an
 * error, a log line, an audit record or an HTTP answer, whatever a provider or a plugin echoed back to us. A
 * `SecretRedactor` knows the secrets by value and replaces each wherever it appears, in the forms text carries it
 * through other encodings: raw, JSON-escaped (once and twice: JSON inside a JSON string), percent-encoded (either
 * hex case, `+` for spaces) and HTML-escaped. URL credentials it was not told about (userinfo, `?key=` and the
 * like) are hidden by their shape. Each boundary where text leaves applies one redactor, once.
 */

/** What a secret is replaced with, the same as URL credentials. */
export const REDACTED = "***"

/**
 * Values shorter than this are not treated as secrets: a four-letter "key" would blank that word in every message.
 * Real API keys and tokens are far longer; the host refuses access keys under 16 characters.
 */
export const MIN_SECRET_CHARS = 8

/** Deepest value `redactValue` copies; below it a value is replaced whole (records redacted here are shallow). */
const MAX_VALUE_DEPTH = 32

const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")

const jsonInner = (text: string): string => JSON.stringify(text).slice(1, -1)

const html = (text: string): string =>
  text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&#39;")

const percentEncoded = (text: string): ReadonlyArray<string> => {
  try {
    const component = encodeURIComponent(text)
    return [component, component.replace(/%20/g, "+"), encodeURI(text)]
  } catch {
    // A lone surrogate cannot be percent-encoded; no URL can carry it that way either.
    return []
  }
}

/** Every spelling of `secret` that text handed on through JSON, URLs or HTML would hold. */
const spellings = (secret: string): ReadonlyArray<string> => {
  const json = jsonInner(secret)
  const forms = new Set([
    secret,
    json,
    json.replace(/\//g, "\\/"),
    json.replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`),
    jsonInner(json),
    html(secret),
    ...percentEncoded(secret)
  ])
  return [...forms]
}

/** A spelling as a pattern: percent escapes match in either hex case (`%2f` and `%2F`). */
const patternOf = (spelling: string): string =>
  escapeRegExp(spelling).replace(/%([0-9A-F])([0-9A-F])/g, (_m, a: string, b: string) => `%[${a}${a.toLowerCase()}][${b}${b.toLowerCase()}]`)

/**
 * The secrets of one process (or one boundary), by value. `add` more as they become known (a key file read on
 * first use, a token issued); `redact` replaces every known secret in any of its spellings, then URL credentials.
 */
export class SecretRedactor {
  readonly #secrets = new Set<string>()
  #pattern: RegExp | null | undefined = null

  constructor(secrets: Iterable<string | undefined> = []) {
    this.add(...secrets)
  }

  /** Adds secrets (ignoring undefined, blank and too-short values, and surrounding whitespace). */
  add(...secrets: ReadonlyArray<string | undefined>): this {
    for (const secret of secrets) {
      const value = typeof secret === "string" ? secret.trim() : ""
      if (value.length < MIN_SECRET_CHARS || this.#secrets.has(value)) continue
      this.#secrets.add(value)
      this.#pattern = undefined
    }
    return this
  }

  /** How many secrets are known. */
  get size(): number {
    return this.#secrets.size
  }

  #compiled(): RegExp | null {
    if (this.#pattern === undefined) {
      const all = [...this.#secrets].flatMap(spellings)
      // Longest first, so that a secret containing another is replaced whole.
      all.sort((a, b) => b.length - a.length)
      this.#pattern = all.length === 0 ? null : new RegExp(all.map(patternOf).join("|"), "g")
    }
    return this.#pattern
  }

  /** `text` with every known secret (in every spelling) and every URL credential replaced by `***`. */
  redact(text: string): string {
    return redactUrls(this.redactSecrets(text))
  }

  /**
   * `text` with every known secret (in every spelling) replaced, and nothing else touched: for text that is not
   * ours to rewrite by shape, such as a model's answer quoting a URL with a `code=` parameter.
   */
  redactSecrets(text: string): string {
    const pattern = this.#compiled()
    return pattern === null ? text : text.replace(pattern, REDACTED)
  }

  /**
   * A copy of a JSON-like value with every string (and every key) redacted; other values as they are. Plain
   * objects and arrays are copied; anything nested deeper than 32 levels is replaced whole.
   */
  redactValue<T>(value: T): T {
    return this.#value(value, 0) as T
  }

  #value(value: unknown, depth: number): unknown {
    if (typeof value === "string") return this.redact(value)
    if (typeof value !== "object" || value === null) return value
    if (depth >= MAX_VALUE_DEPTH) return REDACTED
    if (Array.isArray(value)) return value.map((item) => this.#value(item, depth + 1))
    const copy: Record<string, unknown> = {}
    for (const [key, item] of Object.entries(value)) copy[this.redact(key)] = this.#value(item, depth + 1)
    return copy
  }
}
