import { spawn } from "node:child_process"
import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { PathRefused, readFileUnderRoot } from "../../../src/cli/tools/read-file.ts"

/**
 * Another process swaps `root/sub` (a real folder) for a symlink to `outside` and back, as fast as it can, while
 * this process reads `sub/file.txt` under the root. A check-then-open-by-name reader returns the outside file's
 * content on some of these reads; a reader that verifies the opened descriptor never does.
 */
const SWAPPER = String.raw`
const fs = require("node:fs")
const [sub, parked, link, stop] = process.argv.slice(1)
const startedAt = Date.now()
let swaps = 0
for (;;) {
  fs.renameSync(sub, parked)    // the real folder steps aside...
  fs.renameSync(link, sub)      // ...and a symlink to the outside folder takes its name
  fs.renameSync(sub, link)
  fs.renameSync(parked, sub)    // back to the real folder
  swaps += 1
  if (swaps === 1) process.stdout.write("ready\n")
  // Checked now and then so that the folder is always left as it was found; the time cap is only a safety net.
  if (swaps % 64 === 0 && (fs.existsSync(stop) || Date.now() - startedAt > 20000)) break
}
process.stdout.write("swaps " + swaps + "\n")
`

/** Enough reads to have lost the race many times over with the old reader, few enough to take well under a second. */
const READS = 3000
const PARALLEL = 4

let base: string

beforeAll(async () => {
  base = await mkdtemp(join(tmpdir(), "llm-worker-read-race-"))
  await mkdir(join(base, "root", "sub"), { recursive: true })
  await mkdir(join(base, "outside"))
  await writeFile(join(base, "root", "sub", "file.txt"), "inside\n")
  await writeFile(join(base, "outside", "file.txt"), "SECRET from outside the root\n")
  await symlink(join(base, "outside"), join(base, "root", "sub-link"))
})

afterAll(() => rm(base, { recursive: true, force: true }))

describe.skipIf(process.platform === "win32")("read_file against a folder swapped for a symlink by another process", () => {
  it("never returns content from outside the root", async () => {
    const root = join(base, "root")
    const stop = join(base, "stop")
    const swapper = spawn(process.execPath, ["-e", SWAPPER, join(root, "sub"), join(root, "sub-parked"), join(root, "sub-link"), stop])
    let printed = ""
    swapper.stdout.setEncoding("utf8").on("data", (chunk: string) => (printed += chunk))
    const exited = new Promise<number | null>((resolve) => swapper.once("close", resolve))
    await new Promise<void>((resolve, reject) => {
      swapper.stdout.on("data", () => printed.includes("ready\n") && resolve())
      swapper.once("close", () => reject(new Error(`the swapper ended before it started: ${printed}`)))
    })

    const outcomes = { inside: 0, refused: 0, escaped: 0, other: [] as Array<string> }
    try {
      const worker = async (): Promise<void> => {
        for (let index = 0; index < READS / PARALLEL; index++) {
          try {
            const text = await readFileUnderRoot(root, "sub/file.txt")
            if (text.includes("SECRET")) outcomes.escaped += 1
            else if (text === "inside\n") outcomes.inside += 1
            else outcomes.other.push(`read ${JSON.stringify(text)}`)
          } catch (thrown) {
            if (thrown instanceof PathRefused) outcomes.refused += 1
            else outcomes.other.push(String(thrown))
          }
        }
      }
      await Promise.all(Array.from({ length: PARALLEL }, worker))
    } finally {
      await writeFile(stop, "")
    }
    expect(await exited).toBe(0)
    // The swapper was still swapping when the last read finished, so every read raced it.
    const swaps = Number(/swaps (\d+)/.exec(printed)?.[1] ?? 0)
    expect(swaps).toBeGreaterThan(1)
    expect(outcomes.other).toEqual([])
    expect(outcomes.escaped).toBe(0)
    expect(outcomes.inside + outcomes.refused).toBe(READS)
  })
})
