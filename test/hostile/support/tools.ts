import { type JsonSchema, type Tool, type ToolContext, type ToolDefinition, ToolMeta } from "../../../src/index.ts"

/**
 * Hand-written tools (a `ToolMeta` plus a bare `Tool`), the way an integration that bypasses `defineTool` writes
 * them: nothing but the Worker and the tool server stands between such a tool and the model.
 */
export const handTool =
  (name: string, schema: JsonSchema, execute: (argumentsJson: string, context: ToolContext) => Promise<string>): ToolDefinition =>
  () => {
    const tool: Tool = { execute }
    return [ToolMeta.make(name).description(`the ${name} tool`).inputSchema(schema), tool] as const
  }

/** A schema accepting any object: the Worker's own checks are all that run. */
export const ANY_OBJECT: JsonSchema = { type: "object" }
