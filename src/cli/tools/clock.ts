import { Schema } from "effect"
import { defineTool } from "../../tool/define-tool.ts"
import { InvalidArgument } from "../../tool/tool-error.ts"

export interface ClockReading {
  readonly timeZone: string
  /** The instant in UTC, ISO 8601. */
  readonly utc: string
  /** Wall-clock time in `timeZone`, e.g. "Saturday, 3 January 2026 at 14:05:09 GMT+9". */
  readonly local: string
}

/**
 * The zone's canonical name, or an `InvalidArgument` the model can act on. Offsets such as "+05:00" are refused
 * even where the runtime's Intl accepts them, because the tool's schema promises IANA names.
 */
export const checkTimeZone = (zone: string): string => {
  if (!/^[A-Za-z][A-Za-z0-9_+\-/]*$/.test(zone)) {
    throw new InvalidArgument({ message: `timeZone ${JSON.stringify(zone)} is not an IANA time zone name (like "Europe/Paris" or "UTC")` })
  }
  try {
    return new Intl.DateTimeFormat("en-GB", { timeZone: zone }).resolvedOptions().timeZone
  } catch {
    throw new InvalidArgument({ message: `unknown time zone ${JSON.stringify(zone)}; use an IANA name like "Europe/Paris" or "UTC"` })
  }
}

/** Reads `now` in `timeZone` (default: the machine's zone). */
export const readClock = (now: Date, timeZone?: string): ClockReading => {
  const zone = timeZone === undefined ? Intl.DateTimeFormat().resolvedOptions().timeZone : checkTimeZone(timeZone)
  const local = new Intl.DateTimeFormat("en-GB", { dateStyle: "full", timeStyle: "long", timeZone: zone }).format(now)
  return { timeZone: zone, utc: now.toISOString(), local }
}

/** Effect Schema here, zod in the other demo tools: both routes reach the same provider JSON Schema. */
const ClockArguments = Schema.Struct({
  timeZone: Schema.optional(Schema.String).annotate({ description: 'IANA time zone, e.g. "Asia/Tokyo"; omit for the local zone' })
})

export const clockTool = defineTool({
  name: "clock",
  description: "The current date and time, in an IANA time zone or the machine's own.",
  parameters: ClockArguments,
  execute: ({ timeZone }) => readClock(new Date(), timeZone)
})
