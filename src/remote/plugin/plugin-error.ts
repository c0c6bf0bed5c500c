import { Data } from "effect"

/** A plugin or tool declared with something the host would refuse (or that cannot work); thrown at declaration. */
export class PluginConfigError extends Data.TaggedError("PluginConfigError")<{
  /** The option at fault, e.g. `name`, `timeoutSeconds`, `host`. */
  readonly field: string
  readonly message: string
}> {}

/**
 * The host refused a registration for a reason retrying cannot fix (400, 401, 403, 404, 413, 422): the tool stays
 * unregistered until the plugin changes it. Reported through `onEvent` and `ready`.
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
