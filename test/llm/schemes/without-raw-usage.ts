import type { Event } from "../../../src/llm/event.ts"

/**
 * The events with the provider's raw usage object left off: decoder tests compare the neutral stream, and the raw
 * object (a bounded copy of the fixture's usage) is covered on its own in test/llm/usage-formats.test.ts.
 */
export const withoutRawUsage = (events: ReadonlyArray<Event>): Array<Event> =>
  events.map((event) => {
    if (event.type !== "usage") return event
    const { raw: _, ...neutral } = event
    return neutral
  })
