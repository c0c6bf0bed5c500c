/**
 * Codes Node gives a request whose client went away: a reset or half-sent request (`ECONNRESET`, message
 * `aborted`), a stream closed early, or a write to a socket already gone.
 */
const GONE_CODES: ReadonlySet<string> = new Set(["ECONNRESET", "ECONNABORTED", "EPIPE", "ERR_STREAM_PREMATURE_CLOSE"])

/**
 * Whether a failure is only the client having gone away (it hung up, reset the connection, or was cut off at a
 * request deadline). That is the client's business, not an error of the server: it is not logged, so no local
 * process can fill the operator's log by hanging up, and nothing is left to answer.
 */
export const isClientGone = (thrown: unknown): boolean => {
  if (typeof thrown !== "object" || thrown === null) return false
  const { code, message } = thrown as { code?: unknown; message?: unknown }
  return (typeof code === "string" && GONE_CODES.has(code)) || message === "aborted"
}
