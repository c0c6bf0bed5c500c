import { z } from "zod"
import { defineTool } from "../../tool/define-tool.ts"
import { InvalidArgument } from "../../tool/tool-error.ts"
import { DEFAULT_QUOTE_CHARS, quote } from "../../schema/quote.ts"
import { evaluate } from "./arithmetic.ts"

/**
 * The refusal as the model reads it: where, and the expression quoted short (a 1 MiB expression must not come
 * back as 1 MiB of error text). A problem past the quoted prefix also gets the text around it.
 */
const refusal = (message: string, position: number, expression: string): string => {
  const near = position >= DEFAULT_QUOTE_CHARS ? `, near ${quote(expression.slice(Math.max(0, position - 20), position + 20), 40)}` : ""
  return `${message} at character ${position + 1} of ${quote(expression)}${near}`
}

export const calculatorTool = defineTool({
  name: "calculator",
  description: "Evaluates an arithmetic expression exactly as written: numbers, + - * / % ^ and parentheses.",
  parameters: z.object({
    expression: z.string().describe('For example "(17.5 * 4) - 2^3"')
  }),
  execute: ({ expression }) => {
    const result = evaluate(expression)
    if (!result.ok) throw new InvalidArgument({ message: refusal(result.error.message, result.error.position, expression) })
    return { expression, value: result.value }
  }
})
