import fc from "fast-check"
import { describe, expect, it } from "vitest"
import type { Event } from "../../src/llm/event.ts"
import { ResponseCollector } from "../../src/timeline/assistant-response.ts"
import { describeIssue } from "../../src/timeline/protocol-issue.ts"
import type { ProtocolIssue } from "../../src/timeline/protocol-issue.ts"
import { Timeline } from "../../src/timeline/timeline.ts"

/** `block_stop.final`: the provider's closing value is the authority over the block's deltas, for every kind. */

const run = (events: ReadonlyArray<Event>) => {
  const timeline = new Timeline()
  const collector = new ResponseCollector(timeline)
  const heard: Array<ProtocolIssue> = []
  timeline.onIssue((issue) => heard.push(issue))
  for (const event of events) timeline.dispatch(event)
  timeline.finish()
  return { response: collector.result(), heard }
}

const block = (index: number, kind: "text" | "thinking" | "tool_use", deltas: ReadonlyArray<string>, final?: string): Array<Event> => [
  { type: "block_start", index, block: kind === "tool_use" ? { kind, id: `c${index}`, name: "f" } : { kind } },
  ...deltas.map(
    (piece): Event => ({
      type: "block_delta",
      index,
      delta: kind === "tool_use" ? { kind: "input_json", json: piece } : { kind, text: piece }
    })
  ),
  { type: "block_stop", index, ...(final === undefined ? {} : { final }) }
]

describe("block_stop.final", () => {
  it("agreeing with the deltas: nothing to report, the value is the same", () => {
    const { response } = run([...block(0, "text", ["Hel", "lo"], "Hello")])
    expect(response.issues).toEqual([])
    expect(response.items).toEqual([{ type: "message", role: "assistant", content: [{ type: "output_text", text: "Hello" }] }])
  })

  it("disagreeing: each collector keeps the final value and the timeline reports final_mismatch", () => {
    const { response, heard } = run([
      ...block(0, "thinking", ["Plan A"], "Plan B."),
      ...block(1, "text", ["Helo"], "Hello"),
      ...block(2, "tool_use", ['{"a":'], '{"a":1}')
    ])
    expect(response.items).toEqual([
      { type: "reasoning", text: "Plan B." },
      { type: "message", role: "assistant", content: [{ type: "output_text", text: "Hello" }] },
      { type: "function_call", callId: "c2", name: "f", arguments: '{"a":1}' }
    ])
    const issues: Array<ProtocolIssue> = [
      { kind: "final_mismatch", index: 0, block: "thinking", streamedLength: 6, finalLength: 7 },
      { kind: "final_mismatch", index: 1, block: "text", streamedLength: 4, finalLength: 5 },
      { kind: "final_mismatch", index: 2, block: "tool_use", streamedLength: 5, finalLength: 7 }
    ]
    expect(response.issues).toEqual(issues)
    expect(heard).toEqual(issues)
    expect(describeIssue(issues[1]!)).toBe(
      "text block 1: the deltas (4 characters) disagree with the final value (5 characters); the final value was kept"
    )
  })

  it("a final value with no deltas at all is a disagreement too (decoders send the missing part as a delta first)", () => {
    const { response } = run(block(0, "text", [], "Hi"))
    expect(response.issues).toEqual([{ kind: "final_mismatch", index: 0, block: "text", streamedLength: 0, finalLength: 2 }])
    expect(response.items).toEqual([{ type: "message", role: "assistant", content: [{ type: "output_text", text: "Hi" }] }])
  })

  it("an aborted block ignores nothing and keeps nothing: no final value is involved", () => {
    const { response } = run([
      { type: "block_start", index: 0, block: { kind: "text" } },
      { type: "block_delta", index: 0, delta: { kind: "text", text: "par" } },
      { type: "block_abort", index: 0, reason: "gone" }
    ])
    expect(response.items).toEqual([])
    expect(response.issues).toEqual([])
  })

  it("property: whatever the deltas, the committed value is the final one, and an issue exactly when they differ", () => {
    fc.assert(
      fc.property(fc.array(fc.string(), { maxLength: 6 }), fc.string({ minLength: 1 }), (deltas, final) => {
        const { response } = run(block(0, "text", deltas, final))
        expect(response.items).toEqual([{ type: "message", role: "assistant", content: [{ type: "output_text", text: final }] }])
        expect(response.issues.length).toBe(deltas.join("") === final ? 0 : 1)
      })
    )
  })
})
