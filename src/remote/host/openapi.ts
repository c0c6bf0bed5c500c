import { z } from "zod"
import { ACCESS_KEY_HEADER, DELIVERY_HEADER, INSTANCE_HEADER, OPERATOR_TOKEN_HEADER, REGISTRANT_TOKEN_HEADER, SIGNATURE_HEADER, SIGNATURE_V2_HEADER, TIMESTAMP_HEADER } from "../wire.ts"
import {
  ChatBody,
  ChatResponse,
  ClaimBody,
  ClaimResponse,
  ClearBody,
  ClearResponse,
  CommandBody,
  CommandListResponse,
  CommandResponse,
  CompleteBody,
  CompleteResponse,
  CompleteStructuredBody,
  CompleteStructuredResponse,
  ErrorResponse,
  LaneErrorResponse,
  HealthResponse,
  ListResponse,
  RegisterBody,
  RegisterResponse,
  UnregisterBody,
  UnregisterResponse
} from "./api-schemas.ts"

const schemaOf = (schema: z.ZodType, io: "input" | "output"): Record<string, unknown> => {
  const { $schema: _dropped, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: "any" }) as Record<string, unknown>
  return rest
}

const json = (schema: z.ZodType, io: "input" | "output") => ({ content: { "application/json": { schema: schemaOf(schema, io) } } })

const errors = (...statuses: ReadonlyArray<number>) =>
  Object.fromEntries(statuses.map((status) => [String(status), { description: DESCRIPTIONS[status] ?? "error", ...json(ErrorResponse, "output") }]))

const DESCRIPTIONS: Readonly<Record<number, string>> = {
  403: "caller is not on loopback, wrong access key, or the builtin source",
  404: "unknown role or tool",
  409: "ownership refusal: present the owner's registrant token (`code: source_claimed` when the source is claimed by another token)",
  413: "body larger than the host's limit",
  422: "validation failure; `issues` names each field",
  429: "too many waiting chat turns or sources",
  502: "the model call failed",
  503: "the role has no model client"
}

/** The lane's refusals carry `error_type` and, for a trust refusal, the override and the config key that would allow it. */
const laneErrors = (...statuses: ReadonlyArray<number>) =>
  Object.fromEntries(statuses.map((status) => [String(status), { description: LANE_DESCRIPTIONS[status] ?? DESCRIPTIONS[status] ?? "error", ...json(LaneErrorResponse, "output") }]))

const LANE_DESCRIPTIONS: Readonly<Record<number, string>> = {
  401: "no registrant token, or one this host did not issue",
  403: "loopback / access-key gate, or the trust gate refused an override (PluginLlmTrustError, before any provider call)",
  422: "a field of the wrong type or unknown (issues), or unusable input or schema (PluginLlmInputError, PluginLlmSchemaError)",
  429: "rate limited on every route, or the plugin's call budget is spent",
  499: "the caller hung up; the provider call was cancelled",
  502: "no route answered (hops lists each fallback hop)",
  504: "the call's deadline passed (timeout_source says which applied)"
}

const requiredTokenHeader = { name: REGISTRANT_TOKEN_HEADER, in: "header", required: true, schema: { type: "string" }, description: "The registrant token issued to the plugin's source; the source is the plugin id the trust gate sees" }

const tokenHeader = { name: REGISTRANT_TOKEN_HEADER, in: "header", required: false, schema: { type: "string" }, description: "Act as the source this token claims or was issued to" }
const registerTokenHeader = {
  name: REGISTRANT_TOKEN_HEADER,
  in: "header",
  required: false,
  schema: { type: "string", pattern: "^[A-Za-z0-9_-]{32,256}$" },
  description: "Act as the source this token claims or was issued to. A token the host does not hold claims the named source when it is unclaimed (409 `source_claimed` when another token claims it; 422 when it is not 32-256 base64url characters)"
}
const operatorTokenHeader = { name: OPERATOR_TOKEN_HEADER, in: "header", required: true, schema: { type: "string" }, description: "The operator token of `server.operator_token_env`" }
const roleQuery = { name: "role", in: "query", required: false, schema: { type: "string" } }

