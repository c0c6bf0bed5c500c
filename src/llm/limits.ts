import type { BlockMeta, Event } from "./event.ts"
import { LlmLimitExceeded } from "./llm-error.ts"
import { utf8Length } from "../tool/output-limit.ts"

/**
 * Size bounds on one streamed response. A provider (or whatever answers at its URL) controls everything it
 * streams; without bounds, one response can take every byte of memory before anything downstream sees it.
 * Past a bound the response fails with `LlmLimitExceeded` (never retried: asking again invites the same answer).
 * The defaults are far above what any model produces today (128 k output tokens is about 0.5 MiB of text).
 */
export interface ResponseLimits {
  /** UTF-8 bytes of answer text (all text blocks together) in one response. */
  readonly maxTextBytes: number
  /** UTF-8 bytes of reasoning in one response: thinking text, plus a signature the provider streams in pieces. */
  readonly maxReasoningBytes: number
  /** UTF-8 bytes of one tool call's argument text. */
  readonly maxArgumentBytes: number
  /**
   * UTF-8 bytes of the argument text of all tool calls in one response together, counted as it streams (a call
   * cut short still counts; a call's final value, where the provider states one, replaces what its deltas counted).
   * Without it, many calls each under `maxArgumentBytes` add up to any size, all of it held and then sent back in
   * the next request (decision 0094).
   */
  readonly maxTotalArgumentBytes: number
  /**
   * UTF-8 bytes of output kept without being modelled (provider items, citations and provider reports: hosted
   * tools' calls and results, a fetched page, code output, moderation results) in one response, counted while it
   * streams as well as when it is whole.
   */
  readonly maxProviderBytes: number
  /**
   * Characters (UTF-16 code units, as the parser holds them) of one SSE event, its unfinished lines included:
   * a line that never ends cannot grow without bound. Must leave room for the largest whole value a provider
   * sends in one event (Gemini sends a call's arguments whole; Responses repeats them in `…done` events).
   */
  readonly maxEventChars: number
}

/** The name of one response bound, as `LlmLimitExceeded.limit` reports it. */
export type ResponseLimitName = keyof ResponseLimits

/** The bounds a client applies to each response unless `LlmClientOptions.limits` overrides them (docs/security.md). */
export const defaultResponseLimits: ResponseLimits = {
  maxTextBytes: 8 * 1024 * 1024,
  maxReasoningBytes: 8 * 1024 * 1024,
  maxArgumentBytes: 8 * 1024 * 1024,
  // Two calls at the per-call bound, 32 times what the largest model output (128 k tokens) can hold (decision 0094).
  maxTotalArgumentBytes: 16 * 1024 * 1024,
  maxProviderBytes: 8 * 1024 * 1024,
  maxEventChars: 16 * 1024 * 1024
}

const WHAT: Readonly<Record<ResponseLimitName, string>> = {
  maxTextBytes: "answer text",
  maxReasoningBytes: "reasoning",
  maxArgumentBytes: "tool call arguments",
  maxTotalArgumentBytes: "tool call arguments (all calls together)",
  maxProviderBytes: "provider output (hosted tools, citations)",
  maxEventChars: "one SSE event"
}

const UNIT: Readonly<Record<ResponseLimitName, string>> = {
  maxTextBytes: "bytes",
  maxReasoningBytes: "bytes",
  maxArgumentBytes: "bytes",
  maxTotalArgumentBytes: "bytes",
  maxProviderBytes: "bytes",
  maxEventChars: "characters"
}

/** The error for a bound that was passed; `seen` is how much had arrived when it was noticed (at least max + 1). */
export const limitExceeded = (limit: ResponseLimitName, max: number, seen: number, detail = ""): LlmLimitExceeded =>
  new LlmLimitExceeded({
    limit,
    max,
    seen,
    message: `The response exceeded ${limit} = ${max}: ${seen} ${UNIT[limit]} of ${WHAT[limit]}${detail} (raise limits.${limit} if this is expected)`
  })


/**
 * The count of one response's argument text that its decoder consults for what it holds back (argument text
 * that arrived before its call's name, a call streamed in pieces) before passing it on as events: held and passed
 * on together stay within `maxTotalArgumentBytes`, so the text held back cannot grow past the bound either.
 */
export interface ArgumentTally {
  /**
   * Throws `LlmLimitExceeded` (`limit: "maxTotalArgumentBytes"`) when `heldBytes` (all the argument text the
   * decoder holds back now) and the argument text already passed on exceed the bound; `detail` says where.
   */
  checkHeld(heldBytes: number, detail: string): void
}

/** The tally of a decoder used on its own, with no transport counting what it passed on: held text alone counts. */
export const heldOnlyTally = (limits: ResponseLimits): ArgumentTally => ({
  checkHeld(heldBytes, detail) {
    if (heldBytes > limits.maxTotalArgumentBytes) throw limitExceeded("maxTotalArgumentBytes", limits.maxTotalArgumentBytes, heldBytes, detail)
  }
})

