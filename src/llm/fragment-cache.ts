import { anchorShapes } from "./shape-anchor.ts"
import type { Item } from "./item.ts"
import { memoOf } from "./item-memo.ts"

/**
 * Encoded history fragments, kept per item so a request costs its new items plus a concatenation (decision 0027).
 *
 * A scheme encodes an item into a fragment (JSON text, or a few pieces of it) through an `ItemContext`: the only
 * things besides the item that an item's bytes may depend on are the wire spelling of tool names and what earlier
 * items of the same request recorded about their calls (Anthropic leaves out an output whose call is not in the
 * history; Gemini names a function response after its call). While a fragment is built, the context records every
 * answer it gave and every call the item recorded. A cached fragment is reused only where the current context
 * gives the same answers, and its recorded calls are replayed, so the bytes are those the item would encode to
 * here — whatever the item's kind, with no per-kind rules in the cache. Everything positional (merging consecutive
 * same-role items, Anthropic's cache breakpoints) stays in each scheme's assembly pass, over fragments.
 *
 * Bounded memory: entries live on the item (its private memo, `item-memo.ts`, for the items the Worker owns) or in
 * a `WeakMap` keyed by it, so a dropped history takes its fragments with it; they hold no item, and an item keeps
 * at most `MAX_VARIANTS` contexts per cache. Only items that cannot change are cached (see `isCacheable`): the
 * Worker's history items are frozen deep copies; a caller's plain object may be edited in place and is encoded
 * afresh on every request.
 */

/** The calls earlier items of the request recorded: call id → a value the scheme chooses (Gemini: the wire name). */
export interface CallLedger {
  has(callId: string): boolean
  get(callId: string): string | undefined
  set(callId: string, value: string): void
}

/** What an item's encoding may read besides the item itself. */
export interface ItemContext {
  toWire(name: string): string
  readonly calls: CallLedger
}

type Names = { toWire(name: string): string }

/** The calls of one request, in a `Map`. */
class Ledger implements CallLedger {
  readonly #calls = new Map<string, string>()
  has(callId: string): boolean {
    return this.#calls.has(callId)
  }
  get(callId: string): string | undefined {
    return this.#calls.get(callId)
  }
  set(callId: string, value: string): void {
    this.#calls.set(callId, value)
  }
}

/** Classes, not closures: a context is made for every request and for every fragment built. */
class PlainContext implements ItemContext {
  readonly calls = new Ledger()
  constructor(readonly names: Names) {}
  toWire(name: string): string {
    return this.names.toWire(name)
  }
}

/** The context of one encoding pass: the tool-name map and a fresh ledger. */
export const plainContext = (names: Names): ItemContext => new PlainContext(names)

/**
 * `text` as one flat string. `jsonBody` builds its text by concatenation, which V8 keeps as a tree of pieces (a
 * rope); joining a thousand ropes walks every tree on every request, about five times slower than joining flat
 * strings. Converting a string to a number flattens it in place (the number itself is discarded), once, when
 * the fragment is cached. Only speed depends on this; the text is unchanged.
 */
export const flat = (text: string): string => {
  Number(text)
  return text
}

/** Different contexts one item is kept for (a tool-set change, an output before and after its call is known). */
export const MAX_VARIANTS = 4

/** Objects visited when deciding whether an item is deeply immutable; a larger item is simply not cached. */
const MAX_CHECKED_NODES = 10_000

interface Entry<F> {
  readonly fragment: F
  /** Flat pairs: neutral tool name, the wire name it was given. */
  readonly wire: ReadonlyArray<string>
  /** Flat pairs: call id, what the ledger answered (undefined: no such call). */
  readonly reads: ReadonlyArray<string | undefined>
  /** Flat pairs: call id, value recorded. */
  readonly writes: ReadonlyArray<string>
  /** For a fragment built from several items (a Chat assistant message): the identity of each after the first. */
  readonly group: ReadonlyArray<number> | undefined
}

/** Items not stamped (a caller's own frozen objects) found deeply immutable; freezing is permanent, so a yes never goes stale. */
const immutable = new WeakSet<object>()

/**
 * Whether nothing reachable from the item can change: every object frozen and every property a plain data
 * property (a frozen object's getter may still answer differently each time). A Proxy cannot lie here: the
 * language's invariants make a frozen target's proxy report the target's own values. An item with a memo is a
 * deep-frozen copy the Worker made of data properties only (`ownItem`): it is not walked.
 */
export const isCacheable = (item: Item): boolean => memoOf(item) !== undefined || isDeeplyImmutable(item)

/**
 * Whether nothing reachable from `value` can change (every object frozen, every property a plain data property),
 * remembered for the objects found so. For any value an encoder keeps text for by identity: items, a request's
 * config (`envelope-cache.ts`).
 */
export const isDeeplyImmutable = (value: object): boolean => {
  if (immutable.has(value)) return true
  if (!Object.isFrozen(value)) return false
  const stack: Array<object> = [value]
  let visited = 0
  while (stack.length > 0) {
    const node = stack.pop() as object
    if (++visited > MAX_CHECKED_NODES || !Object.isFrozen(node)) return false
    const descriptors = Object.getOwnPropertyDescriptors(node)
    for (const key of Reflect.ownKeys(descriptors)) {
      const descriptor = descriptors[key as keyof typeof descriptors] as PropertyDescriptor
      if (!("value" in descriptor)) return false
      const child: unknown = descriptor.value
      if ((typeof child === "object" && child !== null) || typeof child === "function") {
        if (typeof child === "function") return false
        stack.push(child)
      }
    }
  }
  immutable.add(value)
  return true
}

