import { z } from "zod"
import { defineTool } from "../../tool/define-tool.ts"
import { InvalidArgument } from "../../tool/tool-error.ts"
import { evaluate } from "./arithmetic.ts"

export const calculatorTool = defineTool({
  name: "calculator",
  description: "Evaluates an arithmetic expression exactly as written: numbers, + - * / % ^ and parentheses.",
  parameters: z.object({
    expression: z.string().describe('For example "(17.5 * 4) - 2^3"')
  }),
  execute: ({ expression }) => {
    const result = evaluate(expression)
    if (!result.ok) throw new InvalidArgument({ message: `${result.error.message} at character ${result.error.position + 1} of ${JSON.stringify(expression)}` })
    return { expression, value: result.value }
  }
})
