import { cancelReaderOnAbort } from "./abort-bound.ts"

/**
 * Reads at most `maxBytes` of a body as text and cancels the rest: error bodies are shown to people and put in
 * errors, and a misbehaving server must not be able to make us buffer megabytes of HTML. When `signal` aborts,
 * the read rejects with its reason, also if the body itself never learns of the abort (see `abort-bound.ts`).
 */
export const readCapped = async (body: ReadableStream<Uint8Array> | null, maxBytes: number, signal?: AbortSignal): Promise<string> => {
  if (body === null) return ""
  const reader = body.getReader()
  const unwatch = signal === undefined ? undefined : cancelReaderOnAbort(reader, signal)
  const decoder = new TextDecoder()
  let text = ""
  let bytes = 0
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (signal?.aborted) throw signal.reason
      if (done) return text + decoder.decode()
      const take = value.subarray(0, maxBytes - bytes)
      bytes += take.length
      text += decoder.decode(take, { stream: true })
      if (take.length < value.length) return `${text + decoder.decode()}… [truncated at ${maxBytes} bytes]`
    }
  } finally {
    unwatch?.()
    await reader.cancel().catch(() => undefined)
  }
}
