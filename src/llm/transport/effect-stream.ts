import { Effect, Stream } from "effect"
import type { Event } from "../event.ts"
import type { LlmClient } from "../client.ts"
import { LlmNetworkError, isLlmError } from "../llm-error.ts"
import type { LlmError } from "../llm-error.ts"
import type { Request } from "../request.ts"

/**
 * The client's stream as an effect `Stream`. Interrupting the consuming fiber aborts the HTTP request: the
 * AbortController lives in the stream's scope and fires when the scope closes early.
 */
export const eventStream = (client: LlmClient, request: Request): Stream.Stream<Event, LlmError> =>
  Stream.unwrap(
    Effect.map(
      Effect.acquireRelease(
        Effect.sync(() => new AbortController()),
        (controller) => Effect.sync(() => controller.abort())
      ),
      (controller) =>
        Stream.fromAsyncIterable(client.stream(request, { signal: controller.signal }), (cause): LlmError =>
          isLlmError(cause) ? cause : new LlmNetworkError({ message: cause instanceof Error ? cause.message : String(cause) })
        )
    )
  )
