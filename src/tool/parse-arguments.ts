import type { ParsedArguments } from "./tool.ts"
import { describeThrown } from "./describe-thrown.ts"
import { InvalidArgument } from "./tool-error.ts"

const kindOf = (value: unknown): string => (value === null ? "null" : Array.isArray(value) ? "array" : typeof value)

/**
 * Parses a model's argument text. Text that is not a JSON object is an `InvalidArgument` whose message the model
 * can act on. Shared by every tool that takes the text itself (typed tools, the tool host's remote tools).
 */
export const parseArguments = (argumentsJson: string): ParsedArguments => {
  let parsed: unknown
  try {
    parsed = JSON.parse(argumentsJson)
  } catch (thrown) {
    throw new InvalidArgument({ message: `arguments are not valid JSON: ${describeThrown(thrown)}` })
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw new InvalidArgument({ message: `arguments must be a JSON object, got ${kindOf(parsed)}` })
  }
  return parsed as ParsedArguments
}
