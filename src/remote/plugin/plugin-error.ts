import { Data } from "effect"

/** A plugin or tool declared with something the host would refuse (or that cannot work); thrown at declaration. */
export class PluginConfigError extends Data.TaggedError("PluginConfigError")<{
  /** The option at fault, e.g. `name`, `timeoutSeconds`, `host`. */
  readonly field: string
  readonly message: string
}> {}

/**
 * A tool did not get registered: the host refused it for a reason retrying cannot fix (400, 401, 403, 404, 413,
 * 422), or `retry.maxAttempts` ran out (`status` is then the last answer's, 0 for none; the health watcher
 * tries again once the host answers). Rejects `ready`; every attempt is also an `onEvent` report.
 */
export class RegistrationRefused extends Data.TaggedError("RegistrationRefused")<{
  readonly tool: string
  readonly status: number
  readonly message: string
}> {}

/** `ready` was waiting when the plugin stopped. */
export class PluginStopped extends Data.TaggedError("PluginStopped")<{
  readonly message: string
}> {}
