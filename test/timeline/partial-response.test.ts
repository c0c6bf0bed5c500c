import { describe, expect, it } from "vitest"
import { ResponseCollector } from "../../src/timeline/assistant-response.ts"
import { Timeline, TimelineMisuse } from "../../src/timeline/timeline.ts"

describe("ResponseCollector.partial", () => {
  it("joins stopped and cut-off blocks in model order, with the usage and raw usage so far", () => {
    const timeline = new Timeline()
    const collector = new ResponseCollector(timeline)
    timeline.dispatch({ type: "block_start", index: 0, block: { kind: "thinking" } })
    timeline.dispatch({ type: "block_delta", index: 0, delta: { kind: "thinking", text: "first " } })
    timeline.dispatch({ type: "block_stop", index: 0 })
    timeline.dispatch({ type: "block_start", index: 1, block: { kind: "text" } })
    timeline.dispatch({ type: "block_delta", index: 1, delta: { kind: "text", text: "Done: " } })
    timeline.dispatch({ type: "block_stop", index: 1 })
    timeline.dispatch({ type: "block_start", index: 2, block: { kind: "thinking" } })
    timeline.dispatch({ type: "block_delta", index: 2, delta: { kind: "thinking", text: "then more" } })
    timeline.dispatch({ type: "block_start", index: 3, block: { kind: "text" } })
    timeline.dispatch({ type: "block_delta", index: 3, delta: { kind: "text", text: "half a sen" } })
    timeline.dispatch({ type: "usage", inputTokens: 3, raw: { n: 1 } })
    expect(() => collector.partial()).toThrow(TimelineMisuse)
    timeline.abort("Cancelled")

    expect(collector.partial()).toEqual({
      text: "Done: half a sen",
      reasoning: "first then more",
      usage: { inputTokens: 3 },
      rawUsage: { n: 1 }
    })
    // The committed response is unchanged: cut-off blocks never enter it.
    expect(collector.result().items).toEqual([
      { type: "reasoning", text: "first " },
      { type: "message", role: "assistant", content: [{ type: "output_text", text: "Done: " }] }
    ])
    expect(collector.reasoning.aborted.map((block) => block.partialText)).toEqual(["then more"])
  })

  it("is the whole response once it completed", () => {
    const timeline = new Timeline()
    const collector = new ResponseCollector(timeline)
    timeline.dispatch({ type: "block_start", index: 0, block: { kind: "text" } })
    timeline.dispatch({ type: "block_delta", index: 0, delta: { kind: "text", text: "all" } })
    timeline.dispatch({ type: "block_stop", index: 0 })
    timeline.finish()
    expect(collector.partial()).toEqual({ text: "all", reasoning: "", usage: {} })
    expect(collector.result().rawUsage).toBeUndefined()
  })
})
