import { describe, expect, expectTypeOf, it } from "vitest"
import type { BlockDelta, Event } from "../../src/llm/event.ts"
import type { BlockDeltaOf, BlockScope } from "../../src/timeline/block-scope.ts"
import { describeIssue, type ProtocolIssue } from "../../src/timeline/protocol-issue.ts"
import { Timeline, TimelineMisuse, UNCLOSED_BLOCK_REASON } from "../../src/timeline/timeline.ts"

type Log = Array<string>

/** A handler that writes everything its scopes see into `log`, prefixed with the block's index and ordinal. */
const record = (timeline: Timeline, log: Log): void => {
  for (const kind of ["text", "thinking", "tool_use"] as const) {
    timeline.onBlock(kind, (meta, at) => {
      const tag = `${at.index}#${at.ordinal}`
      log.push(`${tag} start ${meta.kind}`)
      const scope: BlockScope<typeof kind> = {
        onDelta: (delta) => log.push(`${tag} delta ${JSON.stringify(delta)}`),
        onStop: (stop) => log.push(`${tag} stop ${stop.stopReason ?? "-"}`),
        onAbort: (reason) => log.push(`${tag} abort ${reason}`)
      }
      return scope
    })
  }
}

const text = (index: number, t: string): Event => ({ type: "block_delta", index, delta: { kind: "text", text: t } })
const json = (index: number, j: string): Event => ({ type: "block_delta", index, delta: { kind: "input_json", json: j } })

