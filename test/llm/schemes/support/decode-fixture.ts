import { readFileSync } from "node:fs"
import type { Event } from "../../../../src/llm/event.ts"
import type { Request } from "../../../../src/llm/request.ts"
import type { Scheme } from "../../../../src/llm/scheme.ts"
import { parseSseText } from "../../../../src/llm/sse.ts"
import { type AssistantResponse, ResponseCollector } from "../../../../src/timeline/assistant-response.ts"
import { Timeline } from "../../../../src/timeline/timeline.ts"

/** One of the project's own SSE fixtures (test/fixtures/sse/<format>/<name>.sse). */
export const sseFixture = (format: string, name: string): string =>
  readFileSync(new URL(`../../../fixtures/sse/${format}/${name}.sse`, import.meta.url), "utf8")

/** Every neutral event the scheme's decoder produces for the fixture, `end()` included. */
export const decodeFixture = (scheme: Scheme, name: string, request?: Request): Array<Event> => {
  const decoder = scheme.decoder(request)
  return [...parseSseText(sseFixture(scheme.name, name)).flatMap((message) => decoder.push(message)), ...decoder.end()]
}

/** The assistant response the timeline assembles from those events. */
export const collectFixture = (scheme: Scheme, name: string, request?: Request): AssistantResponse => {
  const timeline = new Timeline()
  const collector = new ResponseCollector(timeline)
  for (const event of decodeFixture(scheme, name, request)) timeline.dispatch(event)
  timeline.finish()
  return collector.result()
}
