import type { ToolDefinition } from "../../tool/tool.ts"
import { calculatorTool } from "./calculator.ts"
import { clockTool } from "./clock.ts"
import { readFileTool } from "./read-file.ts"

/** The tools `chat` and `demo` give the model; `read_file` sees only `root`. */
export const demoTools = (root: string): ReadonlyArray<ToolDefinition> => [calculatorTool, clockTool, readFileTool(root)]
