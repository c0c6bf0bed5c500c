import { createHash, randomBytes, timingSafeEqual } from "node:crypto"
import { BUILTIN_SOURCE, REGISTRANT_TOKEN_PATTERN } from "../wire.ts"

/**
 * Who may change which tools. The owner of a tool is its `source`, and a source is *claimed* by a registrant
 * token (only its SHA-256 is kept):
 *
 * - A registration presenting a token the host does not know claims its source at once with that token, when the
 *   source is not claimed yet (the plugin client does this on its very first registration, with a token of its
 *   own). A source claimed by another token refuses it (409).
 * - A token-less first registration is issued a token (shown once) and leaves the source *unclaimed*: as in the
 *   seed, a request naming it acts for it, until someone presents a token — the issued one or one of their own.
 * - A source whose last tool is gone (unregistered, cleared, evicted) is forgotten with its token, so a plugin
 *   that stopped cleanly can start again with a new token.
 *
 * `builtin` and the ids of in-process plugins are the host's own and are never acted for.
 */

/** Why a request may not act: the status to answer, the line to say, and `source_claimed` for a claimed source. */
export interface ActorRefusal {
  readonly ok: false
  readonly status: 403 | 409 | 422
  readonly error: string
  readonly code?: "source_claimed"
}

/**
 * Who a request acts as, or why it may not. `token`: it presented the token its source is claimed or issued
 * with; `claiming`: a token the host does not know, which claims the source when the registration succeeds.
 */
export type Actor = { readonly ok: true; readonly source: string; readonly token: boolean; readonly claiming?: string } | ActorRefusal

interface SourceRecord {
  tokenHash: Buffer
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

  /** The source a token stands for (undefined for a token this host does not hold). */
  sourceOfToken(token: string): string | undefined {
    const key = hash(token)
    const source = this.#byToken.get(key.toString("hex"))
    if (source === undefined) return undefined
    const record = this.#sources.get(source)
    return record !== undefined && timingSafeEqual(record.tokenHash, key) ? source : undefined
  }

  /**
   * The acting source of a request: the token's source when a known token is presented (a `named` source must then
   * be the same or absent), else the named source unless it is claimed. An unknown token on a `register` of an
   * unclaimed source is a claim; on other requests it counts as no token.
   */
  actor(named: string | undefined, token: string | undefined, fallback: string, registering: boolean): Actor {
    const source = token === undefined ? undefined : this.sourceOfToken(token)
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
      const error =
        token === undefined
          ? `source "${acting}" is claimed; present its registrant token`
          : `source "${acting}" is claimed by a different registrant token (the first registration to present a token claims a source; it is released when the source's last tool is removed)`
      return { ok: false, status: 409, error, code: "source_claimed" }
    }
    if (token !== undefined && registering) {
      if (!REGISTRANT_TOKEN_PATTERN.test(token)) {
        return { ok: false, status: 422, error: "a registrant token must be 32-256 characters of A-Z, a-z, 0-9, _ and - (for example 32 random bytes in base64url)" }
      }
      return { ok: true, source: acting, token: false, claiming: token }
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

  /**
   * Records an accepted registration: a claiming token becomes the source's (replacing a token issued but never
   * presented), a presented token claims its source, and a token-less first registration is issued a token,
   * returned here (undefined otherwise).
   */
  accepted(actor: Extract<Actor, { ok: true }>): string | undefined {
    if (actor.claiming !== undefined) {
      this.#forget(actor.source)
      const tokenHash = hash(actor.claiming)
      this.#sources.set(actor.source, { tokenHash, claimed: true })
      this.#byToken.set(tokenHash.toString("hex"), actor.source)
      return undefined
    }
    this.claim(actor)
    return this.#issue(actor.source)
  }

  /** Marks a source claimed once its token was presented. */
  claim(actor: Extract<Actor, { ok: true }>): void {
    if (!actor.token) return
    const record = this.#sources.get(actor.source)
    if (record !== undefined) record.claimed = true
  }

  /** Forgets a source that holds no tool any more, and its token with it. */
  release(source: string): void {
    this.#forget(source)
  }

  #forget(source: string): void {
    const record = this.#sources.get(source)
    if (record === undefined) return
    this.#byToken.delete(record.tokenHash.toString("hex"))
    this.#sources.delete(source)
  }

  /** Issues the token of a source's first registration; undefined when it has one already. */
  #issue(source: string): string | undefined {
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
