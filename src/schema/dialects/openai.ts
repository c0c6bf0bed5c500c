import type { ToolSpec } from "../../llm/request.ts"
import type { JsonObject } from "../json-schema.ts"
import { plainSchema, strictSchema } from "./schema-objects.ts"

/**
 * `name`, `description`, `parameters` and `strict` of one function tool. Entry objects are built with their keys
 * in canonical order, so one `JSON.stringify` of the whole array is the canonical text.
 */
const functionMembers = (spec: ToolSpec, wireName: string): JsonObject => {
  const strict = strictSchema(spec.inputSchema)
  return { description: spec.description, name: wireName, parameters: strict ?? plainSchema(spec.inputSchema), strict: strict !== undefined }
}

/** One entry of a Chat Completions `tools` array: `{"type":"function","function":{…}}`. */
export const openAiChatTool = (spec: ToolSpec, wireName: string): JsonObject => ({
  function: functionMembers(spec, wireName),
  type: "function"
})

/** One entry of a Responses API `tools` array: the function members flattened beside `"type":"function"`. */
export const openAiResponsesTool = (spec: ToolSpec, wireName: string): JsonObject => ({
  ...functionMembers(spec, wireName),
  type: "function"
})
