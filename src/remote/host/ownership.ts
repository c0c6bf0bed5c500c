import { createHash, randomBytes, timingSafeEqual } from "node:crypto"
import { BUILTIN_SOURCE } from "../wire.ts"

/**
 * Who may change which tools. The owner of a tool is its `source`. The first registration of a source is issued
 * a registrant token (shown once; only its hash is kept). Until the token is presented the source is *unclaimed*
 * and behaves as in the seed: a request naming the source acts for it. Presenting the token claims the source:
 * from then on only requests carrying the token act for it. `builtin` is the host's own and is never acted for.
 */

/** Who a request acts as, or why it may not. */
export type Actor =
  | { readonly ok: true; readonly source: string; readonly token: boolean }
  | { readonly ok: false; readonly status: 403 | 409; readonly error: string }

interface SourceRecord {
  readonly tokenHash: Buffer
  claimed: boolean
}

const hash = (token: string): Buffer => createHash("sha256").update(token, "utf8").digest()

export class Ownership {
  readonly #sources = new Map<string, SourceRecord>()
  readonly #byToken = new Map<string, string>()
  /** Sources of the host's in-process plugins: like `builtin`, never acted for over HTTP. */
  readonly #reserved = new Set<string>()

  constructor(private readonly maxSources: number) {}

  /** Reserves an in-process plugin's id: no HTTP request may act for it, nor change its tools. */
  reserve(source: string): void {
    this.#reserved.add(source)
  }

  reserved(source: string): boolean {
    return source === BUILTIN_SOURCE || this.#reserved.has(source)
  }

  /** The source a token was issued to (undefined for a token this host never issued). */
  sourceOfToken(token: string): string | undefined {
    return this.#sourceOfToken(token)
  }

  /** The source a token belongs to, compared in constant time over hashes. */
  #sourceOfToken(token: string): string | undefined {
    const key = hash(token)
    const source = this.#byToken.get(key.toString("hex"))
    if (source === undefined) return undefined
    const record = this.#sources.get(source)
    return record !== undefined && timingSafeEqual(record.tokenHash, key) ? source : undefined
  }

  /**
   * The acting source of a request: the token's source when a token is presented (a `named` source must then be
   * the same or absent), else the named source unless it is claimed.
   */
  actor(named: string | undefined, token: string | undefined, fallback: string): Actor {
    // A token this host never issued (typically one from before a restart) counts as no token: it can only ever
    // do what a token-less request may, so a plugin re-registering after a restart is not refused for it.
    const source = token === undefined ? undefined : this.#sourceOfToken(token)
    if (source !== undefined) {
      if (named !== undefined && named !== source) {
        return { ok: false, status: 409, error: `registrant token belongs to source "${source}", not "${named}"` }
      }
      return { ok: true, source, token: true }
    }
    const acting = named ?? fallback
    if (acting === BUILTIN_SOURCE) return { ok: false, status: 403, error: `source "${BUILTIN_SOURCE}" is reserved for the host's own tools` }
    if (this.#reserved.has(acting)) return { ok: false, status: 403, error: `source "${acting}" is an in-process plugin of the host and cannot be acted for over HTTP` }
    if (this.#sources.get(acting)?.claimed === true) {
      return { ok: false, status: 409, error: `source "${acting}" is claimed; present its registrant token` }
    }
    return { ok: true, source: acting, token: false }
  }

  /** Whether an actor may change a tool owned by `owner` (a tool without token protection is open to its own source). */
  mayChange(actor: Extract<Actor, { ok: true }>, owner: string, requireSameSource: boolean): { readonly ok: true } | { readonly ok: false; readonly status: 409; readonly error: string } {
    if (owner === BUILTIN_SOURCE) return { ok: false, status: 409, error: `tool belongs to source "${BUILTIN_SOURCE}" and cannot be changed over HTTP` }
    if (this.#reserved.has(owner)) return { ok: false, status: 409, error: `tool belongs to the in-process plugin "${owner}" and cannot be changed over HTTP` }
    if (owner === actor.source) return { ok: true }
    if (!requireSameSource && !actor.token && this.#sources.get(owner)?.claimed !== true) return { ok: true }
    return { ok: false, status: 409, error: `belongs to source "${owner}"; present its registrant token` }
  }

  /** Marks a source claimed once its token was presented. */
  claim(actor: Extract<Actor, { ok: true }>): void {
    if (!actor.token) return
    const record = this.#sources.get(actor.source)
    if (record !== undefined) record.claimed = true
  }

  /** Issues the token of a source's first registration; undefined when it has one already. */
  issue(source: string): string | undefined {
    if (this.#sources.has(source)) return undefined
    const token = randomBytes(24).toString("base64url")
    const tokenHash = hash(token)
    this.#sources.set(source, { tokenHash, claimed: false })
    this.#byToken.set(tokenHash.toString("hex"), source)
    return token
  }

  /** Whether one more source would pass the limit. */
  full(source: string): boolean {
    return !this.#sources.has(source) && this.#sources.size >= this.maxSources
  }

  claimed(source: string): boolean {
    return this.#sources.get(source)?.claimed === true
  }
}
