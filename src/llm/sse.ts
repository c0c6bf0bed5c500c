import { defaultResponseLimits, limitExceeded } from "./limits.ts"
import type { SseMessage } from "./scheme.ts"

/**
 * An incremental SSE parser (the WHATWG `EventSource` line rules) that hands each read's completed messages back
 * as one batch. Feed text chunks as they arrive. `retry:` directives are ignored: providers do not use them and
 * reconnection is the transport's decision. Comments (keep-alives) never become messages; unknown fields are
 * ignored, as the spec says. An event without a name is a `message`; `id` is the last `id:` of an event that
 * became a message (as the parser this one replaced reported it). A CR ends its line at once, even at the end of
 * a chunk; an LF starting the next chunk completes that CRLF. A leading byte order mark is stripped once, for
 * callers that feed text they decoded themselves.
 *
 * The pending event (its data so far plus an unfinished line) is bounded by `maxEventChars`: a runaway event or
 * a line that never ends throws `LlmLimitExceeded` instead of growing the buffer. The bound is checked after
 * every chunk, so the error's `seen` is `maxEventChars + 1`; after it the parser refuses further input.
 *
 * Written for the stream's per-read path (decision 0088; it replaced `eventsource-parser`, decision 0070): a data
 * line cut by a read is joined from its two pieces only (a read without a line end is queued, so a line that
 * never ends costs linear time), a one-line `data:` event becomes its message without an intermediate object,
 * and a read that completes nothing returns a shared empty batch.
 */
export interface SseParser {
  /** Parses a chunk and returns the messages it completed (possibly none). */
  feed(chunk: string): ReadonlyArray<SseMessage>
}

const BOM = 0xfeff
const LF = 10
const CR = 13
const COLON = 58
const SPACE = 32

const NOTHING: ReadonlyArray<SseMessage> = Object.freeze([])

/** Whether the line at `at` starts with `data:` (the common line, checked before the general field split). */
const isDataLine = (text: string, at: number): boolean =>
  text.charCodeAt(at) === 100 &&
  text.charCodeAt(at + 1) === 97 &&
  text.charCodeAt(at + 2) === 116 &&
  text.charCodeAt(at + 3) === 97 &&
  text.charCodeAt(at + 4) === COLON

/** Whether the line at `at` starts with `event:`. */
const isEventLine = (text: string, at: number): boolean =>
  text.charCodeAt(at) === 101 &&
  text.charCodeAt(at + 1) === 118 &&
  text.charCodeAt(at + 2) === 101 &&
  text.charCodeAt(at + 3) === 110 &&
  text.charCodeAt(at + 4) === 116 &&
  text.charCodeAt(at + 5) === COLON

/** An incremental SSE parser whose pending event is bounded by `maxEventChars` (see `SseParser`). */
export const createSseParser = (maxEventChars: number = defaultResponseLimits.maxEventChars): SseParser =>
  new IncrementalSse(maxEventChars)

class IncrementalSse implements SseParser {
  /** The unfinished line after the last line end, when it is one piece. */
  private pending = ""
  /** The unfinished line in pieces, once reads without a line end follow it (joined when a line end arrives). */
  private parts: Array<string> | undefined
  private partsLength = 0
  /** The event being read: its data lines joined by LF, how many there were, its name and its `id:` field. */
  private data = ""
  private dataLines = 0
  private eventName: string | undefined
  private eventId: string | undefined
  /** The id messages carry: the last `id:` of an event that became a message. */
  private lastEventId: string | undefined
  /** The previous chunk ended with CR: an LF starting this one completes that CRLF. */
  private afterCr = false
  private first = true
  private refused = false
  private batch: Array<SseMessage> | undefined

  constructor(private readonly maxEventChars: number) {}

