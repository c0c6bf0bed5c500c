import fc from "fast-check"
import { describe, expect, it } from "vitest"
import type { Event } from "../../src/llm/event.ts"
import { ResponseCollector } from "../../src/timeline/assistant-response.ts"
import { Timeline } from "../../src/timeline/timeline.ts"

/** One block of a generated response: its events in their own order, and how it ends. */
interface GenBlock {
  readonly index: number
  readonly kind: "text" | "thinking" | "tool_use"
  readonly pieces: ReadonlyArray<string>
  readonly end: "stop" | "abort" | "unclosed"
}

const blockEvents = (block: GenBlock): Event[] => {
  const { index } = block
  const start: Event =
    block.kind === "tool_use"
      ? { type: "block_start", index, block: { kind: "tool_use", id: `call_${index}`, name: `tool_${index}` } }
      : { type: "block_start", index, block: { kind: block.kind } }
  const deltas = block.pieces.map((piece): Event => {
    if (block.kind === "tool_use") return { type: "block_delta", index, delta: { kind: "input_json", json: piece } }
    return { type: "block_delta", index, delta: { kind: block.kind, text: piece } }
  })
  const end: Event[] =
    block.end === "stop"
      ? [
          block.kind === "thinking"
            ? { type: "block_stop", index, reasoning: { provider: "anthropic", signature: `sig_${index}` } }
            : { type: "block_stop", index }
        ]
      : block.end === "abort"
        ? [{ type: "block_abort", index, reason: `aborted ${index}` }]
        : []
  return [start, ...deltas, ...end]
}

const genBlocks = fc
  .uniqueArray(fc.nat({ max: 50 }), { minLength: 1, maxLength: 6 })
  .chain((indices) =>
    fc.tuple(
      ...indices.map((index) =>
        fc.record({
          index: fc.constant(index),
          kind: fc.constantFrom("text" as const, "thinking" as const, "tool_use" as const),
          pieces: fc.array(fc.string({ maxLength: 6 }), { maxLength: 6 }),
          end: fc.constantFrom("stop" as const, "stop" as const, "abort" as const, "unclosed" as const)
        })
      )
    )
  )

/** Blocks plus one interleaving of their events that keeps each block's own order. */
const genInterleaving = genBlocks.chain((blocks) => {
  const perBlock = blocks.map(blockEvents)
  const slots = perBlock.flatMap((events, b) => events.map(() => b))
  return fc
    .shuffledSubarray(slots, { minLength: slots.length, maxLength: slots.length })
    .map((order) => {
      const next = perBlock.map(() => 0)
      const stream = order.map((b) => perBlock[b]![next[b]!++]!)
      return { blocks, perBlock, stream }
    })
})

const run = (events: ReadonlyArray<Event>) => {
  const timeline = new Timeline()
  const response = new ResponseCollector(timeline)
  for (const event of events) timeline.dispatch(event)
  timeline.finish()
  return { response, result: response.result() }
}

describe("any interleaving of blocks", () => {
  it("gives every block the same result as feeding the blocks one after another in start order", () => {
    fc.assert(
      fc.property(genInterleaving, ({ perBlock, stream }) => {
        const startOrder = stream.flatMap((e) => (e.type === "block_start" ? [e.index] : []))
        const byIndex = new Map(perBlock.map((events) => [events[0]!.type === "block_start" ? events[0]!.index : -1, events]))
        const sequential = startOrder.flatMap((index) => byIndex.get(index)!)

        const a = run(stream)
        const b = run(sequential)
        expect(a.result.items).toEqual(b.result.items)
        expect(a.response.text.blocks).toEqual(b.response.text.blocks)
        expect(a.response.reasoning.blocks).toEqual(b.response.reasoning.blocks)
        expect(a.response.toolCalls.blocks).toEqual(b.response.toolCalls.blocks)
        expect(a.response.toolCalls.aborted).toEqual(b.response.toolCalls.aborted)
        expect(a.response.text.aborted).toEqual(b.response.text.aborted)
        expect(a.result.issues).toEqual(b.result.issues)
      })
    )
  })

  it("matches an independent model of what each block should yield", () => {
    fc.assert(
      fc.property(genInterleaving, ({ blocks, stream }) => {
        const { response } = run(stream)
        const startOrder = stream.flatMap((e) => (e.type === "block_start" ? [e.index] : []))
        const inStartOrder = [...blocks].sort((x, y) => startOrder.indexOf(x.index) - startOrder.indexOf(y.index))
        const stopped = (kind: GenBlock["kind"]) => inStartOrder.filter((b) => b.kind === kind && b.end === "stop")

        expect(response.text.blocks.map((b) => [b.index, b.text])).toEqual(
          stopped("text").map((b) => [b.index, b.pieces.join("")])
        )
        expect(response.reasoning.items).toEqual(
          stopped("thinking").map((b) => ({
            type: "reasoning",
            text: b.pieces.join(""),
            data: { provider: "anthropic", signature: `sig_${b.index}` }
          }))
        )
        expect(response.toolCalls.calls).toEqual(
          stopped("tool_use").map((b) => ({
            type: "function_call",
            callId: `call_${b.index}`,
            name: `tool_${b.index}`,
            arguments: b.pieces.join("").trim() === "" ? "{}" : b.pieces.join("")
          }))
        )
        expect(response.toolCalls.aborted.map((c) => c.callId)).toEqual(
          inStartOrder.filter((b) => b.kind === "tool_use" && b.end !== "stop").map((b) => `call_${b.index}`)
        )
        const unclosed = inStartOrder.filter((b) => b.end === "unclosed").map((b) => b.index)
        expect(response.result().issues).toEqual(
          unclosed.map((index) => ({ kind: "unclosed_block", index, block: blocks.find((b) => b.index === index)!.kind }))
        )
      })
    )
  })
})
