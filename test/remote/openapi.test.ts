import { afterEach, describe, expect, it } from "vitest"
import { z } from "zod"
import { ChatBody, ClaimBody, ClearBody, CommandBody, CompleteBody, CompleteStructuredBody, RegisterBody, UnregisterBody } from "../../src/remote/host/api-schemas.ts"
import { api, closeAll, startHost } from "./support/host.ts"

afterEach(closeAll)

const inputSchema = (schema: z.ZodType) => {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }) as Record<string, unknown>
  return rest
}

describe("GET /openapi.json", () => {
  it("describes every endpoint with the request schemas that validate the requests", async () => {
    const host = await startHost()
    const doc = (await api(host, "GET", "/openapi.json")).body as unknown as {
      openapi: string
      paths: Record<string, Record<string, { requestBody?: { content: { "application/json": { schema: unknown } } } }>>
    }
    expect(doc.openapi).toBe("3.1.0")
    expect(Object.keys(doc.paths).sort()).toEqual([
      "/", "/api/chat", "/api/commands", "/api/commands/{name}", "/api/health", "/api/llm/complete", "/api/llm/complete-structured",
      "/api/sources/claim", "/api/tools", "/api/tools/clear", "/api/tools/register", "/api/tools/unregister", "/openapi.json"
    ])
    const body = (path: string, method = "post") => doc.paths[path]?.[method]?.requestBody?.content["application/json"].schema
    expect(body("/api/tools/register")).toEqual(inputSchema(RegisterBody))
    expect(body("/api/tools/unregister")).toEqual(inputSchema(UnregisterBody))
    expect(body("/api/tools/clear")).toEqual(inputSchema(ClearBody))
    expect(body("/api/chat")).toEqual(inputSchema(ChatBody))
    expect(body("/api/llm/complete")).toEqual(inputSchema(CompleteBody))
    expect(body("/api/llm/complete-structured")).toEqual(inputSchema(CompleteStructuredBody))
    expect(body("/api/commands/{name}")).toEqual(inputSchema(CommandBody))
    expect(body("/api/sources/claim")).toEqual(inputSchema(ClaimBody))
    expect(body("/api/llm/complete-structured")).toMatchObject({ additionalProperties: false, required: ["instructions", "input"] })
    // Closed objects in the document too, as the host enforces them.
    expect(body("/api/tools/register")).toMatchObject({ additionalProperties: false, required: ["name", "callback_url"] })
  })
})
