import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { defineTool } from "../../src/tool/define-tool.ts"
import { DEFAULT_TOOL_OUTPUT_BYTES, checkOutputLimit, limitOutput, utf8Length } from "../../src/tool/output-limit.ts"
import { ToolMeta } from "../../src/tool/tool-meta.ts"
import { registerDefinitions } from "../../src/tool-server/registration.ts"
import { ToolServer } from "../../src/tool-server/tool-server.ts"
import { ToolExecution } from "../../src/tool-server/tool-server-error.ts"

const bytes = (text: string): number => Buffer.byteLength(text, "utf8")
const MARKER = /\n\[… output truncated: (\d+) of (\d+) bytes dropped\]$/

describe("limitOutput", () => {
  it("counts UTF-8 bytes like Node does, lone surrogates included", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary" }), (text) => {
        expect(utf8Length(text)).toBe(bytes(text))
      })
    )
  })

  it("keeps text that fits and caps the rest: within the cap, on a code point, with an exact dropped count (property)", () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom("a", "é", "€", "😀", "\ud800", "\udc00"), maxLength: 2_000 }), fc.integer({ min: 256, max: 3_000 }), (text, max) => {
        const out = limitOutput(text, max)
        expect(bytes(out)).toBeLessThanOrEqual(max)
        if (bytes(text) <= max) {
          expect(out).toBe(text)
          return
        }
        const match = MARKER.exec(out)
        expect(match).not.toBeNull()
        const kept = out.slice(0, out.length - (match?.[0].length ?? 0))
        expect(text.startsWith(kept)).toBe(true)
        // Never a split pair: the kept text does not end on the first half of a pair the input continues.
        const last = kept.charCodeAt(kept.length - 1)
        const next = text.charCodeAt(kept.length)
        expect(last >= 0xd800 && last <= 0xdbff && next >= 0xdc00 && next <= 0xdfff).toBe(false)
        expect(Number(match?.[2])).toBe(bytes(text))
        expect(Number(match?.[1])).toBe(bytes(text) - bytes(kept))
        expect(limitOutput(out, max)).toBe(out) // idempotent: capping again (after hooks) changes nothing
      })
    )
  })

  it("caps 100 MiB to the default in one pass", () => {
    const out = limitOutput("x".repeat(100 * 1024 * 1024))
    expect(bytes(out)).toBeLessThanOrEqual(DEFAULT_TOOL_OUTPUT_BYTES)
    expect(out).toMatch(/output truncated: \d+ of 104857600 bytes dropped\]$/)
  })

  it("refuses caps that cannot hold the marker, and accepts Infinity", () => {
    expect(() => checkOutputLimit(10, "x")).toThrow(RangeError)
    expect(() => checkOutputLimit(1000.5, "x")).toThrow(RangeError)
    expect(() => checkOutputLimit("1000", "x")).toThrow(RangeError)
    expect(checkOutputLimit(Number.POSITIVE_INFINITY, "x")).toBe(Number.POSITIVE_INFINITY)
    expect(() => ToolMeta.make("t").outputLimit(0)).toThrow(RangeError)
    expect(() => defineTool({ name: "t", description: "", maxOutputBytes: -1, execute: () => "" })).toThrow(RangeError)
  })
})

describe("output limits on the tool server", () => {
  const handle = new ToolServer().handle()
  registerDefinitions(handle, [
    defineTool({ name: "big", description: "", execute: () => "y".repeat(1024 * 1024) }),
    defineTool({ name: "small_cap", description: "", maxOutputBytes: 1000, execute: () => "😀".repeat(1000) }),
    defineTool({ name: "no_cap", description: "", maxOutputBytes: Number.POSITIVE_INFINITY, execute: () => "z".repeat(300_000) }),
    defineTool({
      name: "loud_failure",
      description: "",
      execute: () => {
        throw new Error("e".repeat(50 * 1024 * 1024))
      }
    })
  ])

  it("caps output at 100 KiB by default, on every call path", async () => {
    for (const options of [undefined, { signal: new AbortController().signal }, { timeoutMs: 10_000 }]) {
      const out = await handle.callTool("big", "{}", options)
      expect(bytes(out)).toBeLessThanOrEqual(DEFAULT_TOOL_OUTPUT_BYTES)
      expect(out).toMatch(MARKER)
    }
  })

  it("uses the tool's own cap over the caller's, and the caller's over the default", async () => {
    const own = await handle.callTool("small_cap", "{}", { maxOutputBytes: 50_000 })
    expect(bytes(own)).toBeLessThanOrEqual(1000)
    expect(own.startsWith("😀")).toBe(true)
    expect(await handle.callTool("no_cap", "{}")).toHaveLength(300_000)
    const caller = await handle.callTool("big", "{}", { maxOutputBytes: 2048 })
    expect(bytes(caller)).toBeLessThanOrEqual(2048)
  })

  it("caps a 50 MiB error message too", async () => {
    for (const options of [undefined, { signal: new AbortController().signal }]) {
      const error = (await handle.callTool("loud_failure", "{}", options).catch((e: unknown) => e)) as ToolExecution
      expect(error).toBeInstanceOf(ToolExecution)
      expect(bytes(error.message)).toBeLessThanOrEqual(DEFAULT_TOOL_OUTPUT_BYTES)
      expect(bytes(error.error.message)).toBeLessThanOrEqual(DEFAULT_TOOL_OUTPUT_BYTES)
    }
  })
})
