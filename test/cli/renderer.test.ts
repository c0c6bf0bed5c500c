import { describe, expect, it } from "vitest"
import { TranscriptRenderer, safeForTerminal, styleFor } from "../../src/cli/renderer.ts"

describe("the terminal transcript", () => {
  it("shows control characters from the model or a file as visible escapes, never raw", () => {
    expect(safeForTerminal("ok\u001b]0;owned\u0007 \u001b[2J\tend\n")).toBe("ok\\u001b]0;owned\\u0007 \\u001b[2J\tend\n")
    let written = ""
    const renderer = new TranscriptRenderer({ write: (text) => (written += text) }, styleFor({ isTTY: false }))
    renderer.subscriber.onBlockDelta?.({ type: "block_delta", turn: 1, index: 0, delta: { kind: "text", text: "hi\u001b[31m" } })
    renderer.subscriber.onToolResult?.({
      type: "tool_result",
      outcome: { callId: "c", name: "read_file", status: "ok", output: "line\u001b[1A\u0008", isError: false }
    })
    expect(written).not.toMatch(/[\u001b\u0007\u0008]/)
    expect(written).toContain("hi\\u001b[31m")
  })
})
