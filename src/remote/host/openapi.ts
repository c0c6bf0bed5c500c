import { z } from "zod"
import { ACCESS_KEY_HEADER, INSTANCE_HEADER, REGISTRANT_TOKEN_HEADER } from "../wire.ts"
import {
  ChatBody,
  ChatResponse,
  ClearBody,
  ClearResponse,
  ErrorResponse,
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
  409: "ownership refusal: present the owner's registrant token",
  413: "body larger than the host's limit",
  422: "validation failure; `issues` names each field",
  429: "too many waiting chat turns or sources",
  502: "the model call failed",
  503: "the role has no model client"
}

const tokenHeader = { name: REGISTRANT_TOKEN_HEADER, in: "header", required: false, schema: { type: "string" }, description: "Act as the source this token was issued to" }
const roleQuery = { name: "role", in: "query", required: false, schema: { type: "string" } }

/** The whole API as OpenAPI 3.1, built from the zod schemas that validate the requests. */
export const openApiDocument = (version: string): Record<string, unknown> => ({
  openapi: "3.1.0",
  info: {
    title: "llm-worker tool host",
    version,
    description: `Remote tools over HTTP. Every response carries the ${INSTANCE_HEADER} header. Only loopback callers are served.`
  },
  components: {
    securitySchemes: { accessKey: { type: "apiKey", in: "header", name: ACCESS_KEY_HEADER, description: "Required only when the host is configured with an access key" } }
  },
  paths: {
    "/api/tools/register": {
      post: {
        summary: "Register or replace a remote tool",
        parameters: [tokenHeader],
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
    "/api/tools": {
      get: { summary: "List each role's tools", parameters: [roleQuery], responses: { "200": { description: "tools per role", ...json(ListResponse, "output") }, ...errors(403, 404) } }
    },
    "/api/health": {
      get: { summary: "Liveness and instance id", responses: { "200": { description: "the host is up", ...json(HealthResponse, "output") }, ...errors(403) } }
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
    "/": { get: { summary: "Status page (HTML)", responses: { "200": { description: "HTML", content: { "text/html": { schema: { type: "string" } } } } } } },
    "/openapi.json": { get: { summary: "This document", responses: { "200": { description: "OpenAPI 3.1" } } } }
  },
  security: [{}, { accessKey: [] }]
})
