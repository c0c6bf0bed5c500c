import { Effect } from "effect"
import type { HookFn, HookInput, HookPoint, HookResult } from "./hooks.ts"
import { raceAbort } from "./cancellation.ts"
import { describeSafely } from "./describe-safely.ts"
import { ownResult } from "./hook-results.ts"
import { Cancelled, HookFailed, cancelledBy } from "./worker-error.ts"

/** The result tags each point accepts at run time (plain JS can return anything). */
const ACCEPTED: { readonly [P in HookPoint]: ReadonlySet<string> } = {
  OnPromptSubmit: new Set(["Continue", "RewritePrompt", "Cancel"]),
  PreLlmRequest: new Set(["Continue", "RewriteRequest", "Cancel"]),
  // A stream hook's Pause is accepted and treated as an abort: pausing mid-response cannot be resumed.
  OnStreamChunk: new Set(["Continue", "Abort", "Pause"]),
  OnTextDelta: new Set(["Continue", "Abort", "Pause"]),
  OnToolCallDelta: new Set(["Continue", "Abort", "Pause"]),
  OnStreamComplete: new Set(["Continue", "Abort", "Pause"]),
  PreToolCall: new Set(["Continue", "RewriteArguments", "Skip", "Deny", "Pause", "Abort"]),
  PostToolCall: new Set(["Continue", "RewriteResult", "Abort"]),
  OnTurnEnd: new Set(["Finish", "ContinueWith", "Pause"]),
  OnAbort: new Set()
}

const PASS_THROUGH: ReadonlySet<string> = new Set(["Continue", "Finish"])

type Registered = { readonly [P in HookPoint]: Array<HookFn<P>> }

/** What a chain step tells the runner after a hook's result: keep asking the next hook, or stop here. */
export type ChainStep = "next" | "stop"

/**
 * The hooks registered on a worker, per point, in registration order. Shared by a worker's Mutable and
 * CacheLocked incarnations, so hooks survive `lock()` / `unlock()`.
 */
export class HookRegistry {
  readonly #hooks: Registered = {
    OnPromptSubmit: [],
    PreLlmRequest: [],
    OnStreamChunk: [],
    OnTextDelta: [],
    OnToolCallDelta: [],
    OnStreamComplete: [],
    PreToolCall: [],
    PostToolCall: [],
    OnTurnEnd: [],
    OnAbort: []
  }

  add<P extends HookPoint>(point: P, hook: HookFn<P>): () => void {
    if (!(point in this.#hooks)) throw new TypeError(`unknown hook point ${JSON.stringify(point)}`)
    if (typeof hook !== "function") throw new TypeError(`a ${point} hook must be a function`)
    const list = this.#hooks[point] as Array<HookFn<P>>
    list.push(hook)
    return () => {
      const at = list.indexOf(hook)
      if (at >= 0) list.splice(at, 1)
    }
  }

  has(point: HookPoint): boolean {
    return this.#hooks[point].length > 0
  }

  /**
   * Runs the chain in order. `input` is read afresh for every hook, so each one sees the previous rewrites. Pass-through results (continue, finish, nothing) go on to the next hook; any other
   * result is handed to `step`, which applies it (a rewrite) and says whether the chain goes on. Returns the
   * result that stopped the chain, or undefined. Throws `HookFailed`, or `Cancelled` when `signal` fires while a
   * hook is still running (the hook is not awaited further).
   */
  run<P extends Exclude<HookPoint, "OnAbort">>(
    point: P,
    input: () => HookInput<P>,
    signal: AbortSignal,
    step: (result: HookResult<P>) => ChainStep = () => "stop"
  ): Promise<HookResult<P> | undefined> {
    const hooks = this.#hooks[point] as Array<HookFn<P>>
    // No hook at this point (the usual case, several times per model step): no chain, no copy, no async frame.
    if (hooks.length === 0) return NO_RESULT
    return this.#chain(point, [...hooks], input, signal, step)
  }

  async #chain<P extends Exclude<HookPoint, "OnAbort">>(
    point: P,
    hooks: ReadonlyArray<HookFn<P>>,
    input: () => HookInput<P>,
    signal: AbortSignal,
    step: (result: HookResult<P>) => ChainStep
  ): Promise<HookResult<P> | undefined> {
    for (const hook of hooks) {
      const produced = await invokeHook(point, hook, input(), signal)
      if (produced === undefined) continue
      // What plain JavaScript returned is read once, here, into a frozen copy of the fields its tag defines:
      // a getter that throws, a Proxy or a wrongly typed field is this hook's failure, not a worker defect later.
      const result = ownResult(point, produced, ACCEPTED[point])
      if (PASS_THROUGH.has(result._tag)) continue
      if (step(result as HookResult<P>) === "stop") return result as HookResult<P>
    }
    return undefined
  }

  /**
   * OnAbort observers: every one is called; their own failures are swallowed so the original error survives.
   * Each gets at most `ON_ABORT_BUDGET_MS`: an observer that never settles must not keep the run (and with it
   * the worker) from ending.
   */
  async notifyAbort(input: HookInput<"OnAbort">): Promise<void> {
    for (const hook of [...this.#hooks.OnAbort]) {
      try {
        await invokeHook("OnAbort", hook, input, AbortSignal.timeout(ON_ABORT_BUDGET_MS))
      } catch {
        // The run already failed with a more relevant error; an observer must not replace it.
      }
    }
  }
}

/** What `run` answers when no hook is registered: one settled promise, shared. */
const NO_RESULT: Promise<undefined> = Promise.resolve(undefined)

/** How long one OnAbort observer may take before the run ends without waiting for it. */
const ON_ABORT_BUDGET_MS = 5_000

/** @internal One hook called with `input`: its result, or `HookFailed` / `Cancelled` (typed tool hooks use it too). */
export const invokeHook = async <P extends HookPoint>(
  point: P,
  hook: HookFn<P>,
  input: HookInput<P>,
  signal: AbortSignal
): Promise<HookResult<P> | void> => {
  const cancelled = (): Cancelled => cancelledBy(signal)
  if (signal.aborted) throw cancelled()
  let pending: Promise<HookResult<P> | void>
  try {
    const produced = hook(input)
    pending = Effect.isEffect(produced)
      ? Effect.runPromise(produced as Effect.Effect<HookResult<P> | void, unknown>, { signal })
      : Promise.resolve(produced)
  } catch (thrown) {
    throw hookFailed(point, thrown)
  }
  try {
    return await raceAbort(pending, signal, cancelled)
  } catch (thrown) {
    throw isInstance(thrown, Cancelled) ? thrown : hookFailed(point, thrown)
  }
}

/** `instanceof` that cannot throw (it would on a revoked Proxy, through its prototype trap). */
const isInstance = <C extends abstract new (...args: never) => unknown>(value: unknown, c: C): value is InstanceType<C> => {
  try {
    return value instanceof c
  } catch {
    return false
  }
}

const hookFailed = (point: HookPoint, thrown: unknown): HookFailed =>
  isInstance(thrown, HookFailed)
    ? thrown
    : new HookFailed({ point, message: `${point} hook failed: ${describeSafely(thrown)}`, cause: thrown })
