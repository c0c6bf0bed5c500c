import type { RequestLogLevel } from "./config.ts"

/** Every request-log line starts with this (operational lines of the host start with `llm-worker host: ` too). */
export const REQUEST_LOG_PREFIX = "llm-worker host: "

/** Longest error text a line carries; the whole text is in the HTTP answer. */
const MAX_DETAIL_CHARS = 300
/** Longest path a line carries (a path is the caller's own text). */
const MAX_PATH_CHARS = 200

// Control characters would break the one-record-one-line promise (or drive a terminal): shown as escapes.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g

const printable = (text: string, max: number): string => {
  const flat = text.replace(/\s*[\r\n]+\s*/g, " ").replace(CONTROL, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`)
  return flat.length > max ? `${flat.slice(0, max)}…` : flat
}

const quoted = (name: string): string => `"${printable(name, 100)}"`

const milliseconds = (ms: number): string => `${Math.max(0, Math.round(ms))}ms`

/** One answered request, as the HTTP layer saw it. Nothing of either body is here, only its size. */
export interface RequestRecord {
  readonly method: string
  /** The URL's path, without its query. */
  readonly path: string
  /** The HTTP status sent (200 for a stream, whatever its last event says). */
  readonly status: number
  /** From the request's arrival to the answer's end (a stream's end for server-sent events). */
  readonly ms: number
  /** The role a chat ran in, when the request named or defaulted to one. */
  readonly role?: string | undefined
  /** The `error` text of a refusal or failure (a stream's `failure` event too). */
  readonly error?: string | undefined
  /** The status a streamed chat's `failure` event carried. */
  readonly streamFailure?: number | undefined
  /** Bytes of the request body the client declared (`content-length`). */
  readonly bytesIn?: number | undefined
  /** The client hung up before the answer: its status is what was prepared for no one, its error not a failure. */
  readonly clientGone?: boolean | undefined
  /** The answer was a server-sent event stream; how it ended. */
  readonly stream?: "ended" | "client gone" | "failed" | undefined
}

/** One tool call of a chat turn. Neither its arguments nor its output are here, except an error's text (verbose). */
export interface ToolCallRecord {
  readonly tool: string
  readonly role: string
  /** Who provides the tool: a plugin's source, an in-process plugin's id, or `builtin`. */
  readonly source?: string | undefined
  readonly callId: string
  /** `ok`, `error`, `timeout`, `cancelled`, `skipped` or `denied`. */
  readonly status: string
  /** From the model finishing the call to its result. */
  readonly ms: number
  /** The error text the model was given, for a failed call. */
  readonly error?: string | undefined
}

/**
 * The host's request log: one line per request and one per tool call, on the host's log (which redacts every
 * credential the host knows). `normal` leaves out health checks (each plugin asks every second) and keeps error
 * texts to server failures (5xx); `verbose` adds both, the role, the body size, the tool's source and call id;
 * `quiet` writes nothing. No body is ever written, at any level.
 */
export class RequestLog {
  constructor(
    readonly level: RequestLogLevel,
    private readonly log: (line: string) => void
  ) {}

  /** Whether anything is written for requests (the HTTP layer skips its bookkeeping otherwise). */
  get enabled(): boolean {
    return this.level !== "quiet"
  }

  request(record: RequestRecord): void {
    if (this.level === "quiet") return
    const verbose = this.level === "verbose"
    if (!verbose && record.method === "GET" && record.path === "/api/health") return
    const details: Array<string> = []
    if (verbose && record.role !== undefined) details.push(`role ${quoted(record.role)}`)
    if (verbose && record.bytesIn !== undefined && record.bytesIn > 0) details.push(`${record.bytesIn} bytes in`)
    if (record.stream !== undefined) details.push(record.stream === "ended" ? "stream" : `stream ${record.stream}`)
    else if (record.clientGone === true) details.push("client gone")
    const failed = record.streamFailure ?? record.status
    const gone = record.clientGone === true || record.stream === "client gone"
    const showError = !gone && record.error !== undefined && (verbose ? failed >= 400 : failed >= 500)
    const error = showError ? ` - ${record.streamFailure === undefined ? "" : `failure ${record.streamFailure}: `}${printable(record.error as string, MAX_DETAIL_CHARS)}` : ""
    const method = printable(record.method, 16)
    this.log(`${REQUEST_LOG_PREFIX}${method} ${printable(record.path, MAX_PATH_CHARS)} ${record.status} ${milliseconds(record.ms)}${details.length === 0 ? "" : ` (${details.join(", ")})`}${error}`)
  }

  toolCall(record: ToolCallRecord): void {
    if (this.level === "quiet") return
    const verbose = this.level === "verbose"
    const details = verbose ? [`source ${quoted(record.source ?? "?")}`, `call ${printable(record.callId, 64)}`] : []
    const error = verbose && record.error !== undefined && record.status !== "ok" ? ` - ${printable(record.error, MAX_DETAIL_CHARS)}` : ""
    this.log(
      `${REQUEST_LOG_PREFIX}tool ${printable(record.tool, 128)} role ${quoted(record.role)} ${record.status} ${milliseconds(record.ms)}${details.length === 0 ? "" : ` (${details.join(", ")})`}${error}`
    )
  }
}