/** The whole API as OpenAPI 3.1, built from the zod schemas that validate the requests. */
export const openApiDocument = (version: string): Record<string, unknown> => ({
  openapi: "3.1.0",
  info: {
    title: "llm-worker tool host",
    version,
    description: `Remote tools over HTTP. Every response carries the ${INSTANCE_HEADER} header. Only loopback callers are served. Callbacks to a tool's callback_url carry ${TIMESTAMP_HEADER}, a random ${DELIVERY_HEADER} per delivery and ${SIGNATURE_V2_HEADER} (v2=, HMAC-SHA256 with the callback_secret over "v2.<timestamp>.<delivery>.<body>"), plus ${SIGNATURE_HEADER} (v1=, over "<timestamp>.<body>") for older receivers.`
  },
  components: {
    securitySchemes: { accessKey: { type: "apiKey", in: "header", name: ACCESS_KEY_HEADER, description: "Required only when the host is configured with an access key" } }
  },
  paths: {
    "/api/tools/register": {
      post: {
        summary: "Register or replace a remote tool",
        parameters: [registerTokenHeader],
        requestBody: { required: true, ...json(RegisterBody, "input") },
        responses: { "200": { description: "per-role outcome", ...json(RegisterResponse, "output") }, ...errors(403, 404, 409, 413, 422, 429) }
      }
    },
    "/api/tools/unregister": {
      post: {
        summary: "Remove a tool",
        parameters: [tokenHeader],
        requestBody: { required: true, ...json(UnregisterBody, "input") },
        responses: { "200": { description: "per-role outcome", ...json(UnregisterResponse, "output") }, ...errors(403, 404, 409, 413, 422) }
      }
    },
    "/api/tools/clear": {
      post: {
        summary: "Remove every tool of a source",
        parameters: [tokenHeader],
        requestBody: { required: true, ...json(ClearBody, "input") },
        responses: { "200": { description: "per-role outcome", ...json(ClearResponse, "output") }, ...errors(403, 404, 409, 413, 422) }
      }
    },
    "/api/sources/claim": {
      post: {
        summary: "Claim a source without registering a tool",
        description: "For a plugin that only calls `/api/llm/*`: its registrant token then names it. Released by `POST /api/tools/clear` of the source (a plugin's shutdown) or a host restart.",
        parameters: [{ ...registerTokenHeader, required: true }],
        requestBody: { required: true, ...json(ClaimBody, "input") },
        responses: { "200": { description: "the source is claimed by the token", ...json(ClaimResponse, "output") }, ...errors(401, 403, 409, 413, 422, 429) }
      }
    },
    "/api/tools": {
      get: { summary: "List each role's tools", parameters: [roleQuery], responses: { "200": { description: "tools per role", ...json(ListResponse, "output") }, ...errors(403, 404) } }
    },
    "/api/health": {
      get: { summary: "Liveness, instance id, and the roles that cannot chat", responses: { "200": { description: "the host is up", ...json(HealthResponse, "output") }, ...errors(403) } }
    },
    "/api/chat": {
      post: {
        summary: "Run one turn of a role's Worker",
        description: "With `Accept: text/event-stream` the Worker's events are streamed as SSE, ending with a `result` (or `failure`) event.",
        requestBody: { required: true, ...json(ChatBody, "input") },
        responses: {
          "200": { description: "the turn's answer", ...json(ChatResponse, "output"), content: { ...json(ChatResponse, "output").content, "text/event-stream": { schema: { type: "string" } } } },
          ...errors(403, 404, 413, 422, 429, 502, 503)
        }
      },
      delete: { summary: "Forget a role's conversation", parameters: [roleQuery], responses: { "200": { description: "cleared" }, ...errors(403, 404) } }
    },
    "/api/llm/complete": {
      post: {
        summary: "ctx.llm.complete for a remote plugin",
        description: "The host's model for a one-off job, behind the plugin's trust gate, budget and audit. No credential leaves the host.",
        parameters: [requiredTokenHeader],
        requestBody: { required: true, ...json(CompleteBody, "input") },
        responses: { "200": { description: "the answer, usage and audit record", ...json(CompleteResponse, "output") }, ...laneErrors(401, 403, 413, 422, 429, 499, 502, 504) }
      }
    },
    "/api/llm/complete-structured": {
      post: {
        summary: "ctx.llm.completeStructured for a remote plugin",
        description: "JSON asked for with the provider's native structured output, parsed locally and always validated; a failed validation is a 200 with content_type text, the raw text and the issues.",
        parameters: [requiredTokenHeader],
        requestBody: { required: true, ...json(CompleteStructuredBody, "input") },
        responses: { "200": { description: "the answer, parsed value, usage and audit record", ...json(CompleteStructuredResponse, "output") }, ...laneErrors(401, 403, 413, 422, 429, 499, 502, 504) }
      }
    },
    "/api/commands": {
      get: { summary: "The in-process plugins' commands", responses: { "200": { description: "commands by name", ...json(CommandListResponse, "output") }, ...errors(403) } }
    },
    "/api/commands/{name}": {
      post: {
        summary: "Run a plugin command (what /<name> <args> does in the chat)",
        description: "Only the operator may: the host's operator token is required (commands are refused when the host has none).",
        parameters: [{ name: "name", in: "path", required: true, schema: { type: "string", pattern: "^[a-z0-9][a-z0-9_-]{0,63}$" } }, operatorTokenHeader],
        requestBody: { required: true, ...json(CommandBody, "input") },
        responses: {
          "200": { description: "the command's output", ...json(CommandResponse, "output") },
          "499": { description: "the client hung up: the command's signal fired and its answer, if any, is dropped", ...json(ErrorResponse, "output") },
          "500": { description: "the command failed (one line, never a stack)", ...json(ErrorResponse, "output") },
          "401": { description: "no operator token, or a wrong one", ...json(ErrorResponse, "output") },
          ...errors(403, 404, 413, 422)
        }
      }
    },
    "/": { get: { summary: "Status page (HTML)", responses: { "200": { description: "HTML", content: { "text/html": { schema: { type: "string" } } } } } } },
    "/openapi.json": { get: { summary: "This document", responses: { "200": { description: "OpenAPI 3.1" } } } }
  },
  security: [{}, { accessKey: [] }]
})
