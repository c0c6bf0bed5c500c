/**
 * `llm-worker/remote`: tools in other processes over HTTP. The host side (`startToolHost`, `llm-worker serve`)
 * and the contract's shared names and callback signing.
 */
export { startToolHost } from "./host/tool-host.ts"
export type { ToolHost, ToolHostOptions } from "./host/tool-host.ts"
export { decodeHostConfig, parseHostConfig, loadHostConfig, HostConfigError, DEFAULT_ROLE_NAME, MAX_CONFIG_BYTES } from "./host/config.ts"
export type { HostConfig, HostConfigInput, RequestLogLevel, RoleConfig, ServerConfig } from "./host/config.ts"
export { checkCallbackUrl, MAX_CALLBACK_URL_CHARS } from "./host/callback-url.ts"
export type { CallbackUrlCheck } from "./host/callback-url.ts"
export { isLoopbackAddress } from "./host/loopback.ts"
export { signCallback, verifyCallback, signDelivery, verifyDelivery, deliveryHeaders, signedCallbackHeaders, newDeliveryId, DEFAULT_SIGNATURE_TOLERANCE_SECONDS } from "./signing.ts"
export type { SignatureCheck, VerifyOptions, DeliveryHeaders } from "./signing.ts"
export * from "./wire.ts"
