import type { Item, ReasoningData } from "#internal/llm/item"
import type { SchemeName } from "#internal/llm/scheme"
import type { ToolSpec } from "#internal/llm/request"

/**
 * A realistic request for the request-building and cache benchmarks: many tools with ordinary argument schemas,
 * and a history of tool-using rounds (user message, reasoning, tool call, tool output, assistant answer).
 */

const UNITS = ["celsius", "fahrenheit", "kelvin"] as const

/** `count` tools named `tool_000` … in name order, each with a small object schema of the usual kinds of field. */
export const benchTools = (count: number): ReadonlyArray<ToolSpec> =>
  Array.from({ length: count }, (_, i) => ({
    name: `tool_${String(i).padStart(3, "0")}`,
    description: `Tool number ${i}: looks up a record by id and returns its fields as JSON, optionally filtered and limited.`,
    inputSchema: {
      type: "object",
      properties: {
        id: { type: "string", description: "The record id." },
        limit: { type: "integer", minimum: 1, maximum: 100, description: "How many results at most." },
        unit: { type: "string", enum: [...UNITS] },
        filter: {
          type: "object",
          properties: { field: { type: "string" }, equals: { type: "string" } },
          required: ["field", "equals"],
          additionalProperties: false
        },
        tags: { type: "array", items: { type: "string" } }
      },
      required: ["id"],
      additionalProperties: false
    }
  }))

/** The reasoning data each provider needs back (Chat drops reasoning items; it gets OpenAI's). */
const reasoningData = (scheme: SchemeName, round: number): ReasoningData => {
  switch (scheme) {
    case "anthropic":
      return { provider: "anthropic", signature: `EqQBCgIYAhIM${"x".repeat(40)}${round}` }
    case "gemini":
      return { provider: "gemini", thoughtSignature: `CiQB0e2K${"y".repeat(40)}${round}` }
    default:
      return { provider: "openai", id: `rs_bench_${round}`, encryptedContent: `gAAAAAB${"z".repeat(60)}${round}` }
  }
}

/** One tool-using round: five items. */
export const round = (scheme: SchemeName, n: number, tools: ReadonlyArray<ToolSpec>): ReadonlyArray<Item> => {
  const tool = tools[(n * 7) % tools.length] as ToolSpec
  const callId = `call_bench_${n}`
  return [
    { type: "message", role: "user", content: [{ type: "input_text", text: `Question ${n}: what does record r-${n} say about the weather in city ${n}?` }] },
    { type: "reasoning", text: `The user asks about record r-${n}. I should call ${tool.name} with its id.`, data: reasoningData(scheme, n) },
    { type: "function_call", callId, name: tool.name, arguments: `{"id":"r-${n}","limit":5,"unit":"celsius"}` },
    {
      type: "function_call_output",
      callId,
      output: JSON.stringify({ id: `r-${n}`, city: `City ${n}`, forecast: "sunny", highC: 20 + (n % 10), notes: "clear skies all day" }),
      isError: n % 9 === 4
    },
    { type: "message", role: "assistant", content: [{ type: "output_text", text: `Record r-${n}: sunny in City ${n}, high of ${20 + (n % 10)} °C.` }] }
  ]
}

/** `rounds` rounds of history (five items each). */
export const benchHistory = (scheme: SchemeName, rounds: number, tools: ReadonlyArray<ToolSpec>): ReadonlyArray<Item> =>
  Array.from({ length: rounds }, (_, n) => round(scheme, n, tools)).flat()
