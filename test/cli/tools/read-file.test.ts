import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import fc from "fast-check"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { open, realpath } from "node:fs/promises"
import { descriptorInsideRoot } from "../../../src/cli/tools/open-under-root.ts"
import { MAX_MAX_BYTES, PathRefused, readFileTool, readFileUnderRoot } from "../../../src/cli/tools/read-file.ts"
import { ToolMeta } from "../../../src/tool/tool-meta.ts"

let base: string
let root: string
let outside: string

beforeAll(async () => {
  base = await mkdtemp(join(tmpdir(), "llm-worker-read-file-"))
  root = join(base, "root")
  outside = join(base, "outside")
  await mkdir(join(root, "sub"), { recursive: true })
  await mkdir(outside)
  await writeFile(join(root, "notes.txt"), "inside notes\n")
  await writeFile(join(root, "sub", "deep.txt"), "deep file")
  await writeFile(join(root, "binary.bin"), Buffer.from([0x41, 0x00, 0x42]))
  await writeFile(join(root, "big.txt"), "x".repeat(5000))
  await writeFile(join(outside, "secret.txt"), "SECRET")
  await symlink(join(outside, "secret.txt"), join(root, "link-out.txt"))
  await symlink(outside, join(root, "dir-out"))
  await symlink(join(root, "notes.txt"), join(root, "link-in.txt"))
  await symlink(root, join(base, "root-link"))
})

afterAll(async () => {
  await rm(base, { recursive: true, force: true })
})

const refusal = (path: string, from = root) =>
  readFileUnderRoot(from, path).then(
    (text) => `read: ${text}`,
    (thrown: unknown) => (thrown instanceof PathRefused ? thrown.message : `unexpected: ${String(thrown)}`)
  )

describe("read_file", () => {
  it("reads files under the root, through inner symlinks and a symlinked root", async () => {
    expect(await readFileUnderRoot(root, "notes.txt")).toBe("inside notes\n")
    expect(await readFileUnderRoot(root, "sub/../sub/deep.txt")).toBe("deep file")
    expect(await readFileUnderRoot(root, "./link-in.txt")).toBe("inside notes\n")
    expect(await readFileUnderRoot(root, join(root, "notes.txt"))).toBe("inside notes\n")
    expect(await readFileUnderRoot(join(base, "root-link"), "notes.txt")).toBe("inside notes\n")
  })

  it("refuses `..`, absolute paths and symlinks that leave the root", async () => {
    expect(await refusal("../outside/secret.txt")).toMatch(/outside the readable folder/)
    expect(await refusal("sub/../../outside/secret.txt")).toMatch(/outside the readable folder/)
    expect(await refusal(join(outside, "secret.txt"))).toMatch(/outside the readable folder/)
    expect(await refusal("link-out.txt")).toMatch(/through a symbolic link/)
    expect(await refusal("dir-out/secret.txt")).toMatch(/through a symbolic link/)
    expect(await refusal("..")).toMatch(/outside the readable folder/)
    // Lexical escapes are refused before touching the disk: a missing outside file gets the same answer.
    expect(await refusal("../nope.txt")).toMatch(/outside the readable folder/)
  })

  it("refuses what is not a readable text file", async () => {
    expect(await refusal("missing.txt")).toMatch(/does not exist/)
    expect(await refusal("sub")).toMatch(/not a regular file/)
    expect(await refusal("")).toMatch(/not a regular file/)
    expect(await refusal("binary.bin")).toMatch(/binary file/)
    expect(await refusal("a\0b")).toMatch(/NUL/)
  })

  it("caps the size and says how much was left out", async () => {
    const text = await readFileUnderRoot(root, "big.txt", 1000)
    expect(text).toBe(`${"x".repeat(1000)}\n[truncated: showed the first 1000 of 5000 bytes]`)
  })

  it("cuts a long file on a character boundary, never inside a UTF-8 sequence", async () => {
    await writeFile(join(root, "utf8.txt"), "ab€€") // € is 3 bytes: the file is 8 bytes
    expect(await readFileUnderRoot(root, "utf8.txt", 4)).toBe("ab\n[truncated: showed the first 2 of 8 bytes]")
    expect(await readFileUnderRoot(root, "utf8.txt", 5)).toBe("ab€\n[truncated: showed the first 5 of 8 bytes]")
    expect(await readFileUnderRoot(root, "utf8.txt", 8)).toBe("ab€€")
  })

  it("refuses a byte limit that is not a whole number from 1 to MAX_MAX_BYTES", () => {
    for (const bad of [0, -1, 1.5, Number.NaN, MAX_MAX_BYTES + 1]) expect(() => readFileTool(root, bad)).toThrow(RangeError)
    expect(() => readFileTool(root, MAX_MAX_BYTES)).not.toThrow()
  })

  it("never returns an outside file's content, whatever path the model makes up", async () => {
    const segment = fc.constantFrom("..", ".", "", "sub", "notes.txt", "link-out.txt", "dir-out", "outside", "secret.txt", "root")
    await fc.assert(
      fc.asyncProperty(fc.array(segment, { minLength: 1, maxLength: 6 }), fc.boolean(), async (segments, absolute) => {
        const path = (absolute ? `${base}/` : "") + segments.join("/")
        const result = await refusal(path)
        expect(result).not.toContain("SECRET")
        expect(result.startsWith("unexpected")).toBe(false)
      }),
      { numRuns: 300 }
    )
  })

  it("gives the model an InvalidArgument result for a refused path", async () => {
    const [, tool] = readFileTool(root)()
    const context = { callId: "c1", signal: new AbortController().signal, meta: ToolMeta.make("read_file") }
    await expect(tool.execute(JSON.stringify({ path: "notes.txt" }), context)).resolves.toBe("inside notes\n")
    await expect(tool.execute(JSON.stringify({ path: "../outside/secret.txt" }), context)).rejects.toMatchObject({
      _tag: "InvalidArgument",
      message: expect.stringMatching(/outside the readable folder/)
    })
  })
})

