/**
 * Testing utilities that ship with the package: neutral scripts of model replies (`reply`, `replyError`), played
 * through the real client against a local replay provider in any of the four wire formats, or in process by a
 * scripted client.
 */
export { startReplayProvider, sseText } from "./replay-provider.ts"
export type { ReplayProvider, ReplayProviderOptions, ReplayStep, RecordedRequest } from "./replay-provider.ts"
export { reply, replyError, ReplyBuilder } from "./script.ts"
export type { ScriptStep, ScriptedResponse, ScriptedHttpError, ScriptPart, ScriptUsage, ScriptEnding } from "./script.ts"
export { encodeScriptStep, scriptTranscript, ScriptEncodingError } from "./wire/index.ts"
export type { EncodedStream, EncodedHttpError, SseFrame } from "./wire/index.ts"
export { scriptedClient } from "./scripted-client.ts"
export type { ScriptedClient, ScriptedClientOptions, ScriptedCall } from "./scripted-client.ts"
