import type { ToolNameMap } from "../../schema/provider-tools.ts"
import type { Event } from "../event.ts"
import type { StreamDecoder } from "../scheme.ts"

const rename = (events: ReadonlyArray<Event>, names: ToolNameMap): ReadonlyArray<Event> => {
  let out: Array<Event> | undefined
  for (let i = 0; i < events.length; i++) {
    const event = events[i] as Event
    if (event.type === "block_start" && event.block.kind === "tool_use") {
      const neutral = names.fromWire(event.block.name)
      if (neutral !== event.block.name) {
        out ??= events.slice()
        out[i] = { ...event, block: { ...event.block, name: neutral } }
      }
    }
  }
  return out ?? events
}

/**
 * Wraps a decoder so tool-use blocks carry neutral tool names (`files.read`), not the provider's spelling
 * (`files_read`). Without the request's tool set there is nothing to map back through, and names pass as they are.
 */
export const withNeutralToolNames = (decoder: StreamDecoder, names: ToolNameMap | undefined): StreamDecoder =>
  names === undefined
    ? decoder
    : {
        push: (message) => rename(decoder.push(message), names),
        end: () => rename(decoder.end(), names),
        ...(decoder.isComplete === undefined ? {} : { isComplete: () => decoder.isComplete?.() === true })
      }
