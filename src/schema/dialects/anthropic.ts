import type { ToolSpec } from "../../llm/request.ts"
import { plainSchemaText } from "./schema-text.ts"

/** One entry of a Messages API `tools` array: `{"name","description","input_schema"}`. */
export const anthropicTool = (spec: ToolSpec, wireName: string): string =>
  `{"description":${JSON.stringify(spec.description)},"input_schema":${plainSchemaText(spec.inputSchema)},` +
  `"name":${JSON.stringify(wireName)}}`