  feed(chunk: string): ReadonlyArray<SseMessage> {
    if (this.refused) throw this.refuse()
    if (chunk.length === 0) return NOTHING
    let from = 0
    if (this.first) {
      this.first = false
      // A decoder reading bytes strips the BOM itself; a caller feeding text may not have.
      if (chunk.charCodeAt(0) === BOM) from = 1
    }
    if (this.afterCr) {
      this.afterCr = false
      if (chunk.charCodeAt(from) === LF) from++
    }
    // Whether the chunk may hold a CR: most streams have none, and a search that found none needs no repeating.
    let mayHaveCr = true
    if (this.parts !== undefined || this.pending !== "") {
      const lf = chunk.indexOf("\n", from)
      const cr = chunk.indexOf("\r", from)
      const end = cr === -1 ? lf : lf === -1 || cr < lf ? cr : lf
      if (end === -1) return this.queue(from === 0 ? chunk : chunk.slice(from))
      mayHaveCr = cr !== -1
      from = this.cutLine(chunk, from, end)
    }
    this.lines(chunk, from, mayHaveCr)
    if (this.pending.length + this.data.length > this.maxEventChars) return this.overflow()
    const out = this.batch
    if (out === undefined) return NOTHING
    this.batch = undefined
    return out
  }

  /** A chunk without a line end only extends the unfinished line: kept in pieces, so a long line is copied once. */
  private queue(piece: string): ReadonlyArray<SseMessage> {
    if (this.parts === undefined) {
      this.parts = [this.pending]
      this.partsLength = this.pending.length
      this.pending = ""
    }
    this.parts.push(piece)
    this.partsLength += piece.length
    if (this.partsLength + this.data.length > this.maxEventChars) return this.overflow()
    return NOTHING
  }

  private overflow(): never {
    this.refused = true
    this.parts = undefined
    this.pending = ""
    this.data = ""
    this.batch = undefined
    throw this.refuse()
  }

  private refuse() {
    return limitExceeded("maxEventChars", this.maxEventChars, this.maxEventChars + 1)
  }

  /**
   * Reads every complete line of `text` from `from`; what follows the last line end stays pending. The next LF
   * and CR are each searched for again only once passed, so a chunk is scanned in linear time whatever mix of
   * line ends it holds.
   */
  private lines(text: string, from: number, mayHaveCr: boolean): void {
    let start = from
    let lf = text.indexOf("\n", start)
    let cr = mayHaveCr ? text.indexOf("\r", start) : -1
    for (;;) {
      if (lf !== -1 && lf < start) lf = text.indexOf("\n", start)
      if (cr !== -1 && cr < start) cr = text.indexOf("\r", start)
      const end = cr === -1 ? lf : lf === -1 || cr < lf ? cr : lf
      if (end === -1) break
      let next = end + 1
      if (end === cr) {
        if (next === text.length) this.afterCr = true
        else if (text.charCodeAt(next) === LF) next++
      }
      if (end === start) this.dispatch()
      else if (isDataLine(text, start)) {
        if (this.dataValue(text.slice(text.charCodeAt(start + 5) === SPACE ? start + 6 : start + 5, end), text.charCodeAt(next) === LF)) next++
      } else if (isEventLine(text, start)) this.eventName = this.nameAt(text, text.charCodeAt(start + 6) === SPACE ? start + 7 : start + 6, end)
      else this.field(text, start, end)
      start = next
    }
    if (start < text.length) this.pending = text.slice(start)
  }