/** Identities for items of multi-item fragments: numbers, so an entry can name its group without holding it. */
const identities = new WeakMap<object, number>()
let nextIdentity = 1
const identity = (item: Item): number => {
  const memo = memoOf(item)
  if (memo !== undefined) {
    if (memo.identity === 0) memo.identity = nextIdentity++
    return memo.identity
  }
  let id = identities.get(item)
  if (id === undefined) {
    id = nextIdentity++
    identities.set(item, id)
  }
  return id
}

/** The identity `identity` gave the item, if it gave one. */
const knownIdentity = (item: Item): number | undefined => {
  const memo = memoOf(item)
  return memo === undefined ? identities.get(item) : memo.identity === 0 ? undefined : memo.identity
}

const sameGroup = (group: ReadonlyArray<number> | undefined, items: ReadonlyArray<Item>, start: number, end: number): boolean => {
  if (group === undefined) return end - start === 1
  if (group.length !== end - start - 1) return false
  for (let i = start + 1; i < end; i++) if (knownIdentity(items[i] as Item) !== group[i - start - 1]) return false
  return true
}

const matches = <F>(entry: Entry<F>, context: ItemContext, items: ReadonlyArray<Item>, start: number, end: number): boolean => {
  const { wire, reads } = entry
  for (let i = 0; i < wire.length; i += 2) if (context.toWire(wire[i] as string) !== wire[i + 1]) return false
  for (let i = 0; i < reads.length; i += 2) if (context.calls.get(reads[i] as string) !== reads[i + 1]) return false
  return sameGroup(entry.group, items, start, end)
}

const allCacheable = (items: ReadonlyArray<Item>, start: number, end: number): boolean => {
  for (let i = start; i < end; i++) if (!isCacheable(items[i] as Item)) return false
  return true
}

const NOTHING: ReadonlyArray<never> = Object.freeze([])

/** A context that answers from `context` and writes down what it answered and what was recorded. */
class Recording implements ItemContext, CallLedger {
  wire: Array<string> | undefined
  reads: Array<string | undefined> | undefined
  writes: Array<string> | undefined
  constructor(readonly context: ItemContext) {}
  get calls(): CallLedger {
    return this
  }
  toWire(name: string): string {
    const answer = this.context.toWire(name)
    ;(this.wire ??= []).push(name, answer)
    return answer
  }
  has(callId: string): boolean {
    return this.get(callId) !== undefined
  }
  get(callId: string): string | undefined {
    const answer = this.context.calls.get(callId)
    ;(this.reads ??= []).push(callId, answer)
    return answer
  }
  set(callId: string, value: string): void {
    ;(this.writes ??= []).push(callId, value)
    this.context.calls.set(callId, value)
  }
}

/** One scheme instance's fragments (a scheme's options can change bytes, so each instance has its own). */
export class FragmentCache<F> {
  /** Entries of the items that have no memo, or whose memo another cache instance took first. */
  readonly #entries = new WeakMap<Item, Array<Entry<F>>>()

  #variants(item: Item): Array<Entry<F>> | undefined {
    const memo = memoOf(item)
    return memo !== undefined && memo.fragmentOwner === this ? (memo.fragments as Array<Entry<F>>) : this.#entries.get(item)
  }

  #setVariants(item: Item, variants: Array<Entry<F>>): void {
    const memo = memoOf(item)
    if (memo !== undefined && (memo.fragmentOwner === undefined || memo.fragmentOwner === this)) {
      memo.fragmentOwner = this
      memo.fragments = variants
    } else this.#entries.set(item, variants)
  }

  /**
   * The fragment of `items[start]` — or of `items[start..end)` when several items make one fragment (a Chat
   * assistant message) — in `context`: cached when an earlier encoding of the same items saw the same answers
   * (its recorded calls are replayed into `context`), else `build(context, input, items, start, end)`, kept when
   * the items are immutable. `build` takes everything as arguments, so callers pass one function, not a closure
   * per item: this runs for every item of every request.
   */
  fragment<I>(
    items: ReadonlyArray<Item>,
    start: number,
    end: number,
    context: ItemContext,
    build: (context: ItemContext, input: I, items: ReadonlyArray<Item>, start: number, end: number) => F,
    input: I
  ): F {
    const item = items[start] as Item
    const variants = this.#variants(item)
    if (variants !== undefined) {
      for (const entry of variants) {
        if (!matches(entry, context, items, start, end)) continue
        const { writes } = entry
        for (let i = 0; i < writes.length; i += 2) context.calls.set(writes[i] as string, writes[i + 1] as string)
        return entry.fragment
      }
    }
    if (!allCacheable(items, start, end)) return build(context, input, items, start, end)
    const recorded = new Recording(context)
    const fragment = build(recorded, input, items, start, end)
    const entry: Entry<F> = {
      fragment,
      wire: recorded.wire ?? NOTHING,
      reads: recorded.reads ?? NOTHING,
      writes: recorded.writes ?? NOTHING,
      group: end - start === 1 ? undefined : items.slice(start + 1, end).map(identity)
    }
    if (variants === undefined) this.#setVariants(item, [entry])
    else {
      // Newest first: the context an item was last seen in is the likeliest next time.
      variants.unshift(entry)
      if (variants.length > MAX_VARIANTS) variants.length = MAX_VARIANTS
    }
    return fragment
  }
}

// Made per item encoded: kept once so V8 keeps its shapes (`shape-anchor.ts`).
anchorShapes(new Recording(plainContext({ toWire: (name) => name })))
