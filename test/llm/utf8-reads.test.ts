import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { createUtf8Reads } from "../../src/llm/transport/utf8-reads.ts"
import { cutBytes } from "../support/cut.ts"


/** The reference: Node's streaming decoder, read by read, never flushed (as the transport used it). */
const streaming = (reads: ReadonlyArray<Uint8Array>): ReadonlyArray<string> => {
  const decoder = new TextDecoder()
  return reads.map((read) => decoder.decode(read, { stream: true }))
}

const ours = (reads: ReadonlyArray<Uint8Array>): ReadonlyArray<string> => {
  const decoder = createUtf8Reads()
  return reads.map((read) => decoder.decode(read))
}

const BOM = [0xef, 0xbb, 0xbf]
/** Bytes that stress the decoder: every lead, continuation and invalid byte class, BOMs, text. */
const piece = fc.oneof(
  fc.string({ unit: "binary", maxLength: 6 }).map((s) => [...new TextEncoder().encode(s)]),
  fc.constantFrom(BOM, [0xe0, 0xa0], [0xe0, 0x80], [0xed, 0xa0, 0x80], [0xed, 0x9f], [0xf0, 0x90, 0x80], [0xf0, 0x8f], [0xf4, 0x90], [0xf4, 0x8f, 0xbf], [0xc0, 0x80], [0xc1], [0xf5], [0xff], [0x80], [0xbf, 0xbf]),
  fc.array(fc.integer({ min: 0, max: 255 }), { maxLength: 4 })
)
const bytes = fc.array(piece, { maxLength: 12 }).map((pieces) => Uint8Array.from(pieces.flat()))

describe("createUtf8Reads", () => {
  it("gives the streaming decoder's text for every read, however the bytes are cut (property)", () => {
    fc.assert(
      fc.property(bytes, fc.array(fc.nat(), { maxLength: 8 }), (input, points) => {
        const reads = cutBytes(input, points)
        expect(ours(reads)).toEqual(streaming(reads))
      }),
      { numRuns: 2000 }
    )
  })

  it("holds back a character cut by a read, and drops the byte order mark only at the start", () => {
    const text = new TextEncoder().encode("\uFEFFa€b😀\uFEFFc")
    const reads = Array.from(text, (byte) => Uint8Array.of(byte))
    expect(ours(reads).join("")).toBe("a€b😀\uFEFFc")
    expect(ours(reads)).toEqual(streaming(reads))
    expect(ours([Uint8Array.of(0x61), Uint8Array.from(BOM), Uint8Array.of(0x62)])).toEqual(["a", "\uFEFF", "b"])
  })
})
