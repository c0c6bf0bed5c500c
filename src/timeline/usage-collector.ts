import type { RawUsage, Usage } from "../llm/event.ts"
import { USAGE_FIELDS } from "../llm/usage.ts"
import type { Timeline } from "./timeline.ts"

type MutableUsage = { -readonly [F in keyof Usage]: Usage[F] }

/**
 * Merges the usage events of one response. Providers report usage piecemeal (Anthropic: input and cache counts
 * at message start, output at the end), so each field keeps its latest defined value; a later event that omits
 * a field does not erase it. The raw usage is the latest event's (each scheme's event carries the whole object).
 */
export class UsageCollector {
  readonly #usage: MutableUsage = {}
  #raw: RawUsage | undefined

  constructor(timeline: Timeline) {
    timeline.onMeta("usage", (event) => {
      for (const field of USAGE_FIELDS) {
        const value = event[field]
        if (value !== undefined) this.#usage[field] = value
      }
      if (event.raw !== undefined) this.#raw = event.raw
    })
  }

  /** The merged usage, its fields always in the same order whatever order the events came in. */
  get usage(): Usage {
    const usage: MutableUsage = {}
    for (const field of USAGE_FIELDS) {
      const value = this.#usage[field]
      if (value !== undefined) usage[field] = value
    }
    return usage
  }

  /** The provider's own usage object of this response, when its scheme passed one on. */
  get raw(): RawUsage | undefined {
    return this.#raw
  }
}
