/**
 * What the encoders remember about one history item the Worker owns, kept ON the item in a private field rather
 * than in `WeakMap`s keyed by it (decision 0079).
 *
 * A history item lives for a run or a conversation, and the encoders used to keep four facts about it in weak
 * tables: that it is owned, that it is deeply immutable, its encoded fragments, its checked call arguments (plus
 * the prefix states kept under it). In V8 every weak-table entry whose key is young makes each scavenge do extra
 * work until the key dies, and a turn loop makes such entries by the dozen per run: measured, an entry costs
 * about as much as the whole rest of an item's encoding. A private field is an ordinary slot on the object,
 * invisible to every other module and to reflection (`Object.getOwnPropertySymbols`, `Reflect.ownKeys`, spread,
 * `structuredClone` and `JSON.stringify` do not see it), so a holder of the item can neither read nor forge it.
 * Freezing does not touch private fields; the slot is added before the item is frozen all the same.
 *
 * Only items stamped here have a memo; anything else (a caller's own object) goes through the `WeakMap` paths
 * that remain next to each use.
 */
export class ItemMemo {
  /** The `FragmentCache` whose entries `fragments` holds; another cache instance uses its own `WeakMap`. */
  fragmentOwner: object | undefined = undefined
  fragments: unknown = undefined
  /** The `PrefixSnapshots` whose states keyed by this item `snapshots` holds. */
  snapshotOwner: object | undefined = undefined
  snapshots: unknown = undefined
  /** `argumentsObject`'s verdict on a call item (owned items never change, so no text is kept with it). */
  argumentsChecked: unknown = undefined
  /** The item's number in multi-item fragments (0 until one is asked for). */
  identity = 0
}

/** A constructor that returns the object it is given, so a subclass's private field lands on that object. */
class Target {
  constructor(target: object) {
    // The return-override idiom: `new Stamp(item)` initialises Stamp's private field on `item` itself.
    return target
  }
}

class Stamp extends Target {
  readonly #memo = new ItemMemo()

  static memoOf(value: object): ItemMemo | undefined {
    return #memo in value ? value.#memo : undefined
  }
}

/** Gives `item` (an object the Worker just made and is about to freeze) its memo; owned from then on. */
export const stampItem = (item: object): void => {
  new Stamp(item)
}

/** The memo of an item stamped by `stampItem`; undefined for every other value (including a Proxy). */
export const memoOf = (value: object): ItemMemo | undefined => Stamp.memoOf(value)
