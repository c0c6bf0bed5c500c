import { anchorShapes } from "./shape-anchor.ts"
import { type CallLedger, flat, type ItemContext, isCacheable } from "./fragment-cache.ts"
import type { Item } from "./item.ts"
import { memoOf } from "./item-memo.ts"

/**
 * The assembled history of earlier requests, kept so a request that repeats an earlier one's items and adds a few
 * costs those few plus a concatenation (decision 0028).
 *
 * With per-item fragments alone (decision 0027) a request still visits every history item: a lookup, a context
 * check, and its place in the merging of same-role items. Here each scheme's assembly pass is a resumable fold
 * over the items: its state after a prefix of the items (the text of the messages already closed, the open
 * message's pieces, the calls recorded so far) is kept under the prefix's last item. A later request whose first
 * items are the very same objects (compared by identity, one by one), under the same tool-name map and the same
 * scheme variant (Anthropic: where the locked prefix ends), resumes from that state and folds only what follows.
 * The fold is the same code either way, so the bytes are those of a fold from the start.
 *
 * Two states are kept per request: after all its items (a conversation that grows: the next request adds the
 * response and the tool results) and before its last item (a request built again with another last item: the
 * cache lock's two probes, a rewritten prompt). Only prefixes of items that cannot change (`isCacheable`) are
 * kept.
 *
 * Bounded memory: states live under the prefix's last item (in its memo, `item-memo.ts`, or a `WeakMap` keyed by
 * it), so a dropped history takes them along, and a conversation keeps at most `MAX_PER_LINEAGE` (the least recently used is forgotten). A kept state
 * holds its prefix's items (to compare them) and the text of its closed messages: per live conversation, a few
 * copies of the references to its items and of its history's text. No `WeakRef`: a synchronous loop of encodes
 * would keep every referent alive until it ends.
 */

/**
 * States kept per conversation (a lineage of states, each resumed from an earlier one): the newest after a request,
 * the one before its last item, and a couple of older ones for a request that goes back (a retry, a rewritten turn).
 */
export const MAX_PER_LINEAGE = 4

/** Prefixes shorter than this are not kept (nor looked for): folding them afresh costs about as much. */
export const MIN_KEPT_PREFIX = 8

/** Ledger layers a context may stack before they are merged into one (lookups walk the layers). */
const MAX_LAYERS = 8

type Names = { toWire(name: string): string }

/** Calls recorded by a stretch of items; sealed (never written again) once a kept state refers to it. */
class Layer {
  /** Made on the first call recorded: most layers of a short fold record none. */
  own: Map<string, string> | undefined = undefined
  constructor(
    readonly parent: Layer | undefined,
    readonly depth: number
  ) {}
}

/** A fresh writable layer on top of `parent`; a deep stack is merged into one, newest values winning. */
const above = (parent: Layer | undefined): Layer => {
  if (parent === undefined) return new Layer(undefined, 0)
  if (parent.depth < MAX_LAYERS) return new Layer(parent, parent.depth + 1)
  const chain: Array<Layer> = []
  for (let layer: Layer | undefined = parent; layer !== undefined; layer = layer.parent) chain.push(layer)
  const merged = new Layer(undefined, 0)
  for (let i = chain.length - 1; i >= 0; i--) {
    const own = (chain[i] as Layer).own
    if (own !== undefined) for (const [id, value] of own) (merged.own ??= new Map()).set(id, value)
  }
  return merged
}

/**
 * The `ItemContext` of a resumable fold: the tool-name map and a ledger whose recorded calls can be sealed and
 * shared with a kept state, while the fold goes on writing above them.
 */
export class ResumableContext implements ItemContext, CallLedger {
  #top: Layer
  constructor(
    readonly names: Names,
    base?: Layer
  ) {
    this.#top = above(base)
  }
  get calls(): CallLedger {
    return this
  }
  toWire(name: string): string {
    return this.names.toWire(name)
  }
  has(callId: string): boolean {
    return this.get(callId) !== undefined
  }
  get(callId: string): string | undefined {
    for (let layer: Layer | undefined = this.#top; layer !== undefined; layer = layer.parent) {
      const value = layer.own?.get(callId)
      if (value !== undefined) return value
    }
    return undefined
  }
  set(callId: string, value: string): void {
    ;(this.#top.own ??= new Map()).set(callId, value)
  }
  /** What is recorded so far, for a kept state: never written again (later writes go to a new layer). */
  seal(): Layer | undefined {
    const top = this.#top
    if (top.own === undefined || top.own.size === 0) return top.parent
    this.#top = above(top)
    return top
  }
}

export type SealedCalls = Layer | undefined

/** A fold over a request's items that can be captured after any item and resumed from there. */
export interface HistoryFold<S> {
  /** Folds in `items[position]`. */
  add(items: ReadonlyArray<Item>, position: number): void
  /** The state so far, immutable: later `add`s do not change it. */
  capture(): S
  /** The JSON text of the history folded so far (the fold itself is left as it was). */
  text(items: ReadonlyArray<Item>): string
}

interface Snapshot<S> {
  /** The prefix the state was folded from (a copy: the caller's array may change). */
  readonly items: ReadonlyArray<Item>
  readonly names: object
  readonly variant: number
  readonly state: S
  readonly lineage: Lineage<S>
}

/**
 * The states kept along one conversation: folded from one start, each resumed from an earlier one. At most
 * `MAX_PER_LINEAGE`, the most recently used first; referred to only by its states, so it lives as they do.
 */
class Lineage<S> {
  readonly kept: Array<Snapshot<S>> = []
  use(snapshot: Snapshot<S>): void {
    const at = this.kept.indexOf(snapshot)
    if (at === 0) return
    if (at !== -1) this.kept.splice(at, 1)
    this.kept.unshift(snapshot)
  }
  drop(snapshot: Snapshot<S>): void {
    const at = this.kept.indexOf(snapshot)
    if (at !== -1) this.kept.splice(at, 1)
  }
}

const samePrefix = (prefix: ReadonlyArray<Item>, items: ReadonlyArray<Item>): boolean => {
  for (let i = 0; i < prefix.length; i++) if (prefix[i] !== items[i]) return false
  return true
}

/** One scheme instance's kept fold states (a scheme's options can change bytes, so each instance has its own). */
export class PrefixSnapshots<S> {
  /** States keyed by an item that has no memo, or whose memo another instance took first (`item-memo.ts`). */
  readonly #byLast = new WeakMap<Item, Array<Snapshot<S>>>()