describe("Timeline", () => {
  it("sends meta events to their listeners at once, narrowed by type", () => {
    const timeline = new Timeline()
    const seen: string[] = []
    timeline.onMeta("usage", (e) => seen.push(`usage ${e.inputTokens}`))
    timeline.onMeta("status", (e) => seen.push(`status ${e.status}`))
    timeline.onMeta("error", (e) => seen.push(`error ${e.code}:${e.message}`))
    timeline.onMeta("ping", (e) => seen.push(e.type))
    timeline.dispatch({ type: "status", status: "started" })
    expect(seen).toEqual(["status started"])
    timeline.dispatch({ type: "ping" })
    timeline.dispatch({ type: "usage", inputTokens: 12 })
    timeline.dispatch({ type: "error", code: "overloaded_error", message: "Overloaded" })
    expect(seen).toEqual(["status started", "ping", "usage 12", "error overloaded_error:Overloaded"])
  })

  it("gives every block a fresh scope per handler and closes it exactly once", () => {
    const timeline = new Timeline()
    const log: Log = []
    record(timeline, log)
    const starts: number[] = []
    timeline.onBlock("text", (_meta, at) => {
      starts.push(at.index)
      return {}
    })
    timeline.dispatch({ type: "block_start", index: 0, block: { kind: "text" } })
    timeline.dispatch(text(0, "Hel"))
    timeline.dispatch(text(0, "lo"))
    timeline.dispatch({ type: "block_stop", index: 0 })
    timeline.dispatch({ type: "block_start", index: 1, block: { kind: "text" } })
    timeline.dispatch({ type: "block_stop", index: 1, stopReason: "end_turn" })
    timeline.finish()
    expect(log).toEqual([
      "0#0 start text",
      '0#0 delta {"kind":"text","text":"Hel"}',
      '0#0 delta {"kind":"text","text":"lo"}',
      "0#0 stop -",
      "1#1 start text",
      "1#1 stop end_turn"
    ])
    expect(starts).toEqual([0, 1])
    expect(timeline.issues).toEqual([])
    expect(timeline.state).toBe("finished")
  })

  it("keeps parallel tool blocks apart by index while their deltas interleave", () => {
    const timeline = new Timeline()
    const log: Log = []
    record(timeline, log)
    timeline.dispatch({ type: "block_start", index: 1, block: { kind: "tool_use", id: "call_a", name: "get_weather" } })
    timeline.dispatch({ type: "block_start", index: 2, block: { kind: "tool_use", id: "call_b", name: "get_time" } })
    timeline.dispatch(json(2, '{"tz"'))
    timeline.dispatch(json(1, '{"city"'))
    timeline.dispatch({ type: "block_stop", index: 2 })
    timeline.dispatch({ type: "block_stop", index: 1, stopReason: "tool_use" })
    expect(log.filter((l) => l.startsWith("1#0"))).toEqual([
      "1#0 start tool_use",
      '1#0 delta {"kind":"input_json","json":"{\\"city\\""}',
      "1#0 stop tool_use"
    ])
    expect(log.filter((l) => l.startsWith("2#1"))).toEqual([
      "2#1 start tool_use",
      '2#1 delta {"kind":"input_json","json":"{\\"tz\\""}',
      "2#1 stop -"
    ])
  })

  it("reports deltas, stops and aborts for unknown indices instead of throwing", () => {
    const timeline = new Timeline()
    const log: Log = []
    record(timeline, log)
    const heard: ProtocolIssue[] = []
    timeline.onIssue((issue) => heard.push(issue))
    timeline.dispatch(text(7, "orphan"))
    timeline.dispatch({ type: "block_stop", index: 8 })
    timeline.dispatch({ type: "block_abort", index: 9, reason: "x" })
    timeline.dispatch({ type: "block_start", index: 0, block: { kind: "text" } })
    timeline.dispatch({ type: "block_stop", index: 0 })
    timeline.dispatch({ type: "block_stop", index: 0 })
    const expected: ProtocolIssue[] = [
      { kind: "unknown_block", index: 7, event: "block_delta" },
      { kind: "unknown_block", index: 8, event: "block_stop" },
      { kind: "unknown_block", index: 9, event: "block_abort" },
      { kind: "unknown_block", index: 0, event: "block_stop" }
    ]
    expect(timeline.issues).toEqual(expected)
    expect(heard).toEqual(expected)
    expect(log).toEqual(["0#0 start text", "0#0 stop -"])
  })

  it("drops a delta of the wrong kind for its block and reports it", () => {
    const timeline = new Timeline()
    const log: Log = []
    record(timeline, log)
    timeline.dispatch({ type: "block_start", index: 0, block: { kind: "text" } })
    timeline.dispatch(json(0, "{}"))
    timeline.dispatch({ type: "block_delta", index: 0, delta: { kind: "thinking", text: "hmm" } })
    timeline.dispatch(text(0, "ok"))
    expect(timeline.issues).toEqual([
      { kind: "delta_mismatch", index: 0, block: "text", delta: "input_json" },
      { kind: "delta_mismatch", index: 0, block: "text", delta: "thinking" }
    ])
    expect(log).toEqual(["0#0 start text", '0#0 delta {"kind":"text","text":"ok"}'])
  })

  it("aborts the open block when its index starts again", () => {
    const timeline = new Timeline()
    const log: Log = []
    record(timeline, log)
    timeline.dispatch({ type: "block_start", index: 0, block: { kind: "text" } })
    timeline.dispatch(text(0, "a"))
    timeline.dispatch({ type: "block_start", index: 0, block: { kind: "tool_use", id: "c", name: "n" } })
    timeline.dispatch(json(0, "{}"))
    timeline.dispatch({ type: "block_stop", index: 0 })
    expect(log).toEqual([
      "0#0 start text",
      '0#0 delta {"kind":"text","text":"a"}',
      "0#0 abort block 0 started again while open",
      "0#1 start tool_use",
      '0#1 delta {"kind":"input_json","json":"{}"}',
      "0#1 stop -"
    ])
    expect(timeline.issues).toEqual([{ kind: "duplicate_start", index: 0, open: "text", next: "tool_use" }])
  })

  it("passes a provider's block_abort to the scopes", () => {
    const timeline = new Timeline()
    const log: Log = []
    record(timeline, log)
    timeline.dispatch({ type: "block_start", index: 3, block: { kind: "thinking" } })
    timeline.dispatch({ type: "block_abort", index: 3, reason: "content filtered" })
    expect(log).toEqual(["3#0 start thinking", "3#0 abort content filtered"])
    expect(timeline.openBlocks).toEqual([])
    expect(timeline.issues).toEqual([])
  })

  it("finish() aborts every open block in start order and reports each as unclosed", () => {
    const timeline = new Timeline()
    const log: Log = []
    record(timeline, log)
    timeline.dispatch({ type: "block_start", index: 5, block: { kind: "text" } })
    timeline.dispatch({ type: "block_start", index: 2, block: { kind: "tool_use", id: "c", name: "n" } })
    expect(timeline.openBlocks).toEqual([5, 2])
    timeline.finish()
    expect(log.slice(2)).toEqual([`5#0 abort ${UNCLOSED_BLOCK_REASON}`, `2#1 abort ${UNCLOSED_BLOCK_REASON}`])
    expect(timeline.issues).toEqual([
      { kind: "unclosed_block", index: 5, block: "text" },
      { kind: "unclosed_block", index: 2, block: "tool_use" }
    ])
    expect(timeline.openBlocks).toEqual([])
  })

  it("abort(reason) closes open blocks with the reason, reports nothing, and ends the timeline", () => {
    const timeline = new Timeline()
    const log: Log = []
    record(timeline, log)
    timeline.dispatch({ type: "block_start", index: 0, block: { kind: "text" } })
    timeline.dispatch(text(0, "partial"))
    timeline.abort("Cancelled")
    expect(log.at(-1)).toBe("0#0 abort Cancelled")
    expect(timeline.state).toBe("aborted")
    expect(timeline.issues).toEqual([])
    // A cancel racing the end of the stream is harmless.
    timeline.abort("again")
    expect(log.filter((l) => l.includes("abort"))).toHaveLength(1)
  })

  it("refuses any use after it is done, with an error that says why", () => {
    for (const end of [(t: Timeline) => t.finish(), (t: Timeline) => t.abort("stop")]) {
      const timeline = new Timeline()
      end(timeline)
      expect(() => timeline.dispatch(text(0, "late"))).toThrow(TimelineMisuse)
      expect(() => timeline.dispatch(text(0, "late"))).toThrow(/start a new Timeline for each response/)
      expect(() => timeline.finish()).toThrow(TimelineMisuse)
      expect(() => timeline.onBlock("text", () => ({}))).toThrow(TimelineMisuse)
      expect(() => timeline.onMeta("ping", () => {})).toThrow(TimelineMisuse)
      expect(() => timeline.onIssue(() => {})).toThrow(TimelineMisuse)
    }
  })

  it("stops handing a delta to further scopes when a handler aborts the timeline mid-dispatch", () => {
    const timeline = new Timeline()
    const seen: string[] = []
    timeline.onBlock("text", () => ({
      onDelta: () => {
        seen.push("first")
        timeline.abort("hook said abort")
      },
      onAbort: (reason) => seen.push(`first abort: ${reason}`)
    }))
    timeline.onBlock("text", () => ({
      onDelta: () => seen.push("second"),
      onAbort: (reason) => seen.push(`second abort: ${reason}`)
    }))
    timeline.dispatch({ type: "block_start", index: 0, block: { kind: "text" } })
    timeline.dispatch(text(0, "x"))
    expect(seen).toEqual(["first", "first abort: hook said abort", "second abort: hook said abort"])
  })

  it("a handler registered mid-stream sees only blocks started after it", () => {
    const timeline = new Timeline()
    timeline.dispatch({ type: "block_start", index: 0, block: { kind: "text" } })
    const seen: number[] = []
    timeline.onBlock("text", (_m, at) => {
      seen.push(at.index)
      return {}
    })
    timeline.dispatch(text(0, "a"))
    timeline.dispatch({ type: "block_stop", index: 0 })
    timeline.dispatch({ type: "block_start", index: 1, block: { kind: "text" } })
    expect(seen).toEqual([1])
  })

  it("narrows scopes to the deltas of their block kind", () => {
    expectTypeOf<BlockDeltaOf<"text">>().toEqualTypeOf<Extract<BlockDelta, { kind: "text" }>>()
    expectTypeOf<BlockDeltaOf<"tool_use">>().toEqualTypeOf<Extract<BlockDelta, { kind: "input_json" }>>()
    const timeline = new Timeline()
    timeline.onBlock("tool_use", (meta) => {
      expectTypeOf(meta.id).toEqualTypeOf<string>()
      return { onDelta: (delta) => expectTypeOf(delta.json).toEqualTypeOf<string>() }
    })
    timeline.onBlock("text", () => ({
      // @ts-expect-error a text scope never sees input JSON
      onDelta: (delta) => delta.json
    }))
    // @ts-expect-error text blocks carry no tool id
    timeline.onBlock("text", (meta) => ({ id: meta.id }))
    timeline.onMeta("usage", (e) => expectTypeOf(e.cacheReadTokens).toEqualTypeOf<number | undefined>())
  })

  it("describes every issue kind in words", () => {
    expect(describeIssue({ kind: "unknown_block", index: 4, event: "block_delta" })).toBe(
      "block_delta for block 4, which is not open"
    )
    expect(describeIssue({ kind: "duplicate_start", index: 1, open: "text", next: "thinking" })).toContain(
      "started while block 1 (text) was open"
    )
    expect(describeIssue({ kind: "delta_mismatch", index: 2, block: "text", delta: "input_json" })).toBe(
      "input_json delta inside text block 2"
    )
    expect(describeIssue({ kind: "unclosed_block", index: 3, block: "tool_use" })).toBe(
      "tool_use block 3 was never stopped"
    )
  })
})
