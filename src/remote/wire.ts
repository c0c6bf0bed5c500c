/**
 * The names both sides of the remote-tools HTTP contract agree on: the tool host (`llm-worker serve`) and the
 * plugin-side client. Kept apart from either side so neither imports the other.
 */

/** Every host response carries its instance id here (and as `instance_id` in JSON bodies); new on every start. */
export const INSTANCE_HEADER = "x-llm-worker-instance"
/**
 * A registrant presents its source's token here: one it chose itself (claiming the source at its first
 * registration) or the one the host issued to a token-less first registration.
 */
export const REGISTRANT_TOKEN_HEADER = "x-llm-worker-registrant-token"
/**
 * What a registrant token may look like: 32-256 characters of base64url. A token the host does not know is refused
 * on a registration unless it has this shape, so a claim is never made with a guessable short word.
 */
export const REGISTRANT_TOKEN_PATTERN = /^[A-Za-z0-9_-]{32,256}$/
/** The operator token that `POST /api/commands/<name>` requires (`server.operator_token_env`). */
export const OPERATOR_TOKEN_HEADER = "x-llm-worker-operator-token"
/** Operators behind a proxy may require an access key on every request. */
export const ACCESS_KEY_HEADER = "x-llm-worker-access-key"
/** Unix seconds at which the host signed a callback. */
export const TIMESTAMP_HEADER = "x-llm-worker-timestamp"
/** `v1=<hex HMAC-SHA256(secret, "<timestamp>.<body>")>` over the exact callback body bytes (kept for older receivers). */
export const SIGNATURE_HEADER = "x-llm-worker-signature"
/** A random id per callback delivery (16-128 base64url characters), covered by the `v2` signature. */
export const DELIVERY_HEADER = "x-llm-worker-delivery"
/** `v2=<hex HMAC-SHA256(secret, "v2.<timestamp>.<delivery id>.<body>")>`: unique per delivery. */
export const SIGNATURE_V2_HEADER = "x-llm-worker-signature-v2"

/** The host's port when `MAIN_SERVER_PORT` is not set (the seed's default). */
export const DEFAULT_HOST_PORT = 48911
/** The source a registration gets when it names none. */
export const DEFAULT_SOURCE = "external"
/** Tools of this source belong to the host itself and cannot be cleared or replaced over HTTP. */
export const BUILTIN_SOURCE = "builtin"
