import { Data, type Effect } from "effect"

/**
 * What every public error of llm-worker is: a real `Error` (with `stack`, and `cause` when there is one) whose
 * `name` is its class name and whose `_tag` is the same string, for `switch` and Effect's `catchTag`.
 *
 * Declared here rather than as Effect's `YieldableError` so that hovering an error shows its own fields, not
 * Effect's internals; at run time it still is one, so `yield* error` fails an `Effect.gen` block (decision 0035).
 */
export interface TaggedError<Tag extends string> extends Error {
  readonly _tag: Tag
  readonly name: Tag
  readonly message: string
  /** What led to this error (a thrown value, a fetch failure, an abort reason), when there was something. */
  readonly cause?: unknown
  /** `yield* error` inside `Effect.gen` fails the block with this error. */
  [Symbol.iterator](): Effect.EffectIterator<Effect.Effect<never, this, never>>
}

/** The class `TaggedError(tag)` returns: construct with the error's fields (at least its `message`; any `cause`). */
export interface TaggedErrorClass<Tag extends string> {
  new <Fields extends { readonly message: string }>(fields: Fields & { readonly cause?: unknown }): TaggedError<Tag> & Readonly<Fields>
  readonly prototype: TaggedError<Tag>
}

/** Node's `util.inspect` hook, by its registered name: the main entry must not import `node:util`. */
const INSPECT = Symbol.for("nodejs.util.inspect.custom")

/**
 * The base of a tagged error class. Effect's own base prints itself as a bare `{ message, _tag }` object through
 * `util.inspect` (so `console.log(error)` showed no stack); that hook is removed here, so Node prints an error
 * like any other: `Name: message`, the stack, then the fields and `[cause]`.
 */
export const TaggedError = <Tag extends string>(tag: Tag): TaggedErrorClass<Tag> => {
  class Base extends Data.TaggedError(tag)<{ readonly message: string }> {
    /** One line whatever the message holds: `Name: message` with line breaks shown as spaces. */
    override toString(): string {
      return `${this.name}: ${String(this.message).replace(/\s*[\r\n]+\s*/g, " ")}`
    }
  }
  Object.defineProperty(Base.prototype, INSPECT, { value: undefined, writable: true, configurable: true })
  Object.defineProperty(Base, "name", { value: tag })
  return Base as unknown as TaggedErrorClass<Tag>
}
