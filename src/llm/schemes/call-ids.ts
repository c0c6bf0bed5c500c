/**
 * The call ids of one response, made distinct. The neutral history pairs every call with exactly one result by
 * id, so a response must never carry two calls under one id: a server that repeats an id (or sends none) would
 * otherwise have its calls merged, run with each other's arguments, or answered twice.
 *
 * - A missing or empty id gets a generated one (`generate()`; the scheme decides the form, see decision 0010).
 * - A repeated id keeps its first call as it is; each later call gets `<id>_2`, `<id>_3`… (the lowest suffix
 *   not yet used in the response), or — for formats that must never be sent an id their server did not issue
 *   (Gemini) — the same id behind the format's generated-id prefix, suffixed likewise, so it is recognised as
 *   made up and never sent back. Deterministic: the same stream always gives the same ids (missing ids come from
 *   `generate()`, which decides its own form).
 */
export class ResponseCallIds {
  private readonly used = new Set<string>()
  /** The next suffix to try per repeated id, so a thousand repeats cost a thousand steps, not a million. */
  private readonly nextSuffix = new Map<string, number>()

  constructor(
    private readonly generate: () => string,
    /** `suffix`: `<id>_2`…; `{ prefix }`: `<prefix><id>`, then `<prefix><id>_2`… */
    private readonly onRepeat: "suffix" | { readonly prefix: string } = "suffix"
  ) {}

  /** The id this response's next call goes by, given the id it arrived with. */
  take(wireId: string | undefined): string {
    if (wireId === undefined || wireId === "") return this.claim(this.generate())
    if (!this.used.has(wireId)) return this.claim(wireId)
    return this.onRepeat === "suffix" ? this.claim(wireId) : this.claim(`${this.onRepeat.prefix}${wireId}`)
  }

  private claim(id: string): string {
    if (!this.used.has(id)) {
      this.used.add(id)
      return id
    }
    for (let n = this.nextSuffix.get(id) ?? 2; ; n++) {
      const candidate = `${id}_${n}`
      if (!this.used.has(candidate)) {
        this.nextSuffix.set(id, n + 1)
        this.used.add(candidate)
        return candidate
      }
    }
  }
}
