import { constants } from "node:fs"
import { type FileHandle, open, readlink, realpath, stat } from "node:fs/promises"
import { isAbsolute, relative, resolve, sep } from "node:path"
import { TaggedError } from "../../error/tagged-error.ts"

/** A path the model asked for that leaves the root, or does not name a readable regular file under it. */
export class PathRefused extends TaggedError("PathRefused")<{ readonly message: string }> {}

/**
 * How an opened descriptor is tied back to a place on disk.
 * - `"proc"` (Linux): the kernel's own path of the open file, read from `/proc/self/fd/<fd>`. It names the file the
 *   descriptor really refers to, whatever happened to the path since, so the check cannot be raced.
 * - `"inode"` (everywhere else, or Linux without `/proc`): the descriptor's device and inode must equal those found at
 *   the canonical path, and that path must still be canonical afterwards. Each step is by name, so a process that can
 *   rename folders under the root and wins several races in a row could still pass it (see docs/security.md).
 */
export type VerifyMethod = "proc" | "inode"

export const defaultVerifyMethod: VerifyMethod = process.platform === "linux" ? "proc" : "inode"

const inside = (root: string, target: string): boolean => {
  const rel = relative(root, target)
  return rel === "" || (!rel.startsWith(`..${sep}`) && rel !== ".." && !isAbsolute(rel))
}

export const errorCode = (thrown: unknown): string | undefined =>
  typeof thrown === "object" && thrown !== null && "code" in thrown ? String((thrown as { code: unknown }).code) : undefined

const quoted = (path: string): string => JSON.stringify(path)

const fsRefusal = (path: string, thrown: unknown): PathRefused =>
  errorCode(thrown) === "ENOENT"
    ? new PathRefused({ message: `${quoted(path)} does not exist` })
    : new PathRefused({ message: `${quoted(path)} cannot be read (${errorCode(thrown) ?? "unknown error"})` })

/**
 * Where `path` leads under `root`, after following every symlink. Checked twice: lexically (so `..` is refused
 * even when the target does not exist, without revealing whether it does) and after `realpath` (so a symlink
 * inside the root cannot lead out of it). Checks by name only: `openUnderRoot` is what makes reading safe.
 */
export const resolveUnderRoot = async (root: string, path: string): Promise<{ readonly realRoot: string; readonly real: string }> => {
  const realRoot = await realpath(root)
  if (path.includes("\0")) throw new PathRefused({ message: "the path contains a NUL character" })
  const target = resolve(realRoot, path)
  if (!inside(realRoot, target)) throw new PathRefused({ message: `${quoted(path)} is outside the readable folder` })
  let real: string
  try {
    real = await realpath(target)
  } catch (thrown) {
    throw fsRefusal(path, thrown)
  }
  if (!inside(realRoot, real)) throw new PathRefused({ message: `${quoted(path)} leads outside the readable folder through a symbolic link` })
  return { realRoot, real }
}

/** The kernel's path for an open descriptor, or undefined when `/proc` cannot tell (not mounted, unusual file). */
const procPath = async (handle: FileHandle): Promise<string | undefined> => {
  try {
    const location = await readlink(`/proc/self/fd/${handle.fd}`)
    // Sockets, pipes and anonymous files read as `type:[inode]`; an unlinked file gets a " (deleted)" suffix.
    return location.startsWith("/") && !location.endsWith(" (deleted)") ? location : undefined
  } catch {
    return undefined
  }
}

const sameFile = (a: { readonly dev: bigint; readonly ino: bigint }, b: { readonly dev: bigint; readonly ino: bigint }): boolean =>
  a.dev === b.dev && a.ino === b.ino

/**
 * Whether the descriptor `handle` (opened from `real`) refers to a file inside `realRoot`. Decided on the descriptor,
 * never on the name alone: the name may have been pointed elsewhere between any check and the open.
 */
export const descriptorInsideRoot = async (handle: FileHandle, realRoot: string, real: string, method: VerifyMethod): Promise<boolean> => {
  if (method === "proc") {
    const location = await procPath(handle)
    if (location !== undefined) return inside(realRoot, location)
    // No usable /proc: fall through to the portable check rather than refuse every read.
  }
  const opened = await handle.stat({ bigint: true })
  try {
    if ((await realpath(real)) !== real || !inside(realRoot, real)) return false
    const named = await stat(real, { bigint: true })
    // Confirms, after the inode comparison, that no component of `real` was a symlink while `stat` followed it.
    return sameFile(opened, named) && (await realpath(real)) === real
  } catch {
    return false
  }
}

/** Flags that make `open` itself harmless on whatever it lands on; missing ones (Windows) are simply left out. */
const OPEN_FLAGS =
  constants.O_RDONLY |
  // A FIFO or device opened without it blocks until a writer appears, which could be never.
  (constants.O_NONBLOCK ?? 0) |
  // A terminal device must never become this process's controlling terminal.
  (constants.O_NOCTTY ?? 0) |
  // The name was just resolved to its real path: a symlink as the last component now means it was swapped.
  (constants.O_NOFOLLOW ?? 0)

/**
 * Opens `path` under `root` for reading, and returns the descriptor only once the descriptor itself is known to be a
 * regular file inside the root; everything read must go through it. Checking a name and then opening it by name
 * lets another process swap a folder for a symlink in between, which is how reads escaped the root before.
 *
 * The name is still checked first (realpath inside the root, a regular file), which gives precise refusals and
 * keeps the common case from ever opening anything outside the root. Under a race, `open` may land on an outside
 * object before the descriptor check refuses it: nothing is read from it, and the flags above keep the open
 * itself from blocking or taking a terminal.
 */
export const openUnderRoot = async (root: string, path: string, method: VerifyMethod = defaultVerifyMethod): Promise<FileHandle> => {
  const { realRoot, real } = await resolveUnderRoot(root, path)
  let named
  try {
    named = await stat(real)
  } catch (thrown) {
    throw fsRefusal(path, thrown)
  }
  if (!named.isFile()) throw new PathRefused({ message: `${quoted(path)} is not a regular file` })
  let handle: FileHandle
  try {
    handle = await open(real, OPEN_FLAGS)
  } catch (thrown) {
    if (errorCode(thrown) === "ELOOP") throw new PathRefused({ message: `${quoted(path)} changed while it was being opened` })
    throw fsRefusal(path, thrown)
  }
  try {
    const stats = await handle.stat()
    if (!stats.isFile()) throw new PathRefused({ message: `${quoted(path)} is not a regular file` })
    if (stats.nlink === 0) throw new PathRefused({ message: `${quoted(path)} was removed while it was being opened` })
    if (!(await descriptorInsideRoot(handle, realRoot, real, method))) {
      throw new PathRefused({ message: `${quoted(path)} leads outside the readable folder (it changed while it was being opened)` })
    }
    return handle
  } catch (thrown) {
    await handle.close()
    throw thrown
  }
}
