import type { ToolSpec } from "../../llm/request.ts"
import type { JsonObject } from "../json-schema.ts"
import { plainSchema } from "./schema-objects.ts"

/** One entry of a Messages API `tools` array: `{"name","description","input_schema"}`, keys in canonical order. */
export const anthropicTool = (spec: ToolSpec, wireName: string): JsonObject => ({
  description: spec.description,
  input_schema: plainSchema(spec.inputSchema),
  name: wireName
})