describe("the check on the opened descriptor", () => {
  // What a swapped folder amounts to: the name checked was inside the root, the descriptor opened is outside it.
  for (const method of ["proc", "inode"] as const) {
    it.skipIf(method === "proc" && process.platform !== "linux")(`(${method}) refuses a descriptor that is not the file the inside name leads to`, async () => {
      const realRoot = await realpath(root)
      const insideName = join(realRoot, "notes.txt")
      const outsideHandle = await open(join(outside, "secret.txt"))
      const insideHandle = await open(insideName)
      try {
        expect(await descriptorInsideRoot(outsideHandle, realRoot, insideName, method)).toBe(false)
        expect(await descriptorInsideRoot(insideHandle, realRoot, insideName, method)).toBe(true)
        // The inode check also refuses a name that is no longer canonical (a symlink appeared on the way).
        expect(await descriptorInsideRoot(insideHandle, realRoot, join(realRoot, "link-in.txt"), "inode")).toBe(false)
      } finally {
        await Promise.all([outsideHandle.close(), insideHandle.close()])
      }
    })
  }

  it("reads the same either way when nothing is racing", async () => {
    for (const method of ["proc", "inode"] as const) {
      if (method === "proc" && process.platform !== "linux") continue
      expect(await readFileUnderRoot(root, "link-in.txt", undefined, method)).toBe("inside notes\n")
      await expect(readFileUnderRoot(root, "dir-out/secret.txt", undefined, method)).rejects.toThrow(/outside the readable folder/)
    }
  })
})

describe("special files", () => {
  it("refuses a named pipe at once instead of blocking on it", async () => {
    const { execFileSync } = await import("node:child_process")
    const { mkdtempSync } = await import("node:fs")
    const { tmpdir } = await import("node:os")
    const { join } = await import("node:path")
    const { readFileUnderRoot } = await import("../../../src/cli/tools/read-file.ts")
    const root = mkdtempSync(join(tmpdir(), "llmw-fifo-"))
    execFileSync("mkfifo", [join(root, "pipe")])
    const started = Date.now()
    await expect(readFileUnderRoot(root, "pipe")).rejects.toThrow(/not a regular file/)
    expect(Date.now() - started).toBeLessThan(2_000)
  })
})
