/** Testing utilities that ship with the package: run a real client against recorded provider streams offline. */
export { startReplayProvider, sseText } from "./replay-provider.ts"
export type { ReplayProvider, ReplayProviderOptions, ReplayStep, RecordedRequest } from "./replay-provider.ts"