/**
 * Counts what one response has streamed so far and throws `LlmLimitExceeded` on the event that would pass a
 * bound, before anyone downstream holds it. Argument bytes are counted per block (one block is one call; block
 * indices are never reused within a response) and over the whole response. A block stop with a final value
 * replaces what the block's deltas counted by the final value's size, since that value is what consumers keep
 * (`block_stop.final`). It is also the decoder's `ArgumentTally`: what the decoder holds back counts with what
 * this meter has seen.
 */
export class ResponseMeter implements ArgumentTally {
  private textBytes = 0
  private reasoningBytes = 0
  private providerBytes = 0
  /** Argument bytes of every call of the response together (`maxTotalArgumentBytes`). */
  private argumentTotal = 0
  private calls = 0
  private readonly argumentBytes = new Map<number, number>()
  /** Bytes each open text or thinking block has streamed, to swap for its final value's size at its stop. */
  private readonly blockBytes = new Map<number, number>()
  private readonly kinds = new Map<number, BlockMeta["kind"]>()

  constructor(private readonly limits: ResponseLimits) {}

  check(event: Event): void {
    switch (event.type) {
      case "block_start":
        this.kinds.set(event.index, event.block.kind)
        if (event.block.kind === "tool_use") this.calls++
        return
      case "block_stop":
        if (event.final !== undefined) this.checkFinal(event.index, event.final)
        this.forget(event.index)
        return
      case "block_abort":
        this.forget(event.index)
        return
      case "provider_output":
        return this.countProvider(event.item.json)
      case "citation":
        return this.countProvider(event.citation.json)
      case "provider_meta":
        return this.countProvider(event.meta.json)
      case "block_delta": {
        const delta = event.delta
        if (delta.kind === "text") {
          const bytes = utf8Length(delta.text)
          this.blockBytes.set(event.index, (this.blockBytes.get(event.index) ?? 0) + bytes)
          this.textBytes += bytes
          if (this.textBytes > this.limits.maxTextBytes) throw limitExceeded("maxTextBytes", this.limits.maxTextBytes, this.textBytes)
        } else if (delta.kind === "thinking") {
          const bytes = utf8Length(delta.text)
          this.blockBytes.set(event.index, (this.blockBytes.get(event.index) ?? 0) + bytes)
          this.reasoningBytes += bytes
          if (this.reasoningBytes > this.limits.maxReasoningBytes) {
            throw limitExceeded("maxReasoningBytes", this.limits.maxReasoningBytes, this.reasoningBytes)
          }
        } else {
          const added = utf8Length(delta.json)
          const bytes = (this.argumentBytes.get(event.index) ?? 0) + added
          this.argumentBytes.set(event.index, bytes)
          if (bytes > this.limits.maxArgumentBytes) {
            throw limitExceeded("maxArgumentBytes", this.limits.maxArgumentBytes, bytes, ` in block ${event.index}`)
          }
          this.argumentTotal += added
          if (this.argumentTotal > this.limits.maxTotalArgumentBytes) throw this.totalExceeded(this.argumentTotal)
        }
        return
      }
      default:
        return
    }
  }

  private checkFinal(index: number, final: string): void {
    const bytes = utf8Length(final)
    switch (this.kinds.get(index)) {
      case "text":
        this.textBytes += bytes - (this.blockBytes.get(index) ?? 0)
        if (this.textBytes > this.limits.maxTextBytes) throw limitExceeded("maxTextBytes", this.limits.maxTextBytes, this.textBytes)
        return
      case "thinking":
        this.reasoningBytes += bytes - (this.blockBytes.get(index) ?? 0)
        if (this.reasoningBytes > this.limits.maxReasoningBytes) {
          throw limitExceeded("maxReasoningBytes", this.limits.maxReasoningBytes, this.reasoningBytes)
        }
        return
      case "tool_use":
        if (bytes > this.limits.maxArgumentBytes) {
          throw limitExceeded("maxArgumentBytes", this.limits.maxArgumentBytes, bytes, ` in block ${index}`)
        }
        this.argumentTotal += bytes - (this.argumentBytes.get(index) ?? 0)
        if (this.argumentTotal > this.limits.maxTotalArgumentBytes) throw this.totalExceeded(this.argumentTotal)
        return
      default:
        return
    }
  }

  checkHeld(heldBytes: number, detail: string): void {
    const seen = this.argumentTotal + heldBytes
    if (seen > this.limits.maxTotalArgumentBytes) throw this.totalExceeded(seen, detail)
  }

  /** `detail` says where held text is; without it, the calls counted so far (a call held back has no block yet). */
  private totalExceeded(seen: number, detail?: string): LlmLimitExceeded {
    const where = detail ?? ` over ${this.calls === 1 ? "1 call" : `${this.calls} calls`}`
    return limitExceeded("maxTotalArgumentBytes", this.limits.maxTotalArgumentBytes, seen, where)
  }

  private forget(index: number): void {
    this.argumentBytes.delete(index)
    this.blockBytes.delete(index)
    this.kinds.delete(index)
  }

  private countProvider(json: string): void {
    this.providerBytes += utf8Length(json)
    if (this.providerBytes > this.limits.maxProviderBytes) {
      throw limitExceeded("maxProviderBytes", this.limits.maxProviderBytes, this.providerBytes)
    }
  }
}
