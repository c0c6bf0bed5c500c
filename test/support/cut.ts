/** Cut points for a whole of `length` units: the given points (any order, repeats allowed) folded into range, sorted, once each. */
const cutPoints = (length: number, points: ReadonlyArray<number>): ReadonlyArray<number> =>
  [...new Set(points.map((p) => p % (length + 1)))].sort((a, b) => a - b)

const cut = <T>(length: number, points: ReadonlyArray<number>, part: (from: number, to: number) => T): ReadonlyArray<T> => {
  const parts: Array<T> = []
  let from = 0
  for (const p of cutPoints(length, points)) {
    parts.push(part(from, p))
    from = p
  }
  parts.push(part(from, length))
  return parts
}

/** Cuts `bytes` at the points into consecutive reads (views into `bytes`, as a stream's reads may be). */
export const cutBytes = (bytes: Uint8Array, points: ReadonlyArray<number>): ReadonlyArray<Uint8Array> =>
  cut(bytes.length, points, (from, to) => bytes.subarray(from, to))

/** Cuts `text` at the points into consecutive chunks. */
export const cutText = (text: string, points: ReadonlyArray<number>): ReadonlyArray<string> =>
  cut(text.length, points, (from, to) => text.slice(from, to))
