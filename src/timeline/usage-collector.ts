import type { Usage } from "../llm/event.ts"
import type { Timeline } from "./timeline.ts"

const FIELDS = ["inputTokens", "outputTokens", "totalTokens", "cacheReadTokens", "cacheWriteTokens"] as const

type MutableUsage = { -readonly [F in keyof Usage]: Usage[F] }

/**
 * Merges the usage events of one response. Providers report usage piecemeal (Anthropic: input and cache counts
 * at message start, output at the end), so each field keeps its latest defined value; a later event that omits
 * a field does not erase it.
 */
export class UsageCollector {
  readonly #usage: MutableUsage = {}

  constructor(timeline: Timeline) {
    timeline.onMeta("usage", (event) => {
      for (const field of FIELDS) {
        const value = event[field]
        if (value !== undefined) this.#usage[field] = value
      }
    })
  }

  /** The merged usage, its fields always in the same order whatever order the events came in. */
  get usage(): Usage {
    const usage: MutableUsage = {}
    for (const field of FIELDS) {
      const value = this.#usage[field]
      if (value !== undefined) usage[field] = value
    }
    return usage
  }
}
