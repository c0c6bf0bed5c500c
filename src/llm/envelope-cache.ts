import { isDeeplyImmutable } from "./fragment-cache.ts"
import { anchorShapes } from "./shape-anchor.ts"
import type { Request, RequestConfig, ToolSpec } from "./request.ts"

/**
 * The text of a request body before its history (model, settings, system prompt, tools), kept so that a
 * conversation's requests print it once rather than once per request (decision 0085).
 *
 * Schemes put the history last in the body. Everything before it depends only on the request's model, system
 * prompt, tools, config and whether a prompt-cache prefix is set — not on the items — so it is kept per config
 * object and reused while the other four are the same values (strings compared, the tools array by identity).
 * Kept only when the config and the tools cannot change: deeply frozen, plain data (`isDeeplyImmutable`), with a
 * config that inherits nothing but `Object.prototype`'s; a Worker's config is a frozen copy, a hook's rewritten
 * config or a caller's plain object is printed afresh on every request, so editing one in place is always seen.
 *
 * Bounded: entries live in a `WeakMap` keyed by the config, at most `MAX_ENVELOPES` per config (the newest first).
 */
export const MAX_ENVELOPES = 4

class Envelope {
  constructor(
    readonly model: string,
    readonly systemPrompt: string | undefined,
    readonly tools: ReadonlyArray<ToolSpec>,
    readonly promptCache: boolean,
    readonly head: string
  ) {}
}

const reusable = (config: RequestConfig, tools: ReadonlyArray<ToolSpec>): boolean => {
  const prototype: unknown = Object.getPrototypeOf(config)
  return (prototype === Object.prototype || prototype === null) && isDeeplyImmutable(config) && isDeeplyImmutable(tools)
}

/** One scheme instance's envelopes (a scheme's options can change them, so each instance has its own). */
export class EnvelopeCache {
  readonly #byConfig = new WeakMap<RequestConfig, Array<Envelope>>()

  /**
   * The whole body: the envelope `build(request)` prints (a JSON object without the history), reused from an
   * earlier request with the same model, system prompt, tools and config, with the history's JSON text as its
   * last field.
   */
  body(request: Request, build: (request: Request) => string, field: "messages" | "input" | "contents", history: string): string {
    return `${this.#open(request, build)}"${field}":${history}}`
  }

  /** The envelope's text, open for the history's field: `{"model":…,` (or `{` when it has no field). */
  #open(request: Request, build: (request: Request) => string): string {
    const { config, model, tools } = request
    const systemPrompt = request.systemPrompt
    const promptCache = request.promptCache !== undefined
    const kept = this.#byConfig.get(config)
    if (kept !== undefined) {
      for (const envelope of kept) {
        if (envelope.model === model && envelope.systemPrompt === systemPrompt && envelope.tools === tools && envelope.promptCache === promptCache) {
          return envelope.head
        }
      }
    }
    const printed = build(request)
    const head = printed === "{}" ? "{" : `${printed.slice(0, -1)},`
    if (typeof model !== "string" || (systemPrompt !== undefined && typeof systemPrompt !== "string") || !reusable(config, tools)) return head
    const envelope = new Envelope(model, systemPrompt, tools, promptCache, head)
    if (kept === undefined) this.#byConfig.set(config, [envelope])
    else {
      kept.unshift(envelope)
      if (kept.length > MAX_ENVELOPES) kept.length = MAX_ENVELOPES
    }
    return head
  }
}

// Made when a config is first seen and often the only one of its class alive: kept so V8 keeps its shape.
anchorShapes(new Envelope("", undefined, [], false, ""))