  /**
   * The line the pending text began, which `chunk` ends at `end` (its CR or LF); returns where the rest of the
   * chunk starts. A data line's value is joined from its pieces without reading the joined text: JSON.parse
   * flattens it in one copy, where a search or a slice of the joined text would first flatten head and chunk
   * together (a runtime call and a copy of the whole read, on every read a line was cut by). A data line longer
   * than a read (its head, a read without a line end, the read that ends it: OpenAI and Gemini chunks with 256 B
   * reads) is joined the same way from those three pieces, so it too is copied once (decision 0090). Many reads
   * without a line end (a 7 MiB tool call) are appended one by one, not joined first: a join was a second copy
   * of the whole value, and held a host's event loop ~20 ms longer per 7 MiB (`npm run bench -- host-attacks`).
   */
  private cutLine(chunk: string, from: number, end: number): number {
    const parts = this.parts
    const first = parts === undefined ? this.pending : (parts[0] as string)
    this.parts = undefined
    this.partsLength = 0
    this.pending = ""
    let next = end + 1
    if (chunk.charCodeAt(end) === CR) {
      if (next === chunk.length) this.afterCr = true
      else if (chunk.charCodeAt(next) === LF) next++
    }
    if (first.length > 5 && isDataLine(first, 0)) {
      let value = first.charCodeAt(5) === SPACE ? first.slice(6) : first.slice(5)
      // Appended piece by piece: the pieces stay unjoined until the value is first read, which copies it once.
      if (parts !== undefined) for (let i = 1; i < parts.length; i++) value += parts[i] as string
      value += chunk.slice(from, end)
      if (this.dataValue(value, chunk.charCodeAt(next) === LF)) next++
      return next
    }
    // Any other line (short, or not data): read whole.
    const line = (parts === undefined ? first : parts.join("")) + chunk.slice(from, end)
    this.lines(`${line}\n`, 0, false)
    return next
  }

  /**
   * One data line's value. The usual event, one data line and the blank line after it (`blankNext`), becomes its
   * message at once; returns whether it did (the caller then skips that blank line).
   */
  private dataValue(value: string, blankNext: boolean): boolean {
    if (this.dataLines === 0 && blankNext) {
      this.emit(value)
      this.eventName = undefined
      this.eventId = undefined
      return true
    }
    this.data = this.dataLines === 0 ? value : `${this.data}\n${value}`
    this.dataLines++
    return false
  }

  /** A line other than `data:` and a blank one: `event`, `id`, `data` without a colon, a comment, or ignored. */
  private field(text: string, start: number, end: number): void {
    if (text.charCodeAt(start) === COLON) return
    // The colon is looked for within the line only: a search past its end would make a chunk of short lines quadratic.
    let nameEnd = start
    while (nameEnd < end && text.charCodeAt(nameEnd) !== COLON) nameEnd++
    let valueStart = nameEnd === end ? end : nameEnd + 1
    if (valueStart < end && text.charCodeAt(valueStart) === SPACE) valueStart++
    switch (text.slice(start, nameEnd)) {
      case "event":
        this.eventName = this.nameAt(text, valueStart, end)
        return
      case "data":
        this.dataValue(text.slice(valueStart, end), false)
        return
      case "id": {
        const value = text.slice(valueStart, end)
        // The spec ignores an id with a NUL in it.
        if (!value.includes("\0")) this.eventId = value
        return
      }
      default:
        // `retry` and unknown fields: ignored.
        return
    }
  }

  /** The event name in `text` from `start` to `end` (none when empty). */
  private nameAt(text: string, start: number, end: number): string | undefined {
    return start === end ? undefined : text.slice(start, end)
  }

  /** The blank line: the event read so far becomes a message, if it had data. */
  private dispatch(): void {
    if (this.dataLines > 0) {
      this.emit(this.data)
      this.data = ""
      this.dataLines = 0
    }
    this.eventName = undefined
    this.eventId = undefined
  }

  private emit(data: string): void {
    if (this.eventId !== undefined) this.lastEventId = this.eventId
    const event = this.eventName ?? "message"
    const id = this.lastEventId
    const message: SseMessage = id === undefined ? { event, data } : { event, data, id }
    if (this.batch === undefined) this.batch = [message]
    else this.batch.push(message)
  }
}

/** Parses a whole SSE document (a recorded transcript, for instance). A trailing event without a blank line is dropped, as the SSE spec requires. */
export const parseSseText = (text: string): ReadonlyArray<SseMessage> => createSseParser().feed(text)
