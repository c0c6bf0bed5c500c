import type { ToolSpec } from "../../llm/request.ts"
import { plainSchemaText, strictSchemaText } from "./schema-text.ts"

/** `name`, `description`, `parameters` and `strict` of one function tool, keys in canonical order, no braces. */
const functionMembers = (spec: ToolSpec, wireName: string): string => {
  const strict = strictSchemaText(spec.inputSchema)
  return (
    `"description":${JSON.stringify(spec.description)},"name":${JSON.stringify(wireName)},` +
    `"parameters":${strict ?? plainSchemaText(spec.inputSchema)},"strict":${strict === undefined ? "false" : "true"}`
  )
}

/** One entry of a Chat Completions `tools` array: `{"type":"function","function":{…}}`. */
export const openAiChatTool = (spec: ToolSpec, wireName: string): string =>
  `{"function":{${functionMembers(spec, wireName)}},"type":"function"}`

/** One entry of a Responses API `tools` array: the function members flattened beside `"type":"function"`. */
export const openAiResponsesTool = (spec: ToolSpec, wireName: string): string =>
  `{${functionMembers(spec, wireName)},"type":"function"}`
