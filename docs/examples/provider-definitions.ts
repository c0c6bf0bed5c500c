import { z } from "zod"
import { defineTool, lintToolSet, restoreStrictArguments, toolNames, toolsFragment, type ToolSpec } from "llm-worker"

// A ToolSpec is the neutral definition; defineTool's codec holds the normalised schema.
const spec = (name: string, description: string, parameters: z.ZodType): ToolSpec => {
  const tool = defineTool({ name, description, parameters, execute: () => "" })
  return { name: tool.toolName, description, inputSchema: tool.codec.jsonSchema }
}

const search = spec("notes.search", "Search notes", z.object({ query: z.string(), limit: z.number().optional() }))
const tag = spec("notes.tag", "Tag notes by id", z.object({ tags: z.record(z.string(), z.string()) }))
// A plain array: serialised on every call, so editing it in place is always seen. The registry's frozen array
// (`toolDefinitionsSorted()`) is what gets cached.
const tools: ReadonlyArray<ToolSpec> = [search, tag]

// Names: dots are not allowed on OpenAI or Anthropic, so they are spelled with "_" there and mapped back.
const openAiNames = toolNames(tools, "openai-chat")
console.log("wire name:", openAiNames.toWire("notes.search"), "->", openAiNames.fromWire("notes_search"))
console.log("gemini name:", toolNames(tools, "gemini").toWire("notes.search"))

// One `tools` array value per provider, canonical JSON: the same bytes for the same tools, every time.
const chat = toolsFragment(tools, "openai-chat")
console.log("openai-chat:", chat)
console.log("anthropic:", toolsFragment(tools, "anthropic"))
console.log("gemini:", toolsFragment(tools, "gemini"))
console.log("cached:", toolsFragment(tools, "openai-chat") === chat)

// Strict mode: optional `limit` became required-but-nullable; the model's null is turned back into "absent".
console.log("restored:", JSON.stringify(restoreStrictArguments(search.inputSchema, { query: "milk", limit: null })))

// Lint: what each provider would refuse (error) or degrade (warning).
for (const finding of lintToolSet(tools)) {
  console.log(`lint ${finding.severity} ${finding.provider} ${finding.tool} ${finding.path}: ${finding.message}`)
}

// A set-level error: two names that collide once spelled for OpenAI.
const clash = spec("notes_tag", "Another tagger", z.object({ id: z.string() }))
const errors = lintToolSet([...tools, clash]).filter((finding) => finding.severity === "error")
for (const finding of errors) console.log(`lint error ${finding.provider}: ${finding.message}`)
