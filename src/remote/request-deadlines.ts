import type { Server, ServerOptions } from "node:http"

/** How long a client may take to send a request, and how many sockets it may hold, on one of our HTTP servers. */
export interface RequestDeadlines {
  /** From a request's first byte (or the connection's start) to the end of its headers. */
  readonly headersMs: number
  /** From a request's first byte to the end of its body. */
  readonly requestMs: number
  /** Open connections at once; past it Node closes a new connection as soon as it is accepted. */
  readonly maxConnections: number
}

/** The sweep never runs less often than this, so a deadline holds to within half a second however long it is. */
const SWEEP_AT_MOST_MS = 500
/** Nor more often than this, however short the deadline: the sweep walks every unfinished request. */
const SWEEP_AT_LEAST_MS = 50

/**
 * How often Node sweeps unfinished requests for a passed deadline: a quarter of the shortest deadline, between
 * 50 and 500 ms. A deadline is enforced only by that sweep, never by a timer of its own, so a request is closed
 * at most one sweep after its deadline (Node's default sweep, every 30 s, let 10 s headers last 30 s and a 30 s
 * request 60 s).
 */
export const sweepIntervalMs = (deadlines: Pick<RequestDeadlines, "headersMs" | "requestMs">): number =>
  Math.max(SWEEP_AT_LEAST_MS, Math.min(SWEEP_AT_MOST_MS, Math.floor(Math.min(deadlines.headersMs, deadlines.requestMs) / 4)))

/** The `http.createServer` options that make the deadlines hold (Node validates them: integers, headers ≤ request). */
export const deadlineServerOptions = (deadlines: RequestDeadlines): Pick<ServerOptions, "headersTimeout" | "requestTimeout" | "connectionsCheckingInterval"> => ({
  headersTimeout: deadlines.headersMs,
  requestTimeout: deadlines.requestMs,
  connectionsCheckingInterval: sweepIntervalMs(deadlines)
})

/**
 * Makes a server created with `deadlineServerOptions` bound its connections too. A request past either deadline
 * is answered 408 by Node and its socket destroyed; a body still being read then fails with `aborted`, which the
 * servers treat as the client going away (see `client-gone.ts`), never as an error.
 */
export const boundConnections = (server: Server, deadlines: RequestDeadlines): void => {
  server.maxConnections = deadlines.maxConnections
}