  #kept(last: Item): Array<Snapshot<S>> | undefined {
    const memo = memoOf(last)
    return memo !== undefined && memo.snapshotOwner === this ? (memo.snapshots as Array<Snapshot<S>> | undefined) : this.#byLast.get(last)
  }

  #setKept(last: Item, kept: Array<Snapshot<S>> | undefined): void {
    const memo = memoOf(last)
    if (memo !== undefined && (memo.snapshotOwner === undefined || memo.snapshotOwner === this)) {
      memo.snapshotOwner = this
      memo.snapshots = kept
    } else if (kept === undefined) this.#byLast.delete(last)
    else this.#byLast.set(last, kept)
  }

  /**
   * The JSON text of `items` under `names` and `variant`: folded from the longest kept prefix (or from `start()`),
   * keeping the state before the last item and after it for later requests.
   */
  assemble(
    items: ReadonlyArray<Item>,
    names: object,
    variant: number,
    start: () => HistoryFold<S>,
    resume: (state: S) => HistoryFold<S>
  ): string {
    // A short history is folded from the start: keeping states would cost more than the few lookups it saves.
    if (items.length < MIN_KEPT_PREFIX) {
      const fold = start()
      for (let position = 0; position < items.length; position++) fold.add(items, position)
      return fold.text(items)
    }
    const found = this.#find(items, names, variant)
    const from = found?.items.length ?? 0
    let fold: HistoryFold<S>
    let lineage: Lineage<S>
    if (found === undefined) {
      fold = start()
      lineage = new Lineage<S>()
    } else {
      found.lineage.use(found)
      fold = resume(found.state)
      lineage = found.lineage
    }
    let cacheable = true
    for (let position = from; position < items.length; position++) {
      // Before the last item: the state a request with another last item resumes from.
      if (position === items.length - 1 && position > from && position >= MIN_KEPT_PREFIX && cacheable) this.#keep(items, position, names, variant, fold.capture(), lineage)
      fold.add(items, position)
      cacheable &&= isCacheable(items[position] as Item)
    }
    if (items.length > from && cacheable) this.#keep(items, items.length, names, variant, fold.capture(), lineage)
    return fold.text(items)
  }

  /** The kept state of the longest prefix of `items` (a few `WeakMap` lookups from the end, then one comparison). */
  #find(items: ReadonlyArray<Item>, names: object, variant: number): Snapshot<S> | undefined {
    for (let at = items.length; at >= MIN_KEPT_PREFIX; at--) {
      const kept = this.#kept(items[at - 1] as Item)
      if (kept === undefined) continue
      for (const snapshot of kept) {
        if (snapshot.items.length === at && snapshot.names === names && snapshot.variant === variant && samePrefix(snapshot.items, items)) {
          return snapshot
        }
      }
    }
    return undefined
  }

  #keep(items: ReadonlyArray<Item>, at: number, names: object, variant: number, state: S, lineage: Lineage<S>): void {
    const snapshot: Snapshot<S> = { items: items.slice(0, at), names, variant, state, lineage }
    const last = items[at - 1] as Item
    const kept = this.#kept(last)
    if (kept === undefined) this.#setKept(last, [snapshot])
    else {
      // One state per prefix and context: a newer fold of the same prefix replaces the older one.
      const same = kept.findIndex((s) => s.items.length === at && s.names === names && s.variant === variant)
      if (same !== -1) {
        const replaced = kept.splice(same, 1)[0] as Snapshot<S>
        replaced.lineage.drop(replaced)
      }
      kept.unshift(snapshot)
    }
    lineage.use(snapshot)
    if (lineage.kept.length > MAX_PER_LINEAGE) this.#forget(lineage.kept.pop() as Snapshot<S>)
  }

  #forget(snapshot: Snapshot<S>): void {
    const last = snapshot.items[snapshot.items.length - 1] as Item
    const kept = this.#kept(last)
    const at = kept === undefined ? -1 : kept.indexOf(snapshot)
    if (at === -1) return
    ;(kept as Array<Snapshot<S>>).splice(at, 1)
    if ((kept as Array<Snapshot<S>>).length === 0) this.#setKept(last, undefined)
  }
}

/**
 * Closed messages' text is appended to one string, which V8 keeps as a rope (a tree of the pieces); a kept state's
 * text with more pieces than this is flattened when a fold resumes from it.
 */
const FLATTEN_EVERY = 64

/**
 * The number of pieces a fold resuming from `closed` starts with. A long rope is flattened in place (`flat`): the
 * kept state's string is that same string, so this happens once per state, not once per request resumed from it.
 */
export const resumedPieces = (closed: string, pieces: number): number => {
  if (pieces < FLATTEN_EVERY) return pieces
  flat(closed)
  return 0
}

// Made per request or conversation and often all dead between runs: kept once so V8 keeps their shapes.
anchorShapes(new Lineage(), new ResumableContext({ toWire: (name) => name }))
