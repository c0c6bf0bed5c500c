/**
 * Text of a byte stream read by read, as `new TextDecoder().decode(bytes, { stream: true })` gives it, at the
 * speed of a whole-buffer decode. Node's decoder leaves its fast UTF-8 path for good once `stream: true` is
 * passed (about 5× slower on 16 KiB reads, 3× on 256 B reads, decision 0075), so the streaming is done here:
 * each read is decoded whole up to the last complete sequence, and the bytes of a character cut by the read
 * (at most three) wait for the next one.
 *
 * The text is the same as the streaming decoder's, malformed bytes included: a read is cut only just before a
 * lead byte, where the WHATWG decoder starts afresh whatever came before (a sequence it interrupts is replaced
 * by one U+FFFD either way). A byte order mark is dropped at the start of the stream only, as the streaming
 * decoder does; bytes left over when the stream ends are dropped (the transport never flushes: an event cut
 * there is incomplete anyway).
 */
export interface Utf8Reads {
  /** The text of `bytes`, minus a character they end inside of, plus the one the previous read ended inside of. */
  decode(bytes: Uint8Array): string
}

/** Strips a leading byte order mark, which only the first read may do. */
const fast = new TextDecoder()
/** Keeps it: a read after the first that starts with one carries an ordinary U+FEFF. */
const keepingBom = new TextDecoder("utf-8", { ignoreBOM: true })

/** The range the byte after `lead` must fall in for the WHATWG decoder to wait for more (it rejects others at once). */
const secondByteFits = (lead: number, byte: number): boolean => {
  if (lead === 0xe0) return byte >= 0xa0 && byte <= 0xbf
  if (lead === 0xed) return byte >= 0x80 && byte <= 0x9f
  if (lead === 0xf0) return byte >= 0x90 && byte <= 0xbf
  if (lead === 0xf4) return byte >= 0x80 && byte <= 0x8f
  return byte >= 0x80 && byte <= 0xbf
}

/**
 * The length of the longest prefix of `bytes` the streaming decoder would decode now: all of them, unless they
 * end inside a sequence that is valid so far (which it holds back for the next read). A sequence already
 * malformed it reports at once, and so does a whole-buffer decode.
 */
export const completeLength = (bytes: Uint8Array): number => {
  const n = bytes.length
  for (let back = 1; back <= 3 && back <= n; back++) {
    const lead = bytes[n - back] as number
    if (lead < 0x80) return n
    if (lead < 0xc0) continue // a continuation byte: the lead is further back
    const length = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : 2
    if (back >= length || lead < 0xc2 || lead > 0xf4) return n
    if (back > 1 && !secondByteFits(lead, bytes[n - back + 1] as number)) return n
    return n - back
  }
  return n
}

const startsWithBom = (bytes: Uint8Array): boolean => bytes.length >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf

/** A fresh decoder for one byte stream (see `Utf8Reads`). */
export const createUtf8Reads = (): Utf8Reads => {
  let carry: Uint8Array | undefined
  let started = false
  return {
    decode(bytes) {
      let input = bytes
      if (carry !== undefined) {
        input = new Uint8Array(carry.length + bytes.length)
        input.set(carry)
        input.set(bytes, carry.length)
        carry = undefined
      }
      // A read ending in ASCII (nearly every read of a JSON stream) is whole; the look back is for the others.
      const last = input.length - 1
      const complete = last < 0 || (input[last] as number) < 0x80 ? input.length : completeLength(input)
      if (complete < input.length) {
        carry = input.slice(complete)
        input = input.subarray(0, complete)
      }
      if (input.length === 0) return ""
      const decoder = started && startsWithBom(input) ? keepingBom : fast
      started = true
      return decoder.decode(input)
    }
  }
}
