import type { FileHandle } from "node:fs/promises"
import { z } from "zod"
import { defineTool } from "../../tool/define-tool.ts"
import { ExecutionFailed, InvalidArgument } from "../../tool/tool-error.ts"
import { PathRefused, type VerifyMethod, defaultVerifyMethod, errorCode, openUnderRoot } from "./open-under-root.ts"

export { PathRefused, resolveUnderRoot } from "./open-under-root.ts"

/** Enough for source files and notes; a model gains little from more, and the context window pays for it. */
export const DEFAULT_MAX_BYTES = 64 * 1024

/** The most `maxBytes` may be: the buffer is allocated up front, and the whole text goes into the model's context. */
export const MAX_MAX_BYTES = 16 * 1024 * 1024

const MIN_BUFFER = 64 * 1024

const checkMaxBytes = (maxBytes: number): number => {
  if (!Number.isSafeInteger(maxBytes) || maxBytes < 1 || maxBytes > MAX_MAX_BYTES) {
    throw new RangeError(`read_file: maxBytes must be a whole number from 1 to ${MAX_MAX_BYTES}, got ${String(maxBytes)}`)
  }
  return maxBytes
}

/**
 * Fills `buffer` from the start of the file, or stops at its end. One `read` may return less than asked (network
 * file systems, a file being written), so it loops; it never reads more than the buffer holds.
 */
const readPrefix = async (handle: FileHandle, buffer: Buffer): Promise<number> => {
  let filled = 0
  while (filled < buffer.length) {
    const { bytesRead } = await handle.read(buffer, filled, buffer.length - filled, filled)
    if (bytesRead === 0) break
    filled += bytesRead
  }
  return filled
}

/** The longest prefix of `bytes` (at most `limit`) that does not end inside a UTF-8 sequence. */
const utf8Prefix = (bytes: Buffer, limit: number): Buffer => {
  if (bytes.length <= limit) return bytes
  let end = limit
  // Back off over continuation bytes (10xxxxxx) to the start of the character the cut falls in; at most 3.
  while (end > 0 && limit - end < 3 && ((bytes[end] ?? 0) & 0xc0) === 0x80) end -= 1
  return bytes.subarray(0, end)
}

/**
 * Reads a UTF-8 text file under `root`, at most `maxBytes` of it; a longer file is cut (on a character boundary) with
 * a marker saying how much was left out, so the model knows it did not see everything. The file is opened first and
 * the open descriptor verified (see `openUnderRoot`); nothing is read by name.
 */
export const readFileUnderRoot = async (root: string, path: string, maxBytes = DEFAULT_MAX_BYTES, method: VerifyMethod = defaultVerifyMethod): Promise<string> => {
  const limit = checkMaxBytes(maxBytes)
  const handle = await openUnderRoot(root, path, method)
  try {
    const size = (await handle.stat()).size
    // One byte more than shown tells whether the file goes on. Sized from `stat` so a small file does not cost a large
    // buffer, but never below MIN_BUFFER: some files report size 0 yet have content, and a file may grow meanwhile.
    const buffer = Buffer.alloc(Math.min(limit + 1, Math.max(size + 1, MIN_BUFFER)))
    const read = buffer.subarray(0, await readPrefix(handle, buffer))
    if (read.includes(0)) throw new PathRefused({ message: `${JSON.stringify(path)} is a binary file` })
    const shown = utf8Prefix(read, limit)
    const text = new TextDecoder("utf-8", { fatal: false }).decode(shown)
    if (shown.length === read.length) return text
    return `${text}\n[truncated: showed the first ${shown.length} of ${Math.max(size, read.length)} bytes]`
  } finally {
    await handle.close()
  }
}

/** `read_file` confined to `root` (its real path is resolved on every call, so a moved root is still honoured). */
export const readFileTool = (root: string, maxBytes = DEFAULT_MAX_BYTES) => {
  const limit = checkMaxBytes(maxBytes)
  return defineTool({
    name: "read_file",
    description: `Reads a UTF-8 text file inside the working folder (first ${limit} bytes at most).`,
    parameters: z.object({ path: z.string().describe("Path relative to the working folder, e.g. notes.txt") }),
    execute: async ({ path }) => {
      try {
        return await readFileUnderRoot(root, path, limit)
      } catch (thrown) {
        if (thrown instanceof PathRefused) throw new InvalidArgument({ message: thrown.message })
        throw new ExecutionFailed({ message: `reading ${JSON.stringify(path)} failed (${errorCode(thrown) ?? "unknown error"})` })
      }
    }
  })
}
