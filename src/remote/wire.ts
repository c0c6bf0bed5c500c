/**
 * The names both sides of the remote-tools HTTP contract agree on: the tool host (`llm-worker serve`) and the
 * plugin-side client. Kept apart from either side so neither imports the other.
 */

/** Every host response carries its instance id here (and as `instance_id` in JSON bodies); new on every start. */
export const INSTANCE_HEADER = "x-llm-worker-instance"
/** A registrant presents the token its source was issued at first registration. */
export const REGISTRANT_TOKEN_HEADER = "x-llm-worker-registrant-token"
/** Operators behind a proxy may require an access key on every request. */
export const ACCESS_KEY_HEADER = "x-llm-worker-access-key"
/** Unix seconds at which the host signed a callback. */
export const TIMESTAMP_HEADER = "x-llm-worker-timestamp"
/** `v1=<hex HMAC-SHA256(secret, "<timestamp>.<body>")>` over the exact callback body bytes. */
export const SIGNATURE_HEADER = "x-llm-worker-signature"

/** The host's port when `MAIN_SERVER_PORT` is not set (the seed's default). */
export const DEFAULT_HOST_PORT = 48911
/** The source a registration gets when it names none. */
export const DEFAULT_SOURCE = "external"
/** Tools of this source belong to the host itself and cannot be cleared or replaced over HTTP. */
export const BUILTIN_SOURCE = "builtin"
