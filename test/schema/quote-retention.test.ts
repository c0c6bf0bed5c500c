import { execFile } from "node:child_process"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { describe, expect, it } from "vitest"

const QUOTE = fileURLToPath(new URL("../../src/schema/quote.ts", import.meta.url))

/**
 * A message quoting 80 characters of a 50 MiB key must not keep the 50 MiB alive: V8's `slice` of a long string is
 * a view on the original. Measured in a child `node --expose-gc`, where nothing else allocates.
 */
describe("clipped quotes", () => {
  it("hold only what they show, never the string they were cut from", async () => {
    const script = `
      const { clip } = await import(${JSON.stringify(QUOTE)})
      const live = () => { gc(); gc(); return process.memoryUsage().heapUsed }
      const before = live()
      let big = "k".repeat(50 * 1024 * 1024) + String(Math.random())
      const kept = clip(big)
      big = undefined
      console.log(JSON.stringify({ retained: live() - before, length: kept.length }))
    `
    const { stdout } = await promisify(execFile)(process.execPath, ["--expose-gc", "--import", "tsx", "--input-type=module", "-e", script])
    const { retained, length } = JSON.parse(stdout) as { retained: number; length: number }
    expect(length).toBeLessThan(200)
    expect(retained).toBeLessThan(5 * 1024 * 1024)
  })
})
