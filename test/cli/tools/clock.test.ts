import { describe, expect, it } from "vitest"
import { checkTimeZone, clockTool, readClock } from "../../../src/cli/tools/clock.ts"
import { InvalidArgument } from "../../../src/tool/tool-error.ts"
import { ToolMeta } from "../../../src/tool/tool-meta.ts"

const context = { callId: "c1", signal: new AbortController().signal, meta: ToolMeta.make("clock") }

describe("clock", () => {
  it("reads a fixed instant in the requested IANA zone", () => {
    const now = new Date("2026-01-03T05:05:09Z")
    expect(readClock(now, "Asia/Tokyo")).toEqual({
      timeZone: "Asia/Tokyo",
      utc: "2026-01-03T05:05:09.000Z",
      local: expect.stringContaining("14:05:09")
    })
    expect(readClock(now, "America/New_York").local).toContain("00:05:09")
    expect(readClock(now, "UTC").local).toContain("05:05:09")
    expect(readClock(now).timeZone).toBe(Intl.DateTimeFormat().resolvedOptions().timeZone)
  })

  it("refuses what is not an IANA zone with a message the model can act on", () => {
    for (const zone of ["Mars/Olympus_Mons", "+05:00", "", "../etc/passwd", "Asia/Tokyo; rm -rf /", "GMT+25"]) {
      expect(() => checkTimeZone(zone), zone).toThrow(InvalidArgument)
    }
    expect(() => checkTimeZone("Atlantis/Capital")).toThrow(/unknown time zone "Atlantis\/Capital"; use an IANA name/)
  })

  it("returns the reading as JSON through the tool, and refuses bad zones and bad argument types", async () => {
    const [, tool] = clockTool()
    const output = JSON.parse(await tool.execute(JSON.stringify({ timeZone: "Europe/Paris" }), context)) as { timeZone: string; utc: string }
    expect(output.timeZone).toBe("Europe/Paris")
    expect(Math.abs(Date.parse(output.utc) - Date.now())).toBeLessThan(60_000)
    await expect(tool.execute(JSON.stringify({ timeZone: "Nowhere/City" }), context)).rejects.toMatchObject({ _tag: "InvalidArgument" })
    await expect(tool.execute(JSON.stringify({ timeZone: 9 }), context)).rejects.toMatchObject({ _tag: "InvalidArgument" })
  })
})
