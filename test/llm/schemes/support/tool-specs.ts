import type { ToolSpec } from "../../../../src/llm/request.ts"

/** The tool set every scheme's request tests share, so their golden bodies describe the same tools. */
export const weather: ToolSpec = {
  name: "get_weather",
  description: "Current weather for a city.",
  inputSchema: {
    type: "object",
    properties: { city: { type: "string", description: "City name" }, unit: { type: "string", enum: ["c", "f"] } },
    required: ["city", "unit"],
    additionalProperties: false
  }
}

/** A dotted neutral name: OpenAI and Anthropic refuse dots (it travels as files_read), Gemini takes it as it is. */
export const readFile: ToolSpec = {
  name: "files.read",
  description: "Read a text file.",
  inputSchema: { type: "object", properties: { path: { type: "string" } }, required: ["path"], additionalProperties: false }
}

export const tools: ReadonlyArray<ToolSpec> = [readFile, weather]
