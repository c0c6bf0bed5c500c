import { constants } from "node:fs"
import { open, realpath, stat } from "node:fs/promises"
import { isAbsolute, relative, resolve, sep } from "node:path"
import { Data } from "effect"
import { z } from "zod"
import { defineTool } from "../../tool/define-tool.ts"
import { ExecutionFailed, InvalidArgument } from "../../tool/tool-error.ts"

/** A path the model asked for that leaves the root, or does not name a readable text file under it. */
export class PathRefused extends Data.TaggedError("PathRefused")<{ readonly message: string }> {}

/** Enough for source files and notes; a model gains little from more, and the context window pays for it. */
export const DEFAULT_MAX_BYTES = 64 * 1024

const inside = (root: string, target: string): boolean => {
  const rel = relative(root, target)
  return rel === "" || (!rel.startsWith(`..${sep}`) && rel !== ".." && !isAbsolute(rel))
}

const errorCode = (thrown: unknown): string | undefined =>
  typeof thrown === "object" && thrown !== null && "code" in thrown ? String((thrown as { code: unknown }).code) : undefined

/**
 * Where `path` leads under `root`, after following every symlink. Checked twice: lexically (so `..` is refused
 * even when the target does not exist, without revealing whether it does) and after `realpath` (so a symlink
 * inside the root cannot lead out of it).
 */
export const resolveUnderRoot = async (root: string, path: string): Promise<string> => {
  const realRoot = await realpath(root)
  if (path.includes("\0")) throw new PathRefused({ message: "the path contains a NUL character" })
  const target = resolve(realRoot, path)
  if (!inside(realRoot, target)) throw new PathRefused({ message: `${JSON.stringify(path)} is outside the readable folder` })
  let real: string
  try {
    real = await realpath(target)
  } catch (thrown) {
    if (errorCode(thrown) === "ENOENT") throw new PathRefused({ message: `${JSON.stringify(path)} does not exist` })
    throw new PathRefused({ message: `${JSON.stringify(path)} cannot be read (${errorCode(thrown) ?? "unknown error"})` })
  }
  if (!inside(realRoot, real)) throw new PathRefused({ message: `${JSON.stringify(path)} leads outside the readable folder through a symbolic link` })
  return real
}

/**
 * Reads a UTF-8 text file under `root`, at most `maxBytes` of it; a longer file is cut with a marker saying how
 * much was left out, so the model knows it did not see everything.
 */
export const readFileUnderRoot = async (root: string, path: string, maxBytes = DEFAULT_MAX_BYTES): Promise<string> => {
  const real = await resolveUnderRoot(root, path)
  // Checked before opening: opening a FIFO or a device blocks until a writer appears, which could be never.
  if (!(await stat(real)).isFile()) throw new PathRefused({ message: `${JSON.stringify(path)} is not a regular file` })
  // O_NONBLOCK: should the path be swapped for a FIFO between the check and the open, the open still returns.
  const handle = await open(real, constants.O_RDONLY | constants.O_NONBLOCK)
  try {
    const stats = await handle.stat()
    if (!stats.isFile()) throw new PathRefused({ message: `${JSON.stringify(path)} is not a regular file` })
    const buffer = Buffer.alloc(Math.min(stats.size, maxBytes))
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0)
    const bytes = buffer.subarray(0, bytesRead)
    if (bytes.includes(0)) throw new PathRefused({ message: `${JSON.stringify(path)} is a binary file` })
    const text = new TextDecoder("utf-8", { fatal: false }).decode(bytes)
    return stats.size > bytesRead ? `${text}\n[truncated: showed the first ${bytesRead} of ${stats.size} bytes]` : text
  } finally {
    await handle.close()
  }
}

/** `read_file` confined to `root` (its real path is resolved on every call, so a moved root is still honoured). */
export const readFileTool = (root: string, maxBytes = DEFAULT_MAX_BYTES) =>
  defineTool({
    name: "read_file",
    description: `Reads a UTF-8 text file inside the working folder (first ${maxBytes} bytes at most).`,
    parameters: z.object({ path: z.string().describe("Path relative to the working folder, e.g. notes.txt") }),
    execute: async ({ path }) => {
      try {
        return await readFileUnderRoot(root, path, maxBytes)
      } catch (thrown) {
        if (thrown instanceof PathRefused) throw new InvalidArgument({ message: thrown.message })
        throw new ExecutionFailed({ message: `reading ${JSON.stringify(path)} failed (${errorCode(thrown) ?? "unknown error"})` })
      }
    }
  })
