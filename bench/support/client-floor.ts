/**
 * The least a streaming client must do with a response body (bench/stream.ts, "client floor"): read it with the
 * default reader (as the transport does), decode UTF-8 read by read, split lines, `JSON.parse` each `data:` line
 * and hand each parsed value out through `for await`. No SSE fields but data, no CR, no bounds, no deadlines, no
 * decoding into events, no retries: not a client, the cost any client pays on the same stream.
 *
 * The UTF-8 step is the transport's `createUtf8Reads` (TextDecoder on each read whole, a cut character carried):
 * `TextDecoder` with `stream: true` leaves Node's fast path (decision 0075) and would make the floor slower than
 * what is measured against it. Values are handed out the cheapest way an async iterator can: parsed a read at a
 * time, then one already-settled promise per value.
 */
import { createUtf8Reads } from "#internal/llm/transport/utf8-reads"

const DONE: IteratorReturnResult<undefined> = { value: undefined, done: true }

/** One read of a body: a web stream's default reader and a Node stream's async iterator both answer like this. */
export interface BodyReads {
  read(): Promise<{ readonly done?: boolean; readonly value?: Uint8Array }>
}

/** How many reads the floor took and how many bytes they carried: the read size a client actually saw. */
export interface ReadCount {
  reads: number
  bytes: number
}

class FloorEvents implements AsyncIterableIterator<unknown> {
  private readonly text = createUtf8Reads()
  private carry = ""
  private values: Array<unknown> = []
  private at = 0
  private readonly onRead = (read: { readonly done?: boolean; readonly value?: Uint8Array }): IteratorResult<unknown> | Promise<IteratorResult<unknown>> => {
    if (read.done === true) return DONE
    this.count.reads++
    this.count.bytes += (read.value as Uint8Array).byteLength
    this.split(this.text.decode(read.value as Uint8Array))
    return this.next()
  }

  constructor(
    private readonly reader: BodyReads,
    private readonly count: ReadCount
  ) {}

  next(): Promise<IteratorResult<unknown>> {
    if (this.at < this.values.length) return Promise.resolve({ value: this.values[this.at++], done: false })
    return this.reader.read().then(this.onRead)
  }

  private split(decoded: string): void {
    const s = this.carry + decoded
    const values: Array<unknown> = []
    let start = 0
    let nl = s.indexOf("\n", start)
    while (nl !== -1) {
      if (s.startsWith("data:", start)) {
        const data = s.slice(s.charCodeAt(start + 5) === 32 ? start + 6 : start + 5, nl)
        if (data !== "[DONE]") values.push(JSON.parse(data))
      }
      start = nl + 1
      nl = s.indexOf("\n", start)
    }
    this.carry = s.slice(start)
    this.values = values
    this.at = 0
  }

  [Symbol.asyncIterator](): this {
    return this
  }
}

const uncounted = (): ReadCount => ({ reads: 0, bytes: 0 })

/** The parsed `data:` values of an SSE body, one `next()` each. */
export const floorEvents = (body: ReadableStream<Uint8Array>, count: ReadCount = uncounted()): AsyncIterableIterator<unknown> =>
  new FloorEvents(body.getReader(), count)

/** The same floor over any source of reads (a Node stream's async iterator, a queue of `'data'` events). */
export const floorEventsOf = (reads: BodyReads, count: ReadCount = uncounted()): AsyncIterableIterator<unknown> => new FloorEvents(reads, count)
