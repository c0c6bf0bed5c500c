import type { FunctionCallItem } from "../llm/item.ts"
import type { BlockPosition } from "./block-scope.ts"
import { insertByOrdinal } from "./ordered.ts"
import type { Timeline } from "./timeline.ts"

export interface ToolCallBlock extends BlockPosition {
  readonly call: FunctionCallItem
}

/** A tool block that never stopped: it yields no call (running half-streamed arguments would be a guess). */
export interface AbortedToolCall extends BlockPosition {
  readonly callId: string
  readonly name: string
  readonly reason: string
  readonly partialArguments: string
}

/**
 * Collects complete function calls from stopped tool_use blocks, in model order (block start order), however
 * the blocks' fragments interleave.
 */
export class ToolCallCollector {
  readonly #blocks: ToolCallBlock[] = []
  readonly #aborted: AbortedToolCall[] = []

  constructor(timeline: Timeline) {
    timeline.onBlock("tool_use", (meta, at) => {
      const chunks: string[] = []
      return {
        onDelta: (delta) => {
          chunks.push(delta.json)
        },
        onStop: (stop) => {
          const joined = stop.final ?? chunks.join("")
          // Providers stream nothing at all for a call without arguments (Anthropic's empty input); that means
          // an empty object, not malformed JSON. Any other text stays exactly as the model wrote it.
          const args = joined.trim() === "" ? "{}" : joined
          const call: FunctionCallItem =
            meta.thoughtSignature === undefined
              ? { type: "function_call", callId: meta.id, name: meta.name, arguments: args }
              : {
                  type: "function_call",
                  callId: meta.id,
                  name: meta.name,
                  arguments: args,
                  thoughtSignature: meta.thoughtSignature
                }
          insertByOrdinal(this.#blocks, { index: at.index, ordinal: at.ordinal, call })
        },
        onAbort: (reason) =>
          insertByOrdinal(this.#aborted, {
            index: at.index,
            ordinal: at.ordinal,
            callId: meta.id,
            name: meta.name,
            reason,
            partialArguments: chunks.join("")
          })
      }
    })
  }

  get blocks(): ReadonlyArray<ToolCallBlock> {
    return this.#blocks
  }

  get calls(): ReadonlyArray<FunctionCallItem> {
    return this.#blocks.map((block) => block.call)
  }

  get aborted(): ReadonlyArray<AbortedToolCall> {
    return this.#aborted
  }
}
